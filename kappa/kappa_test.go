package kappa_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/kappa"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// The common trace of docs/algorithms.md (no loss): A_j − Δ·s_j = 20, 25,
// 18, 40, 22, 30 ms, mean 25.833333 ms, population σ = 7.403077 ms.
var common = []time.Duration{120 * ms, 225 * ms, 318 * ms, 440 * ms, 522 * ms, 630 * ms}

func feed(d *kappa.Detector) {
	for i, a := range common {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: a})
	}
}

// Worked by hand (docs/algorithms.md, “κ-FD”): EA_7 = 725.833333 ms, s =
// σ/Δ = 0.07403077. At EA_7 heartbeat 7 contributes Φ(0) = 0.5; at 800 ms
// (u = 0.741667) it contributes Φ(10.02) = 1 and heartbeat 8 Φ(−3.4895) =
// 0.000242; at 900 ms heartbeats 7 and 8 count 1 and 9 adds the same
// 0.000242. The default K = 2.5 is reached where heartbeat 9 contributes
// 0.5 (7 and 8 count 1, 10 contributes Φ(−13.5) ≈ 0): at u = 2, τ = EA_7 +
// 200 ms = 925.833333 ms. K = 3 is reached where Φ((u−2)/s) + Φ((u−3)/s) =
// 1, at u = 2.5 by symmetry: 975.833333 ms.
func TestWorkedExample(t *testing.T) {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}})
	require.NoError(t, err)
	feed(d)
	ea := d.Estimator().Next()
	require.Equal(t, 725833333*time.Nanosecond, ea)
	assert.Equal(t, 7403077*time.Nanosecond, d.StdDev())
	assert.Equal(t, 0.0, d.Level(630*ms), "heartbeat 7 is 95.8 ms = 12.9σ early")
	assert.InDelta(t, 0.5, d.Level(ea), 1e-15)
	assert.InDelta(t, 1.000241926, d.Level(800*ms), 1e-9)
	assert.InDelta(t, 2.000241926, d.Level(900*ms), 1e-9)
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	assert.InDelta(t, float64(925833333), float64(tau), 1)
	assert.GreaterOrEqual(t, d.Level(tau), 2.5)
	assert.Less(t, d.Level(tau-1), 2.5)
	assert.False(t, d.Suspected(tau))
	assert.True(t, d.Suspected(tau+1))
	assert.True(t, d.WarmingUp())

	// Other thresholds from the same state: K = 0.5 at EA_7 itself, 1.5
	// at EA_7 + Δ. The integers sit on plateaus of κ (dκ/dt = 3.3e-17 per
	// ns at u = 2.5 for K = 3, below one ulp of 3 over 13 ns): τ is exact
	// for Level there, the hand value only to the float64 resolution of κ.
	for _, c := range []struct {
		k   float64
		at  time.Duration
		tol float64
	}{{0.5, 725833333, 1}, {1.5, 825833333, 1}, {1, 775833333, 100}, {3, 975833333, 100}} {
		got, ok := d.FreshnessPointAt(c.k)
		assert.True(t, ok)
		assert.InDelta(t, float64(c.at), float64(got), c.tol, "K = %v", c.k)
		assert.GreaterOrEqual(t, d.Level(got), c.k)
		assert.Less(t, d.Level(got-1), c.k)
	}
}

// The step contribution counts the overdue heartbeats: κ = ⌈(t − EA_7)/Δ⌉,
// τ(K) = EA_7 + (⌈K⌉ − 1)·Δ + 1 ns, NFD-E with α = (⌈K⌉ − 1)·Δ.
func TestStepIsCountOfOverdue(t *testing.T) {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}, Contribution: kappa.ContributionStep})
	require.NoError(t, err)
	feed(d)
	ea := d.Estimator().Next()
	assert.Equal(t, 0.0, d.Level(ea))
	assert.Equal(t, 1.0, d.Level(ea+1))
	assert.Equal(t, 1.0, d.Level(ea+100*ms))
	assert.Equal(t, 2.0, d.Level(ea+100*ms+1))
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, ea+200*ms+1, tau)
	for k, want := range map[float64]time.Duration{0.3: ea + 1, 1: ea + 1, 1.5: ea + 100*ms + 1, 3: ea + 200*ms + 1} {
		got, _ := d.FreshnessPointAt(k)
		assert.Equal(t, want, got, "K = %v", k)
	}
}

// After a sender pause EA lags behind: κ(T_last) may already exceed K, and
// τ is then T_last (never before it).
func TestReachedAtLastArrival(t *testing.T) {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}, Threshold: 1})
	require.NoError(t, err)
	feed(d)
	// Heartbeat 7 arrives 400 ms late: EA_8 = (25.833·6+470)/7 + 800 = 889.3 ms
	// while T_last = 1100 ms.
	d.Observe(detector.Heartbeat{Seq: 7, HasSeq: true, Arrival: 1100 * ms})
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, 1100*ms, tau)
	e, ok := d.ElapsedFor(1)
	assert.True(t, ok)
	assert.Equal(t, time.Duration(0), e)
	assert.GreaterOrEqual(t, d.Level(1000*ms), 1.0, "an instant before T_last counts as T_last")
}

// A window holding an outage: σ far above 4Δ, the integral form.
func TestWideSpread(t *testing.T) {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}})
	require.NoError(t, err)
	feed(d)
	d.Observe(detector.Heartbeat{Seq: 7, HasSeq: true, Arrival: 2 * time.Hour})
	require.Greater(t, d.StdDev(), 4*100*ms)
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	assert.GreaterOrEqual(t, d.Level(tau), 3.0)
	if tau > 2*time.Hour {
		assert.Less(t, d.Level(tau-1), 3.0)
	}
	prev := 0.0
	for e := time.Duration(0); e < 10*time.Hour; e += 7 * time.Minute {
		l := d.Level(2*time.Hour + e)
		require.GreaterOrEqual(t, l, prev)
		prev = l
	}
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]kappa.Config{
		"Threshold -1":   {Threshold: -1},
		"Threshold +Inf": {Threshold: math.Inf(1)},
		"Threshold NaN":  {Threshold: math.NaN()},
		"Contribution 7": {Contribution: 7},
		"MinStdDev -1ns": {MinStdDev: new(time.Duration(-1))},
		"MinSamples 11":  {Estimator: chen.EstimatorConfig{WindowSize: 10}, MinSamples: new(11)},
		"WindowSize -1":  {Estimator: chen.EstimatorConfig{WindowSize: -1}},
	} {
		_, err := kappa.New(cfg)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), name)
		}
	}
	assert.Equal(t, "normal", kappa.ContributionNormal.String())
	assert.Equal(t, "step", kappa.ContributionStep.String())
}

func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]kappa.Config{
		"default": {},
		"small":   {Estimator: chen.EstimatorConfig{WindowSize: 8, RestartJump: new(uint64(5))}, Threshold: 0.7, MinStdDev: new(ms), MinSamples: new(2)},
		"step":    {Estimator: chen.EstimatorConfig{WindowSize: 20}, Threshold: 2.5, Contribution: kappa.ContributionStep},
		"high":    {Estimator: chen.EstimatorConfig{WindowSize: 30}, Threshold: 40},
	}, kappa.New, nil)
}

func BenchmarkObserveSuspected(b *testing.B) {
	d, err := kappa.New(kappa.Config{})
	require.NoError(b, err)
	detectortest.Benchmark(b, d)
}

func BenchmarkObserveLevel(b *testing.B) {
	d, err := kappa.New(kappa.Config{})
	require.NoError(b, err)
	detectortest.BenchmarkLevel(b, d)
}

// Thresholds whose crossing lies near the end of the Duration range: found
// (and consistent with Level) or reported as never reached, without
// overflow in the search.
func TestThresholdNearRangeEnd(t *testing.T) {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}})
	require.NoError(t, err)
	feed(d)
	for _, k := range []float64{9e10, 9.2e10, 1e11, 1e300} {
		e, ok := d.ElapsedFor(k)
		if !ok {
			assert.Equal(t, time.Duration(math.MaxInt64), e, "K = %g", k)
			continue
		}
		at := 630*ms + e
		assert.GreaterOrEqual(t, d.Level(at), k, "K = %g", k)
		assert.Less(t, d.Level(at-1e6), k, "K = %g", k)
	}
	_, ok := d.ElapsedFor(1e11)
	assert.False(t, ok, "1e11 intervals of 100 ms are beyond the Duration range")
}

// With σ > 4Δ (a window holding a growing delay) κ is the integral of the
// sum with its Euler–Maclaurin correction; it must stay within 2·10⁻⁵ of
// the sum itself, computed here term by term. Offsets A_j − Δ·s_j = 0,
// 200, …, 1800 ms: mean 900 ms, σ = 200·√8.25 = 574.456 ms = 5.74Δ, EA_11 =
// 2000 ms, T_last = 2800 ms. (Without the correction term the error is
// about 3·10⁻³.)
func TestWideSpreadMatchesSum(t *testing.T) {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{WindowSize: 10}})
	require.NoError(t, err)
	for s := 1; s <= 10; s++ {
		d.Observe(detector.Heartbeat{Seq: uint64(s), HasSeq: true, Arrival: time.Duration(s)*100*ms + time.Duration(s-1)*200*ms})
	}
	sigma := 200 * math.Sqrt(8.25) // ms
	require.Equal(t, 2000*ms, d.Estimator().Next())
	require.InDelta(t, sigma, float64(d.StdDev())/1e6, 1e-6)
	for at := 2800.0; at <= 9000; at += 137 {
		want := 0.0
		for j := 0; j < 1000; j++ {
			want += 0.5 * math.Erfc(-(at-2000-100*float64(j))/sigma/math.Sqrt2)
		}
		assert.InDelta(t, want, d.Level(time.Duration(at*1e6)), 2e-5, "t = %v ms", at)
	}
}

// A late heartbeat (one that enters the window without a new state) does
// not change the state in force: a detector read only after the late
// heartbeats gives the freshness points, levels and σ of one read after
// every heartbeat.
func TestLateHeartbeatDoesNotMoveAnUnreadState(t *testing.T) {
	cfg := kappa.Config{Estimator: chen.EstimatorConfig{Interval: 10 * time.Millisecond, WindowSize: 50}, MinSamples: new(0)}
	eager, err := kappa.New(cfg)
	require.NoError(t, err)
	lazy, err := kappa.New(cfg)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(61, 62))
	var held []detector.Heartbeat
	reads := 0
	for n := 1; n <= 2000; n++ {
		hb := detector.Heartbeat{Seq: uint64(n), HasSeq: true, Arrival: time.Duration(n)*10*time.Millisecond + time.Duration(2e6+5e5*rng.NormFloat64())}
		if rng.IntN(10) == 0 {
			held = append(held, hb) // delivered late, after the next one
			continue
		}
		batch := []detector.Heartbeat{hb}
		for _, h := range held {
			h.Arrival = hb.Arrival + time.Duration(1+rng.IntN(1000)) // late: after a higher sequence number
			batch = append(batch, h)
		}
		late := len(held) > 0
		held = held[:0]
		for _, h := range batch {
			eager.Observe(h)
			eager.FreshnessPoint()
			lazy.Observe(h)
		}
		if !late {
			continue
		}
		reads++
		want, _ := eager.FreshnessPoint()
		got, _ := lazy.FreshnessPoint()
		require.Equal(t, want, got, "heartbeat %d", n)
		require.Equal(t, eager.StdDev(), lazy.StdDev(), "heartbeat %d", n)
		at := want - time.Millisecond
		require.Equal(t, eager.Level(at), lazy.Level(at), "heartbeat %d", n)
	}
	require.Greater(t, reads, 100)
}

// Started is FreshnessPoint's ok without solving for τ: false before the
// first heartbeat, true from it on, through a sender restart; and a
// Detector that has seen none reads κ as 0.
func TestStarted(t *testing.T) {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{Interval: 100 * ms, WindowSize: 10}})
	require.NoError(t, err)
	require.False(t, d.Started())
	_, ok := d.FreshnessPoint()
	require.False(t, ok)
	assert.Zero(t, d.Level(time.Hour))
	seqs := []uint64{1, 2, 3, 1, 2} // the sender restarts at the fourth
	for i, s := range seqs {
		d.Observe(detector.Heartbeat{Seq: s, HasSeq: true, Arrival: time.Duration(i+1) * 100 * ms})
		_, ok := d.FreshnessPoint()
		require.True(t, ok, "heartbeat %d", i)
		require.Equal(t, ok, d.Started(), "heartbeat %d", i)
	}
}

// A σ of more than 5.625Δ puts κ at EA_{ℓ+1} above the default K = 2.5
// (docs/algorithms.md, “κ-FD”: Σ_{j≥0} Φ(−j/s) = 2.5 at s = 5.62509):
// the detector suspects before the next heartbeat is due. σ is forced
// here by MinStdDev on arrivals exactly Δ apart (the window's own σ is 0).
func TestWideWindowSuspectsBeforeDue(t *testing.T) {
	for _, tc := range []struct {
		minStd    time.Duration
		suspected bool
	}{{562 * time.Millisecond, false}, {563 * time.Millisecond, true}, {632 * time.Millisecond, true}} {
		d, err := kappa.New(kappa.Config{MinStdDev: new(tc.minStd), MinSamples: new(0)})
		require.NoError(t, err)
		for i := range 20 {
			d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: time.Duration(i) * 100 * time.Millisecond})
		}
		ea := d.Estimator().Next()
		require.Equal(t, 2000*time.Millisecond, ea)
		assert.Equal(t, tc.suspected, d.Suspected(ea), "σ = %v: κ(EA) = %v", tc.minStd, d.Level(ea))
	}
}
