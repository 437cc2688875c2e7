package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/trace/tracetest"
	"github.com/fdkit/fdkit/twowfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// satzgerSweepThresholds: spread over (0, 1], with repeats and thresholds
// of equal rank (0.95 and 0.951 for every N' ≤ 50 but not for all: 0.9501
// and 0.9502 share ranks up to N' = 50).
var satzgerSweepThresholds = []float64{0.05, 0.3, 0.5, 0.7, 0.9, 0.95, 0.9501, 0.9502, 0.99, 0.999, 1, 0.5}

// kappaSweepThresholds: half-integers (steep κ), integers (plateaus),
// small and repeated values.
var kappaSweepThresholds = []float64{0.1, 0.5, 1, 1.5, 2, 2.5, 3.5, 6, 12, 1.5}

// sweepThresholds returns the thresholds for a long stream: with -short,
// the smallest, an integer and a half-integer κ, and Satzger's thresholds
// of (nearly) equal rank, so that CI under -race stays quick.
func sweepThresholds(long bool) (sat, kap []float64) {
	if long && testing.Short() {
		return []float64{0.05, 0.5, 0.95, 0.9501, 1}, []float64{0.1, 1, 2.5, 6}
	}
	return satzgerSweepThresholds, kappaSweepThresholds
}

func satzgerTestConfig() satzger.Config {
	return satzger.Config{WindowSize: 50, Scale: 0.9, BootstrapInterval: new(ms(100)), MinSamples: new(10)}
}

func kappaTestConfig() kappa.Config {
	return kappa.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 50}, MinSamples: new(10)}
}

func twowfdTestConfig() twowfd.Config {
	return twowfd.Config{Interval: ms(100), ShortWindowSize: 1, LongWindowSize: 50}
}

// checkShared requires the shared-state sweeps of Satzger and κ-FD to equal
// one replay per threshold in every field, and the one-pass 2W-FD sweep to
// equal the replays (within the 2 ns of the linear sweep's rounding). It
// returns the mistakes of the lowest thresholds, which must make some on
// the whole, or the comparison is weak.
func checkShared(t *testing.T, hbs []detector.Heartbeat, cfg Config) int {
	t.Helper()
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	satV, kapV := sweepThresholds(len(hbs) > 2000)
	sat := requireSameAsPerPoint(t, SatzgerFamily(satzgerTestConfig(), satV), streams, cfg, SharedState, "θ = %g")
	kap := requireSameAsPerPoint(t, KappaFamily(kappaTestConfig(), kapV), streams, cfg, SharedState, "K = %g")
	return min(sat.Points[0].Mistakes, kap.Points[0].Mistakes)
}

func checkTwoWFD(t *testing.T, hbs []detector.Heartbeat) {
	t.Helper()
	checkFastSweep(t, TwoWFDFamily(twowfdTestConfig(), durs(mustRange(t, 0.1, 400, 20, true))), hbs)
	checkFastSweep(t, TwoWFDFamily(twowfd.Config{ShortWindowSize: 5, LongWindowSize: 40}, durs([]float64{0, 1, 10, 50, 200})), hbs)
}

func TestThresholdSweepsEqualReplaysOnPresets(t *testing.T) {
	for _, tc := range []struct {
		preset string
		d      time.Duration
		seed   uint64
	}{{"jitter", 3 * time.Minute, 11}, {"gc-pause", 2 * time.Minute, 12}, {"wan", 22 * time.Minute, 13}} {
		hbs := presetHeartbeats(t, tc.preset, tc.d, tc.seed)
		t.Run(tc.preset, func(t *testing.T) {
			assert.Positive(t, checkShared(t, hbs, Config{}))
			checkTwoWFD(t, hbs)
		})
	}
}

func TestThresholdSweepsEqualReplaysConfigs(t *testing.T) {
	for name, hbs := range agreementTraces() {
		for i, cfg := range sweepReplayConfigs {
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
				assert.Positive(t, checkShared(t, hbs, cfg))
			})
		}
		t.Run(name+"/intervals", func(t *testing.T) {
			assert.Positive(t, checkShared(t, hbs, Config{Intervals: true, RecordMistakes: true}))
		})
		t.Run(name+"/2w-fd", func(t *testing.T) { checkTwoWFD(t, hbs) })
	}
}

// Every sender of the LIP6 excerpt (unsynchronized clocks: arrival-based
// TD with d̄).
func TestThresholdSweepsEqualReplaysLIP6(t *testing.T) {
	path := tracetest.Shared(t, tracetest.LIP6Excerpt)
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	mistakes := 0
	for _, st := range trace.Split(recs) {
		t.Run(st.Sender, func(t *testing.T) {
			hbs := heartbeats(st.Records)
			mistakes += checkShared(t, hbs, Config{DelayOffset: ms(50)})
			checkTwoWFD(t, hbs)
		})
	}
	assert.Positive(t, mistakes)
}

// Thresholds of equal rank are replayed once and give equal points; the
// sweep falls back to one replay per point for an invalid threshold.
func TestSatzgerSweepMergesRanksAndFallsBack(t *testing.T) {
	assert.Equal(t, []int{0, 1, 0, 3}, classes(4, func(i, j int) bool { return []int{1, 2, 1, 3}[i] == []int{1, 2, 1, 3}[j] }))
	hbs := agreementTraces()["jitter-loss"]
	vals := []float64{0.991, 0.999, 1, 0.3}
	f := SatzgerFamily(satzgerTestConfig(), vals)
	c := requireSameAsPerPoint(t, f, []Stream{{Heartbeats: hbs}}, Config{}, SharedState, "θ = %g")
	// N ≤ 50: ⌈0.991·n⌉ = ⌈0.999·n⌉ = n for every n ≤ 50.
	assert.Equal(t, c.Points[1].Result, c.Points[0].Result)
	assert.Equal(t, c.Points[2].Result, c.Points[0].Result)

	for _, bad := range []float64{0, 1.5} {
		f = SatzgerFamily(satzgerTestConfig(), []float64{0.5, bad})
		cs, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{f}, SweepConfig{})
		require.NoError(t, err)
		assert.Equal(t, PerPoint, cs[0].Method)
		assert.Len(t, cs[0].Points, 1)
		assert.ErrorContains(t, cs[0].Err, fmt.Sprintf("threshold=%g", bad))
	}
	f = KappaFamily(kappaTestConfig(), []float64{2.5, -1})
	cs, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{f}, SweepConfig{})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, cs[0].Method)
	assert.ErrorContains(t, cs[0].Err, "threshold=-1")
	f = KappaFamily(kappaTestConfig(), []float64{2.5})
	cs, err = Sweep([]Stream{{Heartbeats: hbs[:3]}}, []Family{f}, SweepConfig{Config: Config{WarmUp: 10}})
	require.NoError(t, err)
	assert.Equal(t, PerPoint, cs[0].Method)
	assert.ErrorContains(t, cs[0].Err, "no heartbeat evaluated")
}

// κ-FD's sweep over fdreplay's default range (K from 0.5 to 16, log-spaced)
// on a stream like the scaling benchmark's (Δ = 10 ms, lognormal delays,
// jitter, loss): each threshold follows its crossing from heartbeat to
// heartbeat (kappa.Tracker), and every field still equals a replay per
// threshold, the integer K = 16 (a plateau) included.
func TestKappaSweepDefaultRangeEqualsReplays(t *testing.T) {
	n, points := 20000, 40
	if testing.Short() {
		n, points = 4000, 8
	}
	recs, err := trace.Generate(trace.GenConfig{
		Interval: ms(10), Duration: time.Duration(n) * ms(10), Jitter: ms(0.5),
		Delay: trace.Delay{Dist: trace.DelayLogNormal, Base: ms(1), Mean: ms(2), SD: ms(1)},
		Loss:  trace.Loss{Model: trace.LossBernoulli, P: 0.01},
	}, trace.NewRand(24))
	require.NoError(t, err)
	ks := mustRange(t, 0.5, 16, points, true)
	cfg := kappa.Config{Estimator: chen.EstimatorConfig{Interval: ms(10), WindowSize: 1000}}
	requireSameAsPerPoint(t, KappaFamily(cfg, ks), []Stream{{Name: "s", Heartbeats: heartbeats(recs)}}, Config{}, SharedState, "K = %g")
}
