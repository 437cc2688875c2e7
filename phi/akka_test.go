package phi_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newAkka(t *testing.T, cfg phi.AkkaConfig) *phi.Akka {
	t.Helper()
	d, err := phi.NewAkka(cfg)
	require.NoError(t, err)
	return d
}

// akkaLiteral is Akka's own two-branch evaluation of the logistic level.
func akkaLiteral(y float64) float64 {
	e := math.Exp(-y * (1.5976 + 0.070566*y*y))
	if y > 0 {
		return -math.Log10(e / (1 + e))
	}
	return -math.Log10(1 - 1/(1+e))
}

func TestAkkaLevelMatchesAkkasFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		y := -3 + r.Float64()*18 // where Akka's evaluation keeps its digits
		assert.InEpsilon(t, akkaLiteral(y), phi.AkkaLevelOfY(y), 1e-12, "y %v", y)
	}
	// Where Akka's evaluation overflows to +Inf, the softplus stays finite.
	assert.True(t, math.IsInf(akkaLiteral(25), 1))
	l := phi.AkkaLevelOfY(25)
	assert.False(t, math.IsInf(l, 0))
	relEq(t, 25*(1.5976+0.070566*625)/math.Ln10, l)
	assert.Equal(t, 0.0, phi.AkkaLevelOfY(-100))
	assert.Equal(t, 0.0, phi.AkkaLevelOfY(math.Inf(-1)))
}

func TestAkkaYOfLevel(t *testing.T) {
	y := phi.AkkaYOfLevel(8)
	displayEq(t, 5.225987, 6, y)       // docs/algorithms.md, “φ accrual: Akka's variant”
	relEq(t, 5.2259866440935634263, y) // mpmath
	assert.InDelta(t, 0, phi.AkkaYOfLevel(math.Log10(2)), 1e-15)
	assert.Equal(t, math.Inf(-1), phi.AkkaYOfLevel(0))
	assert.Equal(t, math.Inf(1), phi.AkkaYOfLevel(math.Inf(1)))
	assert.True(t, math.IsNaN(phi.AkkaYOfLevel(math.NaN())))
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		level := 0.01 + r.Float64()*300
		assert.InEpsilon(t, level, phi.AkkaLevelOfY(phi.AkkaYOfLevel(level)), 1e-13, "level %v", level)
	}
}

// Akka's test values: mean 1000 ms, standard deviation 100 ms, no pause.
func TestAkkaGoldenValues(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{WindowSize: 4, AcceptablePause: new(time.Duration(0))})
	for i, at := range []float64{0, 900, 2000, 2900, 4000} {
		d.Observe(hb(uint64(i), at))
	}
	require.Equal(t, 4, d.Window().Len(), "the synthetic samples are pushed out")
	assert.Equal(t, time.Second, d.Mean())
	assert.Equal(t, 100*time.Millisecond, d.StdDev())
	cases := []struct{ elapsed, akka, exact float64 }{ // exact: mpmath
		{0, 0.0, 1.12998130521e-38},
		{500, 0.1, 2.17689222242e-8},
		{1000, 0.3, 0.301029995664},
		{1200, 1.6, 1.64282788549},
		{1400, 4.7, 4.73669458271},
		{1600, 10.8, 10.7826008583},
		{1700, 15.3, 15.3685256226},
	}
	for _, c := range cases {
		l := d.Level(ms(4000 + c.elapsed))
		assert.InDelta(t, c.akka, l, 0.1, "elapsed %v", c.elapsed)
		assert.InEpsilon(t, c.exact, l, 1e-10, "elapsed %v", c.elapsed)
	}
}

func TestAkkaDefaultsFirstHeartbeat(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{})
	assert.Equal(t, phi.DefaultThreshold, d.Threshold())
	assert.Equal(t, phi.DefaultAkkaWindowSize, d.Window().Size())
	assert.Equal(t, 0.0, d.Level(time.Hour))
	assert.True(t, d.WarmingUp())
	_, ok := d.FreshnessPoint()
	assert.False(t, ok)
	_, ok = d.ElapsedFor(8)
	assert.False(t, ok)

	d.Observe(hb(0, 10_000))
	assert.False(t, d.WarmingUp(), "no warm-up by default")
	require.Equal(t, 2, d.Window().Len())
	assert.Equal(t, 750*time.Millisecond, d.Window().At(0))
	assert.Equal(t, 1250*time.Millisecond, d.Window().At(1))
	assert.Equal(t, 4*time.Second, d.Mean(), "m' = 1 s + 3 s pause")
	assert.Equal(t, 250*time.Millisecond, d.StdDev())
	// docs/algorithms.md, “φ accrual: Akka's variant”: t* = 4000 + 250·5.225987
	// = 5306.5 ms (Akka: "about 5.5 s").
	e, ok := d.ElapsedFor(8)
	require.True(t, ok)
	durEq(t, 5306.4966610233908566e6, e)
	tau, _ := d.FreshnessPoint()
	assert.Equal(t, ms(10_000)+e, tau)

	// Regular 1 s heartbeats: σ falls below 100 ms, s' = 100 ms, t* = 4522.6 ms.
	for i := 1; i <= 20; i++ {
		d.Observe(hb(uint64(i), 10_000+float64(i)*1000))
	}
	assert.Equal(t, 100*time.Millisecond, d.StdDev())
	assert.Equal(t, 4*time.Second, d.Mean())
	e, _ = d.ElapsedFor(8)
	durEq(t, 4522.5986644093563426e6, e)
}

func TestAkkaCommonTrace(t *testing.T) {
	// docs/algorithms.md, “φ accrual: Akka's variant”, pause 0 and min_std ≤ σ;
	// a history of 5 leaves only the five intervals once the synthetic samples
	// are pushed out.
	d := newAkka(t, phi.AkkaConfig{WindowSize: 5, AcceptablePause: new(time.Duration(0)),
		MinStdDev: new(time.Millisecond), BootstrapInterval: new(100 * time.Millisecond)})
	feedCommon(d)
	require.Equal(t, []time.Duration{ms(105), ms(93), ms(122), ms(82), ms(108)},
		[]time.Duration{d.Window().At(0), d.Window().At(1), d.Window().At(2), d.Window().At(3), d.Window().At(4)})
	cases := []struct{ elapsed, printed, exact float64 }{
		{100, 0.252989, 0.25298903924334181563},
		{120, 1.031062, 1.0310617587698895737},
		{150, 3.792042, 3.7920421908645344758},
		{200, 16.440902, 16.440901799510267795},
	}
	for _, c := range cases {
		l := d.Level(ms(630 + c.elapsed))
		displayEq(t, c.printed, 6, l, "elapsed %v", c.elapsed)
		relEq(t, c.exact, l, "elapsed %v", c.elapsed)
	}
	relEq(t, 173.11951505786611673e6, 102e6+d.Window().StdDev()*phi.AkkaYOfLevel(8))
	e, _ := d.ElapsedFor(8)
	durEq(t, 173.11951505786611673e6, e)
	tau, _ := d.FreshnessPoint()
	durEq(t, 803.11951505786611673e6, tau)
	assert.False(t, d.Suspected(tau))
	assert.True(t, d.Suspected(tau+1))
}

// The update rule: an interval is recorded only if φ < Θ at its arrival.
func TestAkkaUpdateRule(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{MinSamples: new(1)})
	d.Observe(hb(0, 0))
	assert.True(t, d.WarmingUp())
	tau, _ := d.FreshnessPoint() // 5306.5 ms
	d.Observe(detector.Heartbeat{Seq: 1, HasSeq: true, Arrival: tau})
	assert.Equal(t, 2, d.Window().Len(), "φ = Θ at arrival: not recorded")
	assert.True(t, d.WarmingUp())
	tau2, _ := d.FreshnessPoint()
	assert.Equal(t, 2*tau, tau2, "T_last moved, the history did not")
	d.Observe(detector.Heartbeat{Seq: 2, HasSeq: true, Arrival: tau2 - 1})
	assert.Equal(t, 3, d.Window().Len(), "φ < Θ: recorded")
	assert.False(t, d.WarmingUp())

	// A gap of hours ends while suspected: never recorded, nothing overflows.
	d.Observe(detector.Heartbeat{Seq: 3, HasSeq: true, Arrival: tau2 + 5*time.Hour})
	assert.Equal(t, 3, d.Window().Len())
	l := d.Level(math.MaxInt64)
	assert.False(t, math.IsInf(l, 0) || math.IsNaN(l))

	// The history depends on Θ: with Θ = 16 the same arrival is recorded.
	h := newAkka(t, phi.AkkaConfig{Threshold: 16})
	h.Observe(hb(0, 0))
	h.Observe(detector.Heartbeat{Seq: 1, HasSeq: true, Arrival: tau})
	assert.Equal(t, 3, h.Window().Len())
}

func TestAkkaAwkwardInput(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{BootstrapInterval: new(100 * time.Millisecond), AcceptablePause: new(time.Duration(0)), MinStdDev: new(time.Millisecond)})
	feedCommon(d)
	tau, _ := d.FreshnessPoint()
	d.Observe(hb(6, 640))                           // duplicate
	d.Observe(hb(2, 650))                           // stale
	d.Observe(hb(7, 600))                           // backwards
	d.Observe(detector.Heartbeat{Arrival: ms(620)}) // backwards, no sequence number
	assert.Equal(t, 7, d.Window().Len())
	tau2, _ := d.FreshnessPoint()
	assert.Equal(t, tau, tau2)
	assert.Equal(t, d.Level(ms(630)), d.Level(ms(0)), "elapsed clamped at 0")

	// Zero variance: s' = min std deviation.
	z := newAkka(t, phi.AkkaConfig{WindowSize: 3, AcceptablePause: new(time.Duration(0)), BootstrapInterval: new(100 * time.Millisecond)})
	for i := range 10 {
		z.Observe(hb(uint64(i), float64(100*i)))
	}
	assert.Equal(t, 0.0, z.Window().StdDev())
	assert.Equal(t, phi.DefaultAkkaMinStdDev, z.StdDev())

	// A burst of losses shorter than t* is one long recorded interval.
	d.Observe(hb(9, 630+170))
	assert.Equal(t, ms(170), d.Window().At(d.Window().Len()-1))
}

func TestAkkaConfigErrors(t *testing.T) {
	for _, cfg := range []phi.AkkaConfig{
		{Threshold: -1}, {Threshold: math.NaN()}, {Threshold: math.Inf(1)},
		{WindowSize: -1}, {MinStdDev: new(time.Duration(-1))}, {BootstrapInterval: new(time.Duration(-1))},
		{MinSamples: new(-1)}, {WindowSize: 10, MinSamples: new(11)},
	} {
		_, err := phi.NewAkka(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}

// The softplus shortcuts (|a| > 40) agree with the full formula.
func TestAkkaLevelShortcuts(t *testing.T) {
	for _, y := range []float64{-12, -9.5, -9, -8.9, 6.5, 6.6, 7, 8} {
		a := y * (1.5976 + 0.070566*y*y)
		want := math.Log1p(math.Exp(a)) / math.Ln10
		if a > 0 {
			want = (a + math.Log1p(math.Exp(-a))) / math.Ln10
		}
		assert.InEpsilon(t, want, phi.AkkaLevelOfY(y), 1e-15, "y %v (a %v)", y, a)
	}
}

func TestAkkaFormGivesEveryThresholdsCrossing(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{Threshold: 8, MinStdDev: new(ms(10)), AcceptablePause: new(ms(50)), BootstrapInterval: new(ms(100))})
	_, _, _, ok := d.Form()
	assert.False(t, ok, "no form before the first heartbeat")
	feedCommon(d)
	last, mean, sd, ok := d.Form()
	require.True(t, ok)
	tau, _ := d.FreshnessPoint()
	tstar := phi.AkkaCrossing(mean, sd, phi.AkkaYOfLevel(8))
	assert.Equal(t, tau, last+time.Duration(math.Ceil(tstar)))
	// The crossing is where the level reaches Θ.
	assert.InDelta(t, 8, d.Level(last+time.Duration(math.Round(tstar))), 1e-6)
	assert.Zero(t, phi.AkkaCrossing(mean, sd, -1e9), "clamped at 0")
}

// φ between 3 and 12 at the arrival 65 ms late: only Θ = 12 records it.
func TestAkkaForkFollowsAReplayWithItsThreshold(t *testing.T) {
	cfg := phi.AkkaConfig{Threshold: 12, MinStdDev: new(ms(10)), AcceptablePause: new(ms(20)), BootstrapInterval: new(ms(100))}
	c3 := cfg
	c3.Threshold = 3
	checkForkFollows(t, newAkka(t, cfg), newAkka(t, c3), jitteredArrivals(5, 65))
}
