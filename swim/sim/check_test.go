package sim

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"testing"
)

var schedules = flag.Int("sim.schedules", 0, "schedules for TestAdversarialSchedules (default 200 with -short, 1000 without)")

// TestAdversarialSchedules runs random fault schedules (see Schedule),
// counts the violations per invariant, and fails with the minimal
// reproduction of the first violation of each invariant (at most 5),
// printed as a Go test. go test ./swim/sim -run Adversarial
// -sim.schedules 5000 runs more.
func TestAdversarialSchedules(t *testing.T) {
	n := *schedules
	if n == 0 {
		n = 1000
		if testing.Short() {
			n = 200
		}
	}
	count := map[string]int{}
	shrunk := 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		sc := RandomSchedule(seed)
		v := sc.Check()
		if v == nil {
			continue
		}
		count[v.Invariant]++
		if count[v.Invariant] > 1 || shrunk >= 5 {
			continue
		}
		shrunk++
		min, mv := sc.Shrink(v, 200)
		t.Errorf("schedule %d: %v\nminimal reproduction (%d of %d steps):\n%s", seed, v, len(min.Steps), len(sc.Steps),
			min.GoTest(fmt.Sprintf("Schedule%d", seed), mv))
	}
	total := 0
	for _, k := range slices.Sorted(maps.Keys(count)) {
		total += count[k]
		t.Logf("%s: %d", k, count[k])
	}
	t.Logf("%d schedules, %d violations", n, total)
}
