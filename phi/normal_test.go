package phi_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newNormal(t *testing.T, cfg phi.NormalConfig) *phi.Normal {
	t.Helper()
	d, err := phi.NewNormal(cfg)
	require.NoError(t, err)
	return d
}

func TestNormalCommonTrace(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{SkipIfSuspected: new(false)}) // for LinearForm
	feedCommon(d)
	require.Equal(t, 5, d.Window().Len())
	relEq(t, 102e6, d.Window().Mean())
	relEq(t, 13.60882066896320006e6, d.Window().StdDev(), "population σ")

	// docs/algorithms.md, “φ accrual: normal model”, exact φ column (printed to
	// 6 decimals; exact digits from mpmath).
	cases := []struct{ elapsed, printed, exact float64 }{
		{100, 0.253039, 0.25303935665744496297},
		{120, 1.031646, 1.0316463623710544199},
		{150, 3.677678, 3.6776775886219854003},
		{200, 12.525203, 12.525202938257772033},
	}
	for _, c := range cases {
		l := d.Level(ms(630 + c.elapsed))
		displayEq(t, c.printed, 6, l, "elapsed %v", c.elapsed)
		relEq(t, c.exact, l, "elapsed %v", c.elapsed)
	}

	// Θ = 8: t* = 102 + 13.608821·5.612001 = 178.372719, τ = 808.372719.
	const tstar = 178.37271852597305943e6
	relEq(t, tstar, d.Window().Mean()+d.Window().StdDev()*phi.ZOfLevel(8))
	e, ok := d.ElapsedFor(8)
	require.True(t, ok)
	durEq(t, tstar, e)
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	durEq(t, 808.37271852597305943e6, tau)
	assert.GreaterOrEqual(t, float64(tau), 808.37271852597305943e6, "τ rounds up")
	assert.False(t, d.Suspected(tau))
	assert.True(t, d.Suspected(tau+1))
	assert.Equal(t, 8.0, d.Threshold())

	// Linear form: τ = Offset + Scale·z(Θ), for any Θ, to the nanosecond.
	off, scale, ok := d.LinearForm()
	require.True(t, ok)
	assert.Equal(t, ms(732), off)
	relEq(t, 13.60882066896320006e6, scale)
	durEq(t, float64(tau), off+time.Duration(scale*phi.ZOfLevel(8)))
	for _, th := range []float64{0.5, 3, 16, 300} {
		e, ok := d.ElapsedFor(th)
		require.True(t, ok)
		durEq(t, float64(off-ms(630))+scale*phi.ZOfLevel(th), e, "Θ = %v", th)
	}
}

func TestNormalDefaultsAndErrors(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{})
	assert.Equal(t, phi.DefaultThreshold, d.Threshold())
	assert.Equal(t, phi.DefaultWindowSize, d.Window().Size())
	assert.Equal(t, 0.0, d.Level(time.Hour), "level 0 before the first heartbeat")
	_, ok := d.FreshnessPoint()
	assert.False(t, ok)
	_, ok = d.ElapsedFor(8)
	assert.False(t, ok)
	_, _, ok = d.LinearForm()
	assert.False(t, ok)
	assert.True(t, d.WarmingUp())
	assert.False(t, d.Suspected(time.Hour))

	bad := []phi.NormalConfig{
		{WindowSize: -1},
		{Threshold: -1},
		{Threshold: math.NaN()},
		{Threshold: math.Inf(1)},
		{MinStdDev: new(time.Duration(-1))},
		{BootstrapInterval: new(time.Duration(-1))},
		{MaxInterval: new(time.Duration(-1))},
		{MinSamples: new(-1)},
		{WindowSize: 10, MinSamples: new(11)},
	}
	for _, cfg := range bad {
		_, err := phi.NewNormal(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}

// A single heartbeat: the bootstrap μ = m, σ = m/4 (default m = 1 s) applies
// until two intervals are known, and the detector is warming up.
func TestNormalBootstrap(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{})
	d.Observe(hb(0, 1000))
	assert.True(t, d.WarmingUp())
	assert.Equal(t, time.Second, d.Mean())
	assert.Equal(t, 250*time.Millisecond, d.StdDev())
	relEq(t, math.Log10(2), d.Level(ms(2000)), "φ = log10 2 at the mean")
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	durEq(t, 2000e6+250e6*5.6120012441747887315, tau)
	d.Observe(hb(1, 1100))
	assert.True(t, d.WarmingUp(), "one interval: still the bootstrap")
	assert.Equal(t, time.Second, d.Mean())
	d.Observe(hb(2, 1200))
	assert.False(t, d.WarmingUp())
	assert.Equal(t, 100*time.Millisecond, d.Mean())

	w := newNormal(t, phi.NormalConfig{WindowSize: 4, MinSamples: new(4), BootstrapInterval: new(100 * time.Millisecond)})
	for i := range 4 {
		w.Observe(hb(uint64(i), float64(100*i)))
		assert.True(t, w.WarmingUp(), "%d intervals", i)
	}
	w.Observe(hb(4, 400))
	assert.False(t, w.WarmingUp())
}

// Zero variance: σ_eff = σ_min, by default μ/100.
func TestNormalZeroVariance(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{})
	for i := range 10 {
		d.Observe(hb(uint64(i), float64(100*i)))
	}
	assert.Equal(t, 0.0, d.Window().StdDev())
	assert.Equal(t, time.Millisecond, d.StdDev())
	e, _ := d.ElapsedFor(8)
	durEq(t, 100e6+1e6*5.6120012441747887315, e)
	assert.Equal(t, 0.0, d.Level(ms(900)))
	relEq(t, math.Log10(2), d.Level(ms(1000)))

	f := newNormal(t, phi.NormalConfig{MinStdDev: new(5 * time.Millisecond)})
	for i := range 10 {
		f.Observe(hb(uint64(i), float64(100*i)))
	}
	e, _ = f.ElapsedFor(8)
	durEq(t, 100e6+5e6*5.6120012441747887315, e)

	// All intervals zero (a burst without sequence numbers): σ_eff ≥ 1 ns,
	// levels finite.
	z := newNormal(t, phi.NormalConfig{})
	for range 5 {
		z.Observe(detector.Heartbeat{Arrival: time.Second})
	}
	assert.Equal(t, 4, z.Window().Len())
	l := z.Level(2 * time.Second)
	assert.False(t, math.IsInf(l, 0) || math.IsNaN(l))
	assert.Greater(t, l, 1e15)
}

// Duplicates and stale sequence numbers are ignored; so is an arrival before
// T_last. Heartbeats without sequence numbers all count.
func TestNormalDuplicatesStaleAndBackwards(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{})
	feedCommon(d)
	tau, _ := d.FreshnessPoint()
	d.Observe(hb(6, 640)) // duplicate
	d.Observe(hb(4, 650)) // stale
	d.Observe(hb(0, 660)) // 0 is a valid, stale number
	assert.Equal(t, 5, d.Window().Len())
	tau2, _ := d.FreshnessPoint()
	assert.Equal(t, tau, tau2)

	d.Observe(hb(7, 600)) // new number, but the clock went backwards
	assert.Equal(t, 5, d.Window().Len())
	tau2, _ = d.FreshnessPoint()
	assert.Equal(t, tau, tau2)
	assert.Equal(t, d.Level(ms(630)), d.Level(ms(500)), "now before T_last counts as elapsed 0")
	d.Observe(hb(8, 730)) // the gap is measured from T_last = 630
	assert.Equal(t, 6, d.Window().Len())
	assert.Equal(t, ms(100), d.Window().At(5))

	n := newNormal(t, phi.NormalConfig{})
	n.Observe(detector.Heartbeat{Arrival: ms(100)})
	n.Observe(detector.Heartbeat{Arrival: ms(50)}) // backwards: ignored
	n.Observe(detector.Heartbeat{Arrival: ms(200)})
	n.Observe(detector.Heartbeat{Arrival: ms(200)}) // same instant: a zero interval
	assert.Equal(t, 2, n.Window().Len())
	assert.Equal(t, ms(100), n.Window().At(0))
	assert.Equal(t, time.Duration(0), n.Window().At(1))
}

// A gap of hours is not learnt by default (it ends after τ: Akka's rule);
// with SkipIfSuspected new(false) it enters the window unless capped, and
// nothing overflows.
func TestNormalGapOfHours(t *testing.T) {
	def := newNormal(t, phi.NormalConfig{})
	feedCommon(def)
	def.Observe(hb(7, 630+3*3600e3))
	assert.Equal(t, 5, def.Window().Len(), "default: the gap is not recorded")

	d := newNormal(t, phi.NormalConfig{SkipIfSuspected: new(false)})
	feedCommon(d)
	d.Observe(hb(7, 630+3*3600e3))
	assert.Equal(t, 6, d.Window().Len())
	assert.Greater(t, d.StdDev(), time.Hour)
	for _, now := range []time.Duration{0, time.Hour, 100 * time.Hour, math.MaxInt64} {
		l := d.Level(now)
		assert.False(t, math.IsNaN(l) || math.IsInf(l, 0) || l < 0, "level %v at %v", l, now)
	}
	e, ok := d.ElapsedFor(300)
	assert.True(t, ok)
	assert.Greater(t, e, 10*time.Hour)

	c := newNormal(t, phi.NormalConfig{MaxInterval: new(time.Second), SkipIfSuspected: new(false)})
	feedCommon(c)
	tau, _ := c.FreshnessPoint()
	c.Observe(hb(7, 630+3*3600e3))
	assert.Equal(t, 5, c.Window().Len(), "capped: not recorded")
	tau2, _ := c.FreshnessPoint()
	assert.Equal(t, tau+3*time.Hour, tau2, "T_last moved, μ and σ did not")

	// A tiny σ and a far-future now: the level is huge but finite, and a
	// crossing time beyond the Duration range is reported as not reached.
	s := newNormal(t, phi.NormalConfig{WindowSize: 1, MinStdDev: new(time.Duration(1))})
	s.Observe(hb(0, 0))
	s.Observe(hb(1, 1))
	l := s.Level(math.MaxInt64)
	assert.False(t, math.IsInf(l, 0) || math.IsNaN(l))
	b := newNormal(t, phi.NormalConfig{WindowSize: 1, MinStdDev: new(time.Duration(math.MaxInt64 / 4))})
	b.Observe(hb(0, 0))
	b.Observe(hb(1, 1))
	_, ok = b.ElapsedFor(300)
	assert.False(t, ok)
	tau, ok = b.FreshnessPoint()
	assert.True(t, ok)
	assert.Equal(t, time.Duration(math.MaxInt64), tau, "τ saturates")
}

// A burst of losses: by default one long interval; with DivideBySeqGap the
// interval per heartbeat sent.
func TestNormalLossBurst(t *testing.T) {
	for _, div := range []bool{false, true} {
		d := newNormal(t, phi.NormalConfig{DivideBySeqGap: div, SkipIfSuspected: new(false)})
		feedCommon(d)
		d.Observe(hb(11, 1130)) // 4 heartbeats lost: 500 ms for 5 sequence numbers
		want := ms(500)
		if div {
			want = ms(100)
		}
		assert.Equal(t, want, d.Window().At(5), "DivideBySeqGap %v", div)
		d.Observe(detector.Heartbeat{Arrival: ms(1330)}) // no sequence number: gap 1
		assert.Equal(t, ms(200), d.Window().At(6))
	}
}

// SkipIfSuspected: an interval that ends after τ is not recorded, and the
// linear form is then unavailable.
func TestNormalSkipIfSuspected(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{}) // on by default
	feedCommon(d)
	tau, _ := d.FreshnessPoint() // 808.372719 ms
	_, _, ok := d.LinearForm()
	assert.False(t, ok)
	d.Observe(hb(7, float64(tau)/1e6)) // exactly at τ: trusted, recorded
	assert.Equal(t, 6, d.Window().Len())
	tau, _ = d.FreshnessPoint()
	e, _ := d.ElapsedFor(8)
	d.Observe(detector.Heartbeat{Seq: 8, HasSeq: true, Arrival: tau + 1}) // suspected: skipped
	assert.Equal(t, 6, d.Window().Len())
	next, _ := d.FreshnessPoint()
	assert.Equal(t, tau+1+e, next, "only T_last moved")
}

// The acceptable pause has Akka's semantics: it is added to the mean.
// Common trace (μ = 102 ms, σ = 13.608821 ms, T_last = 630 ms), pause 50 ms:
// τ = 630 + 102 + 50 + 13.608821·z(8) = 858.372719 ms, and φ at T_last +
// 152 ms equals the pause-free φ at T_last + 102 ms, −log10 Q(0) = log10 2.
func TestNormalAcceptablePause(t *testing.T) {
	d := newNormal(t, phi.NormalConfig{AcceptablePause: new(ms(50)), SkipIfSuspected: new(false)})
	feedCommon(d)
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	durEq(t, 858.37271852597305943e6, tau)
	relEq(t, math.Log10(2), d.Level(ms(630+152)))
	assert.Equal(t, ms(152), d.Mean(), "μ + pause, Akka's m'")
	off, _, ok := d.LinearForm()
	require.True(t, ok)
	assert.Equal(t, ms(782), off)
	_, err := phi.NewNormal(phi.NormalConfig{AcceptablePause: new(time.Duration(-1))})
	assert.ErrorContains(t, err, "AcceptablePause")
}

// After every heartbeat, recorded, skipped, relearnt in a run or dropped,
// μ and σ_eff are the window's own statistics (or the bootstrap's), with
// the pause and the floor: Observe recomputes only τ when the window did
// not change, which must leave nothing stale. The stream has jitter that
// low thresholds suspect, outages, and a step to a slower rate that the
// relearn rule learns.
func TestNormalFormIsTheWindowsAfterEveryHeartbeat(t *testing.T) {
	cfgs := map[string]phi.NormalConfig{
		"low":        {Threshold: 0.5, WindowSize: 50},
		"floor":      {Threshold: 2, WindowSize: 50, MinStdDev: new(5 * time.Millisecond), AcceptablePause: new(time.Millisecond)},
		"cap-divide": {Threshold: 1, WindowSize: 50, MaxInterval: new(150 * time.Millisecond), DivideBySeqGap: true, RelearnAfter: new(3)},
	}
	for name, cfg := range cfgs {
		d := newNormal(t, cfg)
		at, seq := 0.0, uint64(0)
		for i := range 3000 {
			step := 100.0
			if i > 2000 {
				step = 230 // a slower rate for good
			}
			at += step + 20*math.Sin(float64(i)*1.7)
			seq++
			if i%97 == 0 {
				at += 900 // an outage
				seq += 5
			}
			d.Observe(hb(seq, at))
			if i%13 == 0 {
				d.Observe(hb(seq, at)) // a duplicate: dropped
			}
			_, mean, sd, ok := d.Form()
			require.True(t, ok)
			w := d.Window()
			wm, wsd := 1e9, 1e9/4 // the bootstrap's (BootstrapInterval 1 s)
			if w.Len() >= 2 {
				wm, wsd = w.MeanStdDev()
			}
			floor := 0.01 * wm
			if cfg.MinStdDev != nil {
				floor = float64(*cfg.MinStdDev)
			}
			pause := 0.0
			if cfg.AcceptablePause != nil {
				pause = float64(*cfg.AcceptablePause)
			}
			require.Equal(t, wm+pause, mean, "%s, heartbeat %d", name, i)
			require.Equal(t, max(wsd, floor, 1), sd, "%s, heartbeat %d", name, i)
		}
	}
}
