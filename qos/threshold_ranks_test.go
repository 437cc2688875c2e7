package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// rankedTwoPerPass makes streams of n ≥ 2048 heartbeats take the ranked
// sweep, two thresholds a pass, until t ends.
func rankedTwoPerPass(t *testing.T, n int) {
	budget, least := leanBudget, rankedMin
	t.Cleanup(func() { leanBudget, rankedMin = budget, least })
	rankedMin = 2048
	leanBudget = 8 * n * 2
}

// A long stream whose thresholds take several passes of td is swept in two
// passes with rank windows (sweepRanked), and every field of every point
// still equals a replay per point: with synchronized and unsynchronized
// clocks, warm-up, recorded mistakes and per-cell confidence intervals, and
// on a coarse clock (arrivals on whole milliseconds), whose few distinct
// TDs fall on the windows' sides. sweepRanked itself finishes every
// threshold there (none is left to the usual passes).
func TestThresholdSweepsRankedEqualReplays(t *testing.T) {
	const n = 4000
	rankedTwoPerPass(t, n)
	coarse := generate(genOpts{n: n, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.02, dup: 0.02, pause: 0.01, seed: 9})
	for i := range coarse {
		coarse[i].Arrival = coarse[i].Arrival.Truncate(time.Millisecond)
		coarse[i].HasSent = false
	}
	traces := map[string][]detector.Heartbeat{
		"jitter-loss": generate(genOpts{n: n, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.05, pause: 0.01, seed: 4}),
		"coarse":      coarse,
	}
	cfgs := []Config{
		{},
		{WarmUp: 37, RecordMistakes: true, Intervals: true},
		{Clock: ClockUnsynchronized, DelayOffset: ms(12)},
	}
	sat, kap := satzgerSweepThresholds, kappaSweepThresholds
	for name, hbs := range traces {
		for i, cfg := range cfgs {
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
				streams := []Stream{{Name: "s", Heartbeats: hbs}}
				requireSameAsPerPoint(t, SatzgerFamily(satzgerTestConfig(), sat), streams, cfg, SharedState, "θ = %g")
				requireSameAsPerPoint(t, KappaFamily(kappaTestConfig(), kap), streams, cfg, SharedState, "K = %g")
				f := KappaFamily(kappaTestConfig(), kap)
				reps := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
				res := make([]Result, len(kap))
				missed, err := sweepRanked(func(v float64) (thresholdDetector, error) {
					d, err := f.New(v)
					if err != nil {
						return nil, err
					}
					return d.(thresholdDetector), nil
				}, func(src thresholdDetector, chunk []int) func([]time.Duration) {
					return fillAll(chunkFPs(src, nil, kap, chunk))
				}, kap, reps, res, sliceSource(hbs), cfg, newSpanMemo(sliceSource(hbs)))
				require.NoError(t, err)
				require.Empty(t, missed)
			})
		}
	}
}
