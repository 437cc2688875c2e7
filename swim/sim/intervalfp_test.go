package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestIntervalFalsePositivesOverSeeds runs Lifeguard's interval
// experiment (Interval: 8 members, 2 of them paused 6 s every 12 s, for
// 60 s) over seeds 6100 to 6119 in ModeSWIM and ModeLifeguard, and logs
// the false positives summed per mode: the figures of docs/experiments.md,
// “SWIM: answers that carry the queue, one a period”. A member resuming
// from a pause answers the pings it missed all at once, and in ModeSWIM
// its refutation travels only with what those answers carry. Healthy
// members never suspect each other (FPMinus 0).
func TestIntervalFalsePositivesOverSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("40 interval experiments of 60 s")
	}
	for _, mode := range []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard} {
		fp := 0
		for seed := uint64(6100); seed < 6120; seed++ {
			iv, err := Interval(IntervalConfig{N: 8, C: 2, D: 6 * time.Second, I: 12 * time.Second, Duration: 60 * time.Second,
				Seed: seed, Member: swim.Config{Mode: mode}})
			require.NoError(t, err)
			require.Zero(t, iv.FPMinus, "%v seed %d: healthy members suspected each other", mode, seed)
			fp += iv.FP
		}
		t.Logf("%v: %d false positives over 20 seeds", mode, fp)
	}
}
