package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// intervalMedians runs the interval experiment (N = 128, C = 16, pauses
// of d every 2d for dur) once per seed in each mode of modes and returns
// each mode's median false positives (the lower middle of an even count).
// Every run must have no FP−: a healthy member never declares a healthy
// one, whatever the paused ones do.
func intervalMedians(t *testing.T, d, dur time.Duration, seeds []uint64, fanout *int) map[swim.Mode]int {
	t.Helper()
	med := make(map[swim.Mode]int)
	for _, mode := range modes {
		var fp []int
		for _, seed := range seeds {
			r, err := Interval(IntervalConfig{N: 128, C: 16, D: d, I: 2 * d, Duration: dur, Seed: seed,
				Member: swim.Config{Mode: mode, GossipFanout: fanout, Lifeguard: swim.Lifeguard{SuspicionMult: 5}}})
			require.NoError(t, err)
			assert.Zero(t, r.FPMinus, "D %v, %v, seed %d: a healthy member declared a healthy one", d, mode, seed)
			fp = append(fp, r.FP)
		}
		slices.Sort(fp)
		med[mode] = fp[(len(fp)-1)/2]
		eagerOn := fanout == nil || *fanout > 0
		t.Logf("D %v, eager dissemination %v, %v: FP %v, median %d", d, eagerOn, mode, fp, med[mode])
	}
	return med
}

// TestLifeguardInterval: the Lifeguard paper's interval experiment
// (Dadgar et al. 2018, §V; IntervalConfig) at N = 128 with 16 members
// paused D every 2D, α = 5: Min = 5·log10(128)·1 s = 10.5 s.
//
// Below Min (D = 9 s) a paused member is never silent for a whole
// suspicion timeout, so every false positive comes from a member that was
// slow itself (a paused member's timers firing when it resumes, its
// probes failing because it was not running): what LHA-Probe and
// LHA-Suspicion are for. Lifeguard cuts them at least fivefold below
// SWIM's, and the detector mode's gate cuts them further.
//
// Past Min (D = 12 s) a paused member is silent longer than the timeout
// that K confirmations bring Lifeguard's down to, and cannot be told
// from a crashed one: declaring it is the detector doing its job, and
// the paper claims nothing there. What Lifeguard adds to SWIM still
// shows in the declarations made on the suspicion mechanism alone
// (eager dissemination off): fewer than SWIM's in both Lifeguard modes.
// Eager dissemination (on by default in the Lifeguard modes,
// Config.GossipFanout) then carries a declaration made just before the
// member resumes to more members before its refutation, so with it the
// Lifeguard modes count more than without, and may count more than
// SWIM: docs/experiments.md, “Lifeguard interval experiment: past the
// suspicion timeout”.
//
// Medians over seeds 1–5 (the short version: seed 1, below Min, 200 s).
func TestLifeguardInterval(t *testing.T) {
	seeds, dur := []uint64{1}, 200*time.Second
	if !testing.Short() {
		seeds, dur = []uint64{1, 2, 3, 4, 5}, 300*time.Second
	}
	below := intervalMedians(t, 9*time.Second, dur, seeds, nil)
	assert.Positive(t, below[swim.ModeSWIM])
	assert.Less(t, 5*below[swim.ModeLifeguard], below[swim.ModeSWIM], "Lifeguard cuts FP at least fivefold below Min")
	assert.Less(t, below[swim.ModeDetector], below[swim.ModeLifeguard], "the detector mode cuts FP further below Min")
	if testing.Short() {
		return
	}
	quiet := intervalMedians(t, 12*time.Second, dur, seeds, new(0))
	eager := intervalMedians(t, 12*time.Second, dur, seeds, nil)
	for _, mode := range []swim.Mode{swim.ModeLifeguard, swim.ModeDetector} {
		assert.Less(t, quiet[mode], quiet[swim.ModeSWIM], "past Min, without eager dissemination, %v declares less than SWIM", mode)
		assert.Less(t, quiet[mode], eager[mode], "past Min, eager dissemination spreads declarations in %v", mode)
	}
}
