package qos

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
)

// coverage replays traces generated traces of the closed-form model of
// TestFixedTimeoutClosedForm (n heartbeats each, Δ = 100 ms, delays
// N(50 ms, 5 ms), Bernoulli loss 0.1) through a fixed timeout T with
// Config.Intervals and returns the fraction of 95 % intervals that hold the
// closed-form MR and QAP.
func coverage(t *testing.T, traces, n int, T time.Duration, seed uint64) (mr, qap float64) {
	t.Helper()
	const pLoss = 0.1
	delta, d, s := ms(100), ms(50), ms(5)
	cf := fixedClosedForm(T, delta, s, pLoss)
	var inMR, inQAP int
	for i := range traces {
		recs, err := trace.Generate(trace.GenConfig{
			Interval: delta,
			Duration: time.Duration(n) * delta,
			Delay:    trace.Delay{Dist: trace.DelayNormal, Mean: d, SD: s},
			Loss:     trace.Loss{Model: trace.LossBernoulli, P: pLoss},
		}, trace.NewRand(seed+uint64(i)))
		require.NoError(t, err)
		res, err := ReplaySlice(newFixed(t, T), heartbeats(recs), Config{Intervals: true})
		require.NoError(t, err)
		require.NotNil(t, res.CI)
		if res.CI.MRPerSecond[0] <= cf.mr && cf.mr <= res.CI.MRPerSecond[1] {
			inMR++
		}
		if res.CI.QAP[0] <= cf.qap && cf.qap <= res.CI.QAP[1] {
			inQAP++
		}
	}
	return float64(inMR) / float64(traces), float64(inQAP) / float64(traces)
}

// TestIntervalCoverage checks that the 95 % bootstrap intervals of MR and
// QAP hold the closed-form values of TestFixedTimeoutClosedForm on 200
// independent 5-minute traces between 90 % and 99 % of the time, at a
// timeout where mistakes come mostly from losses (T = 150 ms) and one where
// they come from delays too (T = 110 ms). The traces have fixed seeds, so
// the observed coverage is the same on every run.
//
// With -short only T = 150 ms runs (the 200 traces take about 15 s under
// -race on the development host).
func TestIntervalCoverage(t *testing.T) {
	timeouts := []time.Duration{ms(110), ms(150)}
	if testing.Short() {
		timeouts = timeouts[1:]
	}
	for _, T := range timeouts {
		mr, qap := coverage(t, 200, 3000, T, 1000)
		t.Logf("T=%v: coverage over 200 traces of 3000 heartbeats: MR %.3f, QAP %.3f", T, mr, qap)
		for name, c := range map[string]float64{"MR": mr, "QAP": qap} {
			assert.GreaterOrEqual(t, c, 0.90, "%s coverage at T=%v", name, T)
			assert.LessOrEqual(t, c, 0.99, "%s coverage at T=%v", name, T)
		}
	}
}

// TestIntervalCoverageLong is TestIntervalCoverage over 1000 traces and
// also with short (1000-heartbeat) traces, where the intervals rest on
// fewer mistakes.
func TestIntervalCoverageLong(t *testing.T) {
	if testing.Short() {
		t.Skip("1000-trace coverage run: skipped with -short")
	}
	for _, n := range []int{1000, 3000} {
		for _, T := range []time.Duration{ms(110), ms(150), ms(250)} {
			t.Run(fmt.Sprintf("n=%d/T=%v", n, T), func(t *testing.T) {
				mr, qap := coverage(t, 1000, n, T, 50000)
				t.Logf("coverage over 1000 traces of %d heartbeats: MR %.3f, QAP %.3f", n, mr, qap)
				lo := 0.90
				if n == 1000 && T == ms(250) {
					// About 9 mistakes per trace: the percentile
					// intervals are too short (observed 0.89 for QAP;
					// MR 0.955 with the Poisson floor, 0.92 without);
					// see docs/algorithms.md.
					lo = 0.85
				}
				for name, c := range map[string]float64{"MR": mr, "QAP": qap} {
					assert.GreaterOrEqual(t, c, lo, name)
					assert.LessOrEqual(t, c, 0.99, name)
				}
			})
		}
	}
}

// TestBlockLength checks the Politis–White rule on series whose answer is
// known: white noise needs no blocks, and a strongly autocorrelated AR(1)
// series (ρ = 0.9) needs long ones.
func TestBlockLength(t *testing.T) {
	rng := trace.NewRand(7)
	white := make([]float64, 128)
	ar := make([]float64, 128)
	x := 0.0
	for i := range white {
		white[i] = rng.NormFloat64()
		x = 0.9*x + rng.NormFloat64()
		ar[i] = x
	}
	assert.Equal(t, 1, blockLength(white))
	b := blockLength(ar)
	assert.GreaterOrEqual(t, b, 5)
	assert.LessOrEqual(t, b, int(math.Ceil(128.0/3)))
	assert.Equal(t, 1, blockLength(make([]float64, 128)), "constant series")
}

// TestCellsAddUp checks that the per-cell breakdown behind the intervals
// adds up to the Result (observed time, mistakes, suspected time, TD mean),
// that the intervals hold the estimates and are the same on a second run,
// and that a setting compared with itself differs by exactly 0.
func TestCellsAddUp(t *testing.T) {
	recs, err := trace.Generate(trace.GenConfig{
		Interval: ms(100), Duration: 3000 * ms(100),
		Delay: trace.Delay{Dist: trace.DelayNormal, Mean: ms(50), SD: ms(5)},
		Loss:  trace.Loss{Model: trace.LossBernoulli, P: 0.1},
	}, trace.NewRand(3))
	require.NoError(t, err)
	hbs := heartbeats(recs)
	cfg := Config{Intervals: true, WarmUp: 100}
	res, err := ReplaySlice(newFixed(t, ms(150)), hbs, cfg)
	require.NoError(t, err)
	require.NotNil(t, res.CI)
	lo, hi := res.cells.active()
	tot := res.cells.sums(lo, hi)
	assert.InDelta(t, float64(res.Span), tot.span, 1)
	assert.Equal(t, float64(res.Mistakes), tot.mist)
	assert.InDelta(t, float64(res.Suspected), tot.susp, 1)
	assert.Equal(t, float64(res.Evaluated), tot.tdN)
	assert.InDelta(t, float64(res.TD.Mean), tot.tdSum/tot.tdN, 1)
	ci := res.CI
	assert.True(t, ci.MRPerSecond[0] <= res.MRPerSecond && res.MRPerSecond <= ci.MRPerSecond[1], "MR %g in %v", res.MRPerSecond, ci.MRPerSecond)
	assert.True(t, ci.QAP[0] <= res.QAP && res.QAP <= ci.QAP[1], "QAP %g in %v", res.QAP, ci.QAP)
	assert.True(t, ci.TDMean[0] <= res.TD.Mean && res.TD.Mean <= ci.TDMean[1], "TD %v in %v", res.TD.Mean, ci.TDMean)
	assert.Equal(t, 0.95, ci.Level)
	assert.GreaterOrEqual(t, ci.Cells, 100)

	again, err := ReplaySlice(newFixed(t, ms(150)), hbs, cfg)
	require.NoError(t, err)
	assert.Equal(t, res.CI, again.CI, "seeded: the same interval on every run")

	d, err := Compare(res, again)
	require.NoError(t, err)
	assert.Equal(t, Difference{}, d)
	assert.False(t, d.TDSignificant())

	slower, err := ReplaySlice(newFixed(t, ms(400)), hbs, cfg)
	require.NoError(t, err)
	d, err = Compare(res, slower)
	require.NoError(t, err)
	assert.Equal(t, res.TD.Mean-slower.TD.Mean, d.TDMean)
	assert.True(t, d.TDSignificant(), "250 ms apart on every heartbeat: %v", d.TDMeanCI)
	assert.Less(t, d.TDMeanCI[1], time.Duration(0))

	plain, err := ReplaySlice(newFixed(t, ms(150)), hbs, Config{WarmUp: 100})
	require.NoError(t, err)
	assert.Nil(t, plain.CI)
	_, err = Compare(res, plain)
	assert.ErrorIs(t, err, ErrNoCells)
}

// TestIntervalsOnePassMatchPerPoint checks that the one-pass sweep of a
// linear family (Chen's α, where EA lags after gaps so that the TD floor
// is reached, and the fixed timeout) gives every point the same per-cell
// breakdown, hence the same intervals, as replaying that point alone.
func TestIntervalsOnePassMatchPerPoint(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	fams := []Family{
		ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 50}}, []time.Duration{0, ms(5), ms(20), ms(60), ms(150), ms(400)}),
		FixedFamily([]time.Duration{ms(101), ms(130), ms(200), ms(500)}),
	}
	cfg := Config{Intervals: true, WarmUp: 50}
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	fast, err := Sweep(streams, fams, SweepConfig{Config: cfg})
	require.NoError(t, err)
	slow, err := Sweep(streams, fams, SweepConfig{Config: cfg, PerPointOnly: true})
	require.NoError(t, err)
	for ci := range fast {
		require.Equal(t, OnePass, fast[ci].Method)
		require.Len(t, fast[ci].Points, len(slow[ci].Points))
		for i, p := range fast[ci].Points {
			q := slow[ci].Points[i]
			require.NotNil(t, p.CI, "%s %g", fast[ci].Family, p.Value)
			require.NotNil(t, q.CI)
			if fast[ci].Family == "chen" && p.Value == 0 {
				continue // α = 0 is 1 ns in a lone replay (see ChenFamily)
			}
			assert.Equal(t, q.cells.mist, p.cells.mist, "%s %g mistakes per cell", fast[ci].Family, p.Value)
			assert.InDeltaSlice(t, q.cells.susp, p.cells.susp, 1e3, "suspected time per cell")
			assert.Equal(t, q.cells.span, p.cells.span)
			assert.Equal(t, q.cells.tdN, p.cells.tdN)
			assert.InDeltaSlice(t, q.cells.tdSum, p.cells.tdSum, 1e3)
			assert.Equal(t, q.CI.Block, p.CI.Block)
			assert.InDelta(t, q.CI.MRPerSecond[0], p.CI.MRPerSecond[0], 1e-9)
			assert.InDelta(t, q.CI.MRPerSecond[1], p.CI.MRPerSecond[1], 1e-9)
			assert.InDelta(t, q.CI.QAP[0], p.CI.QAP[0], 1e-9)
			assert.InDelta(t, q.CI.QAP[1], p.CI.QAP[1], 1e-9)
			assert.InDelta(t, float64(q.CI.TDMean[0]), float64(p.CI.TDMean[0]), 2)
			assert.InDelta(t, float64(q.CI.TDMean[1]), float64(p.CI.TDMean[1]), 2)
		}
	}
}

// TestIntervalsSFDMatchPerPoint is TestIntervalsOnePassMatchPerPoint for
// SFD's shared-estimator sweep.
func TestIntervalsSFDMatchPerPoint(t *testing.T) {
	hbs := agreementTraces()["jitter-loss"]
	f := SFDFamily(sfd.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 50}, Step: ms(10),
		Targets: sfd.Targets{MaxTD: ms(400), MaxMistakesPerSecond: 0.01, MinQAP: 0.999}}, []time.Duration{ms(1), ms(20), ms(100), ms(300)})
	cfg := Config{Intervals: true, WarmUp: 50}
	streams := []Stream{{Name: "s", Heartbeats: hbs}}
	fast, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg})
	require.NoError(t, err)
	slow, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg, PerPointOnly: true})
	require.NoError(t, err)
	require.Equal(t, SharedEstimator, fast[0].Method)
	require.Len(t, fast[0].Points, 4)
	require.Len(t, slow[0].Points, 4)
	for i, p := range fast[0].Points {
		q := slow[0].Points[i]
		require.NotNil(t, p.CI)
		assert.Equal(t, q.Result, p.Result, "SM1 %g", p.Value)
	}
}

// TestPercentilesMatchGonum checks the selection-based percentiles against
// gonum's Empirical quantiles of the sorted values.
func TestPercentilesMatchGonum(t *testing.T) {
	rng := trace.NewRand(9)
	for _, n := range []int{1, 2, 40, 499, 1000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.ExpFloat64()
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		got := percentiles(xs)
		assert.Equal(t, stat.Quantile(0.025, stat.Empirical, sorted, nil), got[0], "n=%d", n)
		assert.Equal(t, stat.Quantile(0.975, stat.Empirical, sorted, nil), got[1], "n=%d", n)
	}
	assert.Equal(t, [2]float64{2, 2}, percentiles([]float64{math.NaN(), 2}))
}

// The block starts depend only on (cells, block length) and are the same
// whether cached or drawn afresh past the cache's bound.
func TestResampleStartsCacheBound(t *testing.T) {
	first := resampleStarts(100, 3)
	for n := 8; n < 8+2*maxCachedStarts; n++ {
		resampleStarts(n, 1)
	}
	assert.LessOrEqual(t, int(startsCached.Load()), maxCachedStarts)
	assert.Equal(t, first, resampleStarts(100, 3))
	fresh := resampleStarts(8+2*maxCachedStarts-1, 1)
	assert.Len(t, fresh, bootstrapReps*(8+2*maxCachedStarts-1))
	assert.Equal(t, fresh, resampleStarts(8+2*maxCachedStarts-1, 1), "drawn afresh, the same starts")
}

// TestIntervalFewMistakes checks that a setting with one mistake gets at
// least the exact Poisson interval of one event (Garwood: [0.0253, 5.572]
// over the observed time, by hand from χ²(0.025; 2) = 0.0506 and
// χ²(0.975; 4) = 11.143): the block bootstrap alone gave about
// [0, 3/T_obs], no wider than for no mistake at all, and the report said a
// 1-mistake setting met an MR target of 1/min "even at the unfavourable
// end" on a 4-minute trace.
func TestIntervalFewMistakes(t *testing.T) {
	var hbs []detector.Heartbeat
	for k := 1; k <= 3000; k++ {
		a := time.Duration(k)*ms(100) + ms(5)
		if k == 2000 {
			a += ms(95) // the one late heartbeat (195 ms after the previous one): one mistake at T = 150 ms
		}
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(k), HasSeq: true, Sent: time.Duration(k) * ms(100), HasSent: true, Arrival: a})
	}
	res, err := ReplaySlice(newFixed(t, ms(150)), hbs, Config{Intervals: true, WarmUp: 100})
	require.NoError(t, err)
	require.Equal(t, 1, res.Mistakes)
	require.NotNil(t, res.CI)
	sec := res.Span.Seconds()
	assert.LessOrEqual(t, res.CI.MRPerSecond[0], 0.0254/sec)
	assert.GreaterOrEqual(t, res.CI.MRPerSecond[1], 5.571/sec, "upper end %g/s, 3/T_obs = %g/s", res.CI.MRPerSecond[1], 3/sec)
	g := poissonMR(1, time.Second)
	assert.InDelta(t, 0.02532, g[0], 1e-4)
	assert.InDelta(t, 5.5716, g[1], 1e-3)
	g = poissonMR(10, 10*time.Second)
	assert.InDelta(t, 4.7954/10, g[0], 1e-4) // χ²(0.025; 20)/2 = 4.7954
	assert.InDelta(t, 18.390/10, g[1], 1e-3) // χ²(0.975; 22)/2 = 18.390
}
