package bertier_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tol = 1e-9 // relative, docs/algorithms.md, “Conventions and the common trace”

func ms(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Millisecond))) }

func hb(seq uint64, at float64) detector.Heartbeat {
	return detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: ms(at)}
}

func newDet(t testing.TB, cfg bertier.Config) *bertier.Detector {
	d, err := bertier.New(cfg)
	require.NoError(t, err)
	return d
}

func window(n int) bertier.Config {
	return bertier.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: n}}
}

// docs/algorithms.md, “Bertier's adaptive margin” table: common trace, window
// growing to 6, defaults.
func TestCommonTraceTable(t *testing.T) {
	d := newDet(t, window(6))
	d.Observe(hb(1, 120))
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	assert.Equal(t, ms(220), tau) // τ_2 = EA_2 = 220, α = 0
	assert.Equal(t, time.Duration(0), d.Margin())
	rows := []struct {
		a, err, delay, v, alpha, ea, tau float64
	}{
		{225, 5, 0.5, 0.5, 2.5, 322.5, 325.0},
		{318, -5, 0.0, 0.95, 3.8, 421.0, 424.8},
		{440, 19, 1.9, 2.755, 12.92, 525.75, 538.67},
		{522, -5.65, 1.335, 3.0445, 13.513, 625.0, 638.513},
		{630, 3.665, 1.7015, 3.10655, 14.1277, 725.833333, 739.961033},
	}
	mistakes := 0
	for i, r := range rows {
		k := i + 2
		if d.Suspected(ms(r.a)) {
			mistakes++ // warm-up mistakes: τ_2 < A_2 and τ_4 < A_4
		}
		d.Observe(hb(uint64(k), r.a))
		f := d.ErrorFilter()
		assert.InDelta(t, r.err*1e6, float64(d.LastError()), 0.5, "error_%d", k)
		assert.InDelta(t, r.delay*1e6, f.SRTTNanos(), 1e-3, "delay after %d", k) // delay_3 is 0
		assert.InEpsilon(t, r.v*1e6, f.RTTVARNanos(), tol, "var after %d", k)
		assert.InEpsilon(t, r.alpha*1e6, float64(d.Margin()), tol, "α after %d", k)
		assert.InEpsilon(t, r.ea*1e6, float64(d.Estimator().Next()), tol, "EA after %d", k)
		tau, _ := d.FreshnessPoint()
		assert.InEpsilon(t, r.tau*1e6, float64(tau), tol, "τ after %d", k)
		assert.Equal(t, k < 6, d.WarmingUp())
	}
	assert.Equal(t, 2, mistakes)
	tau, _ = d.FreshnessPoint()
	assert.Equal(t, time.Duration(739961033), tau)
	off, scale, ok := d.LinearForm()
	require.True(t, ok)
	assert.InDelta(t, float64(tau), float64(off)+scale*bertier.DefaultPhi, 1)
}

// Heartbeat 4 lost: with ErrorVsReceived the error of heartbeat 5 is
// A_5 − EA(5) − delay = 522 − 521 − 0 = 1; with ErrorVsNext it is
// 522 − EA_4 = 522 − 421 = 101.
func TestLossRules(t *testing.T) {
	recv := newDet(t, window(6))
	cfg := window(6)
	cfg.LossRule = bertier.ErrorVsNext
	next := newDet(t, cfg)
	for _, h := range []detector.Heartbeat{hb(1, 120), hb(2, 225), hb(3, 318), hb(5, 522)} {
		recv.Observe(h)
		next.Observe(h)
	}
	assert.Equal(t, ms(1), recv.LastError())
	assert.InEpsilon(t, 0.1e6, recv.ErrorFilter().SRTTNanos(), tol)
	assert.InEpsilon(t, (0.9*0.95+0.1*1)*1e6, recv.ErrorFilter().RTTVARNanos(), tol)
	assert.Equal(t, ms(101), next.LastError())
	assert.InEpsilon(t, 10.1e6, next.ErrorFilter().SRTTNanos(), tol)
	assert.InEpsilon(t, (0.9*0.95+0.1*101)*1e6, next.ErrorFilter().RTTVARNanos(), tol)
	// Both use the same NFD-E estimate: W = {1,2,3,5}, EA_6 = 21.25 + 600 = 621.25
	assert.Equal(t, recv.Estimator().Next(), next.Estimator().Next())
	assert.Equal(t, ms(621.25), recv.Estimator().Next())
}

func TestConfig(t *testing.T) {
	d := newDet(t, bertier.Config{})
	assert.Equal(t, chen.DefaultWindowSize, d.Estimator().WindowSize())
	d.Observe(hb(0, 0))
	assert.True(t, d.WarmingUp())
	for _, c := range []bertier.Config{
		{Gain: -1}, {Gain: 1.1}, {Beta: -1}, {Beta: math.Inf(1)}, {Phi: -2}, {Phi: math.NaN()},
		{LossRule: 9}, {MinSamples: new(-1)}, {Estimator: chen.EstimatorConfig{Interval: -1}},
	} {
		_, err := bertier.New(c)
		assert.Error(t, err, "%+v", c)
	}
}

// Awkward input, one documented choice each (see Detector).
func TestAwkwardInput(t *testing.T) {
	feed := func(d *bertier.Detector, n int) {
		for i := range n {
			d.Observe(hb(uint64(i+1), float64(20+100*(i+1))))
		}
	}
	t.Run("single heartbeat", func(t *testing.T) {
		d := newDet(t, window(6))
		assert.False(t, d.Suspected(ms(1e9)))
		d.Observe(hb(7, 50))
		tau, ok := d.FreshnessPoint()
		assert.True(t, ok)
		assert.Equal(t, ms(150), tau)
	})
	t.Run("zero variance", func(t *testing.T) {
		d := newDet(t, window(10))
		feed(d, 300)
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(20+100*301), tau)
		assert.Equal(t, 0.0, d.ErrorFilter().RTTVARNanos())
	})
	t.Run("duplicates and stale are dropped, late updates only the window", func(t *testing.T) {
		d := newDet(t, window(6))
		for _, h := range []detector.Heartbeat{hb(1, 120), hb(2, 225), hb(3, 318), hb(5, 522)} {
			d.Observe(h)
		}
		tau, _ := d.FreshnessPoint()
		f := *d.ErrorFilter()
		d.Observe(hb(5, 530)) // duplicate
		d.Observe(hb(2, 531)) // duplicate (in W)
		d.Observe(hb(4, 540)) // late
		after, _ := d.FreshnessPoint()
		assert.Equal(t, tau, after)
		assert.Equal(t, f, *d.ErrorFilter())
		assert.Equal(t, 5, d.Estimator().Len())
	})
	t.Run("restart resets delay and var", func(t *testing.T) {
		d := newDet(t, window(6))
		feed(d, 400)
		d.Observe(hb(200, 40_000)) // 400 → 200: more than RestartJump back
		assert.Equal(t, 0, d.ErrorFilter().Samples())
		assert.Equal(t, 1, d.Estimator().Len())
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(40_100), tau)
	})
	t.Run("arrival going backwards", func(t *testing.T) {
		d := newDet(t, window(6))
		d.Observe(hb(1, 500))
		d.Observe(hb(2, 450)) // dropped and counted: never an error sample
		assert.Equal(t, 0, d.ErrorFilter().Samples())
		assert.Equal(t, 1, d.Estimator().Len())
		assert.Equal(t, uint64(1), d.BackwardArrivals())
		u := newDet(t, window(6))
		u.Observe(detector.Heartbeat{Arrival: ms(500)})
		u.Observe(detector.Heartbeat{Arrival: ms(450)}) // unnumbered: dropped
		assert.Equal(t, 0, u.ErrorFilter().Samples())
	})
	t.Run("gap of hours is counted and decays", func(t *testing.T) {
		d := newDet(t, window(6))
		feed(d, 10)
		d.Observe(hb(11, 3*3600e3)) // 3 h pause
		assert.Greater(t, d.Margin(), 4*time.Hour/10)
		for i := 12; i < 400; i++ {
			d.Observe(hb(uint64(i), 3*3600e3+float64(100*(i-11))))
		}
		assert.Less(t, d.Margin(), time.Millisecond)
		assert.False(t, math.IsNaN(d.ErrorFilter().SRTTNanos()))
	})
	t.Run("burst of losses", func(t *testing.T) {
		d := newDet(t, window(6))
		feed(d, 10)
		d.Observe(hb(60, 6020)) // 49 lost, on time
		assert.Equal(t, time.Duration(0), d.LastError())
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(6120), tau)
	})
}

// Properties: error_k follows the loss rule, delay and var finite, var ≥ 0,
// on random streams with jitter, losses, duplicates, reordering and
// restarts (Suspected(t) ⇔ t > τ is checked by detectortest in
// TestConformance).
func TestProperties(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 400
	}
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		cfg := window(1 + rng.IntN(40))
		cfg.LossRule = bertier.LossRule(seed % 2)
		d := newDet(t, cfg)
		seq, at := uint64(rng.IntN(500)), time.Duration(0)
		for range n {
			at += time.Duration(rng.ExpFloat64() * 100e6)
			h := detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at}
			switch x := rng.IntN(100); {
			case x < 5: // duplicate
			case x < 10:
				h.Seq -= uint64(rng.IntN(int(min(seq, 10)) + 1))
			case x < 12:
				h = detector.Heartbeat{Arrival: at}
			case x < 13:
				seq, h.Seq = 0, 0
			default:
				seq += 1 + uint64(rng.IntN(5)/4)
				h.Seq = seq
			}
			// The error uses EA of the received number (or of ℓ+1), from the
			// window before insertion, whatever was cached.
			e := d.Estimator()
			last, had := e.Last()
			check := e.Classify(h) == chen.Fresh && had
			var want float64
			if check {
				k := e.SeqOf(h)
				if cfg.LossRule == bertier.ErrorVsNext {
					k = last + 1
				}
				want = -e.ExpectedArrivalSince(k, h.Arrival) - d.ErrorFilter().SRTTNanos()
			}
			d.Observe(h)
			if check {
				require.InDelta(t, want, float64(d.LastError()), 0.5)
			}
			f := d.ErrorFilter()
			require.False(t, math.IsNaN(f.SRTTNanos()) || math.IsInf(f.SRTTNanos(), 0))
			require.GreaterOrEqual(t, f.RTTVARNanos(), 0.0)
		}
	}
}

func BenchmarkObserveSuspected(b *testing.B) {
	d, _ := bertier.New(bertier.Config{})
	detectortest.Benchmark(b, d)
}

// Near the end of the Duration range a late heartbeat (window of one) raises
// τ beyond math.MaxInt64: it saturates instead of wrapping to the far past.
func TestFreshnessPointSaturates(t *testing.T) {
	d := newDet(t, bertier.Config{Estimator: chen.EstimatorConfig{WindowSize: 1}})
	start := time.Duration(math.MaxInt64) - 12*time.Second
	for i := range 10 {
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: start + time.Duration(i)*100*time.Millisecond})
	}
	a := time.Duration(math.MaxInt64) - time.Second // heartbeat 10, about 10 s late
	d.Observe(detector.Heartbeat{Seq: 10, HasSeq: true, Arrival: a})
	require.Greater(t, d.Margin(), time.Second)
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, time.Duration(math.MaxInt64), tau)
	assert.False(t, d.Suspected(a))
}

// The conformance kit on the defaults and on small windows with either loss
// rule and non-default gains; p of the linear form is φ.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]bertier.Config{
		"default": {},
		"small-window-error-vs-next": {Estimator: chen.EstimatorConfig{WindowSize: 8}, LossRule: bertier.ErrorVsNext,
			MinSamples: new(2)},
		"gains": {Estimator: chen.EstimatorConfig{Interval: 20 * time.Millisecond, WindowSize: 3}, Gain: 0.5,
			Beta: 2, Phi: 1.5},
	}, bertier.New, func(cfg bertier.Config, _ *bertier.Detector) detectortest.Config {
		if cfg.Phi == 0 {
			cfg.Phi = bertier.DefaultPhi
		}
		return detectortest.Config{LinearParam: cfg.Phi}
	})
}

// Found by detectortest: after a jump of centuries from near
// math.MinInt64, EA_{ℓ+1} + α measured from the newest arrival exceeded
// math.MaxInt64 although the instant τ fits; τ was clamped relative to the
// arrival (centuries too early) and LinearForm disagreed with it.
func TestFreshnessPointBeyondMaxInt64FromNegativeArrival(t *testing.T) {
	d := newDet(t, bertier.Config{Estimator: chen.EstimatorConfig{Interval: 20 * time.Millisecond, WindowSize: 3},
		Gain: 0.5, Beta: 4, Phi: 1.5})
	start := time.Duration(math.MinInt64 + int64(time.Second))
	for i := range 5 {
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: start + time.Duration(i)*20*time.Millisecond})
	}
	a := time.Duration(-4_000_000_000_000_000_000) // 5.2e18 ns (165 years) later
	d.Observe(detector.Heartbeat{Seq: 5, HasSeq: true, Arrival: a})
	last, _ := d.Estimator().Last()
	f := d.ErrorFilter()
	rel := d.Estimator().ExpectedArrivalSince(last+1, a) + 4*f.SRTTNanos() + 1.5*f.RTTVARNanos()
	require.Greater(t, rel, float64(math.MaxInt64), "the case needs τ − A beyond math.MaxInt64")
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	want := float64(a) + rel
	assert.InEpsilon(t, want, float64(tau), 1e-12)
	off, scale, ok := d.LinearForm()
	require.True(t, ok)
	assert.InEpsilon(t, float64(tau), float64(off)+scale*1.5, 1e-12)
}
