package qos

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/satzger"
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
				missed := sweepRankedOf(t, KappaFamily(kappaTestConfig(), kap), []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, hbs, cfg)
				require.Empty(t, missed)
			})
		}
	}
}

// Heartbeats hours apart make n·max TD_k exceed 2^52: the ranked sweep's
// int64 sums might then differ from the float64 sums of a replay, so it
// leaves every threshold to the usual passes, and the sweep still equals a
// replay per point (with the per-cell sums of the confidence intervals).
func TestThresholdSweepRankedHugeTDs(t *testing.T) {
	const n = 4000
	rankedTwoPerPass(t, n)
	rng := rand.New(rand.NewPCG(3, 4))
	hbs := make([]detector.Heartbeat, n)
	for k := range hbs {
		sent := time.Duration(k)*5*time.Hour + time.Duration(rng.Int64N(int64(time.Minute)))
		hbs[k] = detector.Heartbeat{Seq: uint64(k), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + ms(5)}
	}
	scfg := satzger.Config{WindowSize: 50, Scale: 0.9, BootstrapInterval: new(5 * time.Hour), MinSamples: new(10)}
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	cfg := Config{Intervals: true}
	requireSameAsPerPoint(t, SatzgerFamily(scfg, satzgerSweepThresholds), streams, cfg, SharedState, "θ = %g")

	reps := []int{0, 1, 2}
	require.Equal(t, reps, sweepRankedOf(t, SatzgerFamily(scfg, satzgerSweepThresholds), reps, hbs, cfg))
}

// sweepRankedOf runs sweepRanked on the values reps of family f (one of
// the shared-state families) and returns those it left to the usual
// passes.
func sweepRankedOf(t *testing.T, f Family, reps []int, hbs []detector.Heartbeat, cfg Config) []int {
	t.Helper()
	missed, err := sweepRanked(func(v float64) (thresholdDetector, error) {
		d, err := f.New(v)
		if err != nil {
			return nil, err
		}
		return d.(thresholdDetector), nil
	}, func(src thresholdDetector, chunk []int) func([]time.Duration) {
		return fillAll(chunkFPs(src, nil, f.Values, chunk))
	}, f.Values, reps, make([]Result, len(f.Values)), sliceSource(hbs), cfg, newSpanMemo(sliceSource(hbs)), false)
	require.NoError(t, err)
	return missed
}
