package sim

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fdkit/fdkit/swim"
)

var schedules = flag.Int("sim.schedules", 0, "schedules for TestAdversarialSchedules (default 200 with -short, 1000 without; a quarter under -race)")

// knownOpen reports a violation of an open finding, counted and logged but
// not failed: in the Lifeguard modes a flood of fake members drives the
// local health multiplier up (missed nacks of failed probes), the protocol
// period grows up to 8 s, and fakes and crashed members are declared dead
// later than RecoveryBound. Drawing ping-req intermediates first among
// members that answered cut it from 18 to 6 of 1,000 schedules. See
// docs/experiments.md, "SWIM adversarial schedule checker".
//
// The exception is narrow: the same schedule without its floods must pass,
// so a late death that another fault causes (alone or with a flood) still
// fails the test.
func knownOpen(sc Schedule, v *Violation) bool {
	if v.Invariant != "dead" || sc.Mode == swim.ModeSWIM {
		return false
	}
	rest := sc
	rest.Steps = slices.DeleteFunc(slices.Clone(sc.Steps), func(st Step) bool { return st.Fault == FaultFlood })
	return len(rest.Steps) < len(sc.Steps) && rest.Check() == nil
}

// TestAdversarialSchedules runs random fault schedules (see Schedule),
// counts the violations per invariant, and fails with the minimal
// reproduction of the first violation of each invariant (at most 5),
// printed as a Go test. go test ./swim/sim -run Adversarial -v
// -sim.schedules 5000 runs more and logs the counts.
func TestAdversarialSchedules(t *testing.T) {
	n := *schedules
	if n == 0 {
		n = 1000
		if testing.Short() {
			n = 200
		}
		if raceOn {
			n /= 4
		}
	}
	count := map[string]int{}
	shrunk, waived := 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		sc := RandomSchedule(seed)
		v := sc.Check()
		if v == nil {
			continue
		}
		if knownOpen(sc, v) {
			count[v.Invariant+" (known open: Lifeguard health under a flood)"]++
			waived++
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
	if limit := waiverCeiling(n); waived > limit {
		t.Errorf("%d violations waived as known open, more than the ceiling %d for %d schedules: the exception now hides more than it did", waived, limit, n)
	}
}

// waiverCeiling is how many violations a run of n schedules may waive as
// known open (knownOpen): 2 % of the schedules, at least 2. Measured: 0 of
// 200 and 6 of 1,000 (go test -run Adversarial ./swim/sim
// -sim.schedules 1000 -v). The seeds are fixed, so the count is the same
// on every run; a change that makes the Lifeguard-under-flood finding more
// common, or that the exception starts to cover another failure, fails.
func waiverCeiling(n int) int { return max(2, (2*n+99)/100) }

// Found by the checker (schedule 605, shrunk): a partition, then floods of
// fake members on both sides. Each side holds the other dead; were the
// fakes to evict those dead members to make room, the two sides would
// forget each other for good (ModeSWIM). A member that answered a ping is
// evicted only for a newcomer speaking for itself (swim's makeRoom).
func TestSchedule605PartitionThenFlood(t *testing.T) {
	sc := Schedule{Seed: 605, N: 6, Mode: swim.ModeSWIM, Steps: []Step{
		{At: 10334944672, Fault: FaultPartition, A: 4, B: 1, D: 12000000000},
		{At: 16997656869, Fault: FaultFlood, A: 5, B: 3, K: 43},
		{At: 23776669766, Fault: FaultFlood, A: 0, B: 4, K: 53},
	}}
	if v := sc.Check(); v != nil {
		t.Fatal(v)
	}
}

// Forged Alive updates try to raise the incarnation another member stores
// for a member without that member taking part: Alive(m0000, 2^20), then
// Alive(m0000, 2^21), then Suspect(m0000, 2^21), all sent to member 1 by a
// compromised key holder. Were member 1 to store 2^21 and accept the
// accusation, m0000, still at 0, would refuse it as implausible (more than
// swim.MaxIncarnationJump above its own), never refute it, and be dead for
// good in every view. Self-updates signed by the member itself
// (swim.Config.SigningKey) prevent it: the forged Alives are refused,
// unsigned or signed with the forger's own key, and the accusation is
// capped at the incarnation m0000 asserted. Unsigned groups stay open to
// it, as documented. The three come at one instant: a packet of member
// 1's to m0000 between them (a probe carrying Alive(m0000, 2^20), within
// m0000's window) would have m0000 follow the chain up by refuting.
func TestScheduleForgedAliveChain(t *testing.T) {
	chain := []Step{
		{At: 5 * time.Second, Fault: FaultForge, A: 0, B: 1, Kind: swim.UpdateAlive, Inc: 1 << 20},
		{At: 5 * time.Second, Fault: FaultForge, A: 0, B: 1, Kind: swim.UpdateAlive, Inc: 1 << 21},
		{At: 5 * time.Second, Fault: FaultForge, A: 0, B: 1, Kind: swim.UpdateSuspect, Inc: 1 << 21},
	}
	for _, mode := range []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard, swim.ModeDetector} {
		for name, steps := range map[string][]Step{
			"explicit":       chain,
			"chain":          {{At: 5 * time.Second, Fault: FaultForgeChain, A: 0, B: 1}},
			"chain, own key": {{At: 5 * time.Second, Fault: FaultForgeChain, A: 2, B: 1, K: 1}},
		} {
			sc := Schedule{Seed: 7, N: 4, Mode: mode, Steps: steps}
			if v := sc.Check(); v != nil {
				t.Errorf("%v, %s: %v", mode, name, v)
			}
		}
		sc := Schedule{Seed: 7, N: 4, Mode: mode, Steps: chain, Unsigned: true}
		v := sc.Check()
		if v == nil || v.Invariant != "alive" {
			t.Errorf("%v, unsigned: got %v, want the documented alive violation", mode, v)
		}
	}
}

// Positive controls of the checker: a configuration broken on purpose, or a
// schedule known to be bad, makes Check report the invariant it breaks, so
// that a run of schedules without violations means something. (The
// monotone and converge invariants have no such control: no configuration
// breaks them without breaking alive or dead first.)
func TestCheckerFindsViolations(t *testing.T) {
	forged := []Step{ // as in TestScheduleForgedAliveChain
		{At: 5 * time.Second, Fault: FaultForge, A: 0, B: 1, Kind: swim.UpdateAlive, Inc: 1 << 20},
		{At: 5 * time.Second, Fault: FaultForge, A: 0, B: 1, Kind: swim.UpdateAlive, Inc: 1 << 21},
		{At: 5 * time.Second, Fault: FaultForge, A: 0, B: 1, Kind: swim.UpdateSuspect, Inc: 1 << 21},
	}
	for _, c := range []struct {
		name, want string
		sc         Schedule
		mut        func(*Config)
	}{
		{"unsigned group, forged-Alive chain", "alive",
			Schedule{Seed: 7, N: 4, Mode: swim.ModeLifeguard, Unsigned: true, Steps: forged}, nil},
		{"suspicions that outlast the bound", "dead",
			Schedule{Seed: 3, N: 5, Mode: swim.ModeLifeguard, Steps: []Step{{At: 5 * time.Second, Fault: FaultCrash, A: 4}}},
			func(c *Config) { c.Member.SuspicionMult = 100 }},
		{"no cap on the view", "memory",
			Schedule{Seed: 3, N: 5, Mode: swim.ModeSWIM, Steps: []Step{{At: 5 * time.Second, Fault: FaultFlood, B: 1, K: 40}}},
			func(c *Config) { c.Member.MaxMembers = 0 }},
		{"no reconnect after a partition", "alive",
			Schedule{Seed: 3, N: 6, Mode: swim.ModeSWIM, Steps: []Step{{At: 5 * time.Second, Fault: FaultPartition, A: 3, D: 30 * time.Second}}},
			func(c *Config) {
				c.Member.ReconnectInterval, c.Member.PushPullInterval = new(time.Duration(0)), new(time.Duration(0))
			}},
	} {
		// The same schedule passes with the checked configuration.
		if c.sc.Unsigned {
			signed := c.sc
			signed.Unsigned = false
			assert.Nil(t, signed.Check(), c.name+", signed")
		} else {
			assert.Nil(t, c.sc.Check(), c.name+", checked configuration")
		}
		v := c.sc.check(c.mut)
		if assert.NotNil(t, v, c.name) {
			assert.Equal(t, c.want, v.Invariant, "%s: %v", c.name, v)
		}
	}
}
