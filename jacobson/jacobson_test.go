package jacobson_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// See docs/algorithms.md, “Conventions and the common trace”.
var commonArrivals = []float64{120, 225, 318, 440, 522, 630}

func hb(seq uint64, at float64) detector.Heartbeat {
	return detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: ms(at)}
}

func newDet(t testing.TB, cfg jacobson.Config) *jacobson.Detector {
	d, err := jacobson.New(cfg)
	require.NoError(t, err)
	return d
}

func TestDetectorCommonTrace(t *testing.T) {
	d := newDet(t, jacobson.Config{})
	_, ok := d.FreshnessPoint()
	assert.False(t, ok)
	assert.False(t, d.Suspected(ms(1e9)))
	wantTO := []float64{1000, 315, 273, 251.4375, 235.8671875, 208.4189453125}
	for i, a := range commonArrivals {
		d.Observe(hb(uint64(i+1), a))
		assert.InDelta(t, wantTO[i]*1e6, float64(d.Timeout()), 0.5, "TO after heartbeat %d", i+1)
		assert.False(t, d.WarmingUp())
	}
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	// See docs/algorithms.md, “Jacobson's estimator”: τ = 630 + 208.4189453.
	assert.InEpsilon(t, 838.4189453*1e6, float64(tau), tol)
	assert.False(t, d.Suspected(tau))
	assert.True(t, d.Suspected(tau+1))

	off, scale, ok := d.LinearForm()
	require.True(t, ok)
	assert.InEpsilon(t, 733.4814453*1e6, float64(off), tol)
	assert.InEpsilon(t, 26.234375e6, scale, tol)
	assert.InDelta(t, float64(tau), float64(off)+scale*d.K(), 1)
}

func TestDetectorLinearFormFalseBeforeSampleAndWhileClamped(t *testing.T) {
	d := newDet(t, jacobson.Config{MinTimeout: ms(250), MaxTimeout: ms(300)})
	d.Observe(hb(1, 120))
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, ms(420), tau, "TO_init 1 s clamped to TO_max")
	_, _, ok := d.LinearForm()
	assert.False(t, ok)
	d.Observe(hb(2, 225)) // TO 315 → 300
	tau, _ = d.FreshnessPoint()
	assert.Equal(t, ms(525), tau)
	_, _, ok = d.LinearForm()
	assert.False(t, ok)
	d.Observe(hb(3, 318)) // TO 273: inside the clamp, linear
	_, _, ok = d.LinearForm()
	assert.True(t, ok)
	d.Observe(hb(4, 440)) // 251.4375
	d.Observe(hb(5, 522)) // 235.8671875 → 250
	tau, _ = d.FreshnessPoint()
	assert.Equal(t, ms(772), tau)
	_, _, ok = d.LinearForm()
	assert.False(t, ok)
}

func TestDetectorConfig(t *testing.T) {
	d := newDet(t, jacobson.Config{})
	assert.Equal(t, jacobson.DefaultK, d.K())
	for _, cfg := range []jacobson.Config{
		{K: new(float64(-1))}, {K: new(math.Inf(1))}, {K: new(nan())}, {InitialTimeout: new(time.Duration(-1))}, {MinTimeout: -1}, {MaxTimeout: -1},
		{MinTimeout: ms(200), MaxTimeout: ms(100)}, {Estimator: jacobson.EstimatorConfig{Gain: 3}},
	} {
		_, err := jacobson.New(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}

func TestDetectorDivideBySeqGap(t *testing.T) {
	plain := newDet(t, jacobson.Config{})
	div := newDet(t, jacobson.Config{DivideBySeqGap: true})
	for _, h := range []detector.Heartbeat{hb(1, 100), hb(2, 200), hb(4, 400)} {
		plain.Observe(h)
		div.Observe(h)
	}
	// samples 100, 200 versus 100, 100.
	assert.InEpsilon(t, 0.875*100e6+0.125*200e6, plain.Estimator().SRTTNanos(), tol)
	assert.InEpsilon(t, 100e6, div.Estimator().SRTTNanos(), tol)
	assert.InEpsilon(t, 0.75*50e6, div.Estimator().RTTVARNanos(), tol)
}

// Awkward input, one documented choice each (see the Detector doc).
func TestDetectorAwkwardInput(t *testing.T) {
	t.Run("single heartbeat uses TO_init", func(t *testing.T) {
		d := newDet(t, jacobson.Config{InitialTimeout: new(ms(300))})
		d.Observe(hb(0, 50))
		tau, ok := d.FreshnessPoint()
		assert.True(t, ok)
		assert.Equal(t, ms(350), tau)
		assert.False(t, d.WarmingUp())
	})
	t.Run("zero variance decays to the interval, floor applies", func(t *testing.T) {
		d := newDet(t, jacobson.Config{MinTimeout: ms(150)})
		free := newDet(t, jacobson.Config{})
		for i := range 400 {
			d.Observe(hb(uint64(i), float64(100*i)))
			free.Observe(hb(uint64(i), float64(100*i)))
		}
		assert.Equal(t, ms(150), d.Timeout())
		assert.Equal(t, ms(100), free.Timeout())
		assert.False(t, math.IsNaN(free.Estimator().RTTVARNanos()))
		assert.GreaterOrEqual(t, free.Estimator().RTTVARNanos(), 0.0)
	})
	t.Run("duplicates and stale numbers are ignored", func(t *testing.T) {
		d := newDet(t, jacobson.Config{})
		d.Observe(hb(5, 100))
		d.Observe(hb(6, 200))
		before, _ := d.FreshnessPoint()
		d.Observe(hb(6, 210)) // duplicate
		d.Observe(hb(4, 220)) // stale, out of order
		after, _ := d.FreshnessPoint()
		assert.Equal(t, before, after)
		assert.Equal(t, 1, d.Estimator().Samples())
	})
	t.Run("sender restart resets", func(t *testing.T) {
		d := newDet(t, jacobson.Config{InitialTimeout: new(ms(500))})
		for i := range 300 {
			d.Observe(hb(uint64(1000+i), float64(100*i)))
		}
		d.Observe(hb(0, 30_100)) // 1299 → 0: restart
		assert.Equal(t, 0, d.Estimator().Samples())
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, ms(30_600), tau)
		d.Observe(hb(1, 30_200))
		assert.Equal(t, 1, d.Estimator().Samples())
	})
	t.Run("arrival going backwards is ignored", func(t *testing.T) {
		d := newDet(t, jacobson.Config{})
		d.Observe(detector.Heartbeat{Arrival: ms(500)})
		d.Observe(detector.Heartbeat{Arrival: ms(600)})
		before, _ := d.FreshnessPoint()
		d.Observe(detector.Heartbeat{Arrival: ms(400)})
		d.Observe(hb(9, 450))
		after, _ := d.FreshnessPoint()
		assert.Equal(t, before, after)
	})
	t.Run("gap of hours is one sample, capped by TO_max", func(t *testing.T) {
		d := newDet(t, jacobson.Config{MaxTimeout: 10 * time.Second})
		d.Observe(hb(1, 0))
		d.Observe(hb(2, 100))
		d.Observe(hb(3, 100+3*3600e3)) // 3 h later, no loss: a pause
		assert.Equal(t, 10*time.Second, d.Timeout())
		assert.False(t, math.IsNaN(d.Estimator().SRTTNanos()))
	})
	t.Run("burst of losses", func(t *testing.T) {
		plain := newDet(t, jacobson.Config{})
		div := newDet(t, jacobson.Config{DivideBySeqGap: true})
		for _, h := range []detector.Heartbeat{hb(1, 0), hb(2, 100), hb(3, 200), hb(53, 5200)} {
			plain.Observe(h)
			div.Observe(h)
		}
		assert.Greater(t, plain.Timeout(), 2*time.Second, "one 5 s interval counted")
		assert.InEpsilon(t, 100e6, div.Estimator().SRTTNanos(), tol, "averaged over the 50 lost")
	})
}

// Property: on random streams with jitter, loss, duplicates, reordering and
// restarts, SRTT and RTTVAR stay finite, RTTVAR and TO non-negative, over
// random TO_min and both sample rules (Suspected(t) ⇔ t > τ and the linear
// form are checked by detectortest in TestConformance).
func TestDetectorProperties(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for seed := uint64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		d := newDet(t, jacobson.Config{MinTimeout: ms(float64(rng.IntN(200))), DivideBySeqGap: seed%2 == 0})
		seq, at := uint64(rng.IntN(1000)), time.Duration(0)
		for range n {
			at += time.Duration(rng.ExpFloat64() * 100e6)
			h := randomHeartbeat(rng, &seq, at)
			d.Observe(h)
			est := d.Estimator()
			require.False(t, math.IsNaN(est.SRTTNanos()) || math.IsNaN(est.RTTVARNanos()))
			require.GreaterOrEqual(t, est.RTTVARNanos(), 0.0)
			require.GreaterOrEqual(t, d.Timeout(), time.Duration(0))
		}
	}
}

// randomHeartbeat advances *seq by 1 to 4 (losses) and sometimes returns a
// duplicate, a stale number, a missing number or a restart.
func randomHeartbeat(rng *rand.Rand, seq *uint64, at time.Duration) detector.Heartbeat {
	switch x := rng.IntN(100); {
	case x < 5:
		return detector.Heartbeat{Seq: *seq, HasSeq: true, Arrival: at}
	case x < 10 && *seq > 3:
		return detector.Heartbeat{Seq: *seq - uint64(rng.IntN(3)) - 1, HasSeq: true, Arrival: at}
	case x < 12:
		return detector.Heartbeat{Arrival: at - time.Duration(rng.IntN(2))*time.Second}
	case x < 13:
		*seq = 0
		return detector.Heartbeat{Seq: 0, HasSeq: true, Arrival: at}
	}
	*seq += uint64(1 + rng.IntN(4)/3)
	return detector.Heartbeat{Seq: *seq, HasSeq: true, Arrival: at}
}

func BenchmarkObserveSuspected(b *testing.B) {
	d, _ := jacobson.New(jacobson.Config{MinTimeout: 200 * time.Millisecond})
	detectortest.Benchmark(b, d)
}

// Instants near the ends of the time.Duration range: τ saturates instead of
// wrapping to a negative instant, and an inter-arrival time wider than
// math.MaxInt64/2 on either side of zero is still measured right.
func TestDetectorDurationExtremes(t *testing.T) {
	t.Run("huge TO_init near the end of the range", func(t *testing.T) {
		d := newDet(t, jacobson.Config{InitialTimeout: new(time.Duration(math.MaxInt64))})
		d.Observe(hb(0, 1000))
		tau, ok := d.FreshnessPoint()
		require.True(t, ok)
		assert.Equal(t, time.Duration(math.MaxInt64), tau)
		assert.False(t, d.Suspected(ms(2000)), "a τ that wrapped would suspect at once")
		assert.Equal(t, time.Duration(math.MaxInt64), d.Timeout())
	})
	t.Run("arrivals close to math.MaxInt64", func(t *testing.T) {
		d := newDet(t, jacobson.Config{})
		start := time.Duration(math.MaxInt64) - 2*time.Second
		for i := range 15 {
			a := start + time.Duration(i)*100*time.Millisecond
			d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
			assert.False(t, d.Suspected(a), "heartbeat %d", i)
		}
	})
	t.Run("interval from near MinInt64 to near MaxInt64", func(t *testing.T) {
		d := newDet(t, jacobson.Config{})
		d.Observe(hb(0, 0))
		d.Observe(detector.Heartbeat{Seq: 1, HasSeq: true, Arrival: math.MinInt64 / 2})
		d.Observe(detector.Heartbeat{Seq: 2, HasSeq: true, Arrival: math.MaxInt64 / 2})
		// The second heartbeat went backwards and was ignored; the third
		// gives one sample of MaxInt64/2 ns.
		assert.InEpsilon(t, float64(math.MaxInt64/2), d.Estimator().SRTTNanos(), 1e-12)
		tau, _ := d.FreshnessPoint()
		assert.Equal(t, time.Duration(math.MaxInt64), tau)

		e := newDet(t, jacobson.Config{})
		e.Observe(detector.Heartbeat{Arrival: math.MinInt64 + 1})
		e.Observe(detector.Heartbeat{Arrival: math.MaxInt64 - 1})
		assert.InEpsilon(t, float64(math.MaxUint64-2), e.Estimator().SRTTNanos(), 1e-12,
			"the sample is positive, not a wrapped negative difference")
		tau, _ = e.FreshnessPoint()
		assert.Equal(t, time.Duration(math.MaxInt64), tau)
	})
}

// The conformance kit on the defaults, a clamped detector dividing by the
// sequence gap, and a small K with a short TO_init.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]jacobson.Config{
		"default": {},
		"clamped-divide-by-gap": {MinTimeout: 150 * time.Millisecond, MaxTimeout: 2 * time.Second,
			DivideBySeqGap: true, RestartJump: new(uint64(10))},
		"small-K": {K: new(float64(0.5)), InitialTimeout: new(200 * time.Millisecond)},
	}, jacobson.New, func(_ jacobson.Config, d *jacobson.Detector) detectortest.Config {
		return detectortest.Config{LinearParam: d.K(), NoWarmUp: true}
	})
}

// K = 0 is sayable (new(0.0)): TO = SRTT. Heartbeats at 0 and 1 s give the
// first sample R = 1 s, SRTT = 1 s, RTTVAR = 500 ms, so τ = 1 s + 1 s
// (the default K = 4 would give 1 s + 1 s + 4·500 ms).
func TestDetectorKZero(t *testing.T) {
	for _, c := range []struct {
		k   *float64
		tau time.Duration
	}{{new(0.0), 2 * time.Second}, {nil, 4 * time.Second}} {
		d := newDet(t, jacobson.Config{K: c.k})
		d.Observe(detector.Heartbeat{Arrival: 0})
		d.Observe(detector.Heartbeat{Arrival: time.Second})
		tau, ok := d.FreshnessPoint()
		require.True(t, ok)
		assert.Equal(t, c.tau, tau)
	}
}
