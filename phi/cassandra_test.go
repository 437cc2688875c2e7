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

func newCassandra(t *testing.T, cfg phi.CassandraConfig) *phi.Cassandra {
	t.Helper()
	d, err := phi.NewCassandra(cfg)
	require.NoError(t, err)
	return d
}

func TestCassandraCommonTrace(t *testing.T) {
	// docs/algorithms.md, “φ accrual: Cassandra's variant”: a window of 5
	// pushes the initial interval out.
	d := newCassandra(t, phi.CassandraConfig{WindowSize: 5})
	feedCommon(d)
	assert.Equal(t, ms(102), d.Mean())
	cases := []struct{ elapsed, printed, exact float64 }{
		{100, 0.425779, 0.42577890382671747809},
		{120, 0.510935, 0.51093468459206097371},
		{150, 0.638668, 0.63866835574007621713},
		{200, 0.851558, 0.85155780765343495618},
	}
	for _, c := range cases {
		l := d.Level(ms(630 + c.elapsed))
		displayEq(t, c.printed, 6, l, "elapsed %v", c.elapsed)
		relEq(t, c.exact, l, "elapsed %v", c.elapsed)
	}
	// Θ = 8: t* = 8·102·ln 10 = 1878.909436, τ = 2508.909436.
	e, ok := d.ElapsedFor(8)
	require.True(t, ok)
	durEq(t, 1878.9094358831412782e6, e)
	tau, _ := d.FreshnessPoint()
	durEq(t, 2508.9094358831412782e6, tau)
	off, scale, ok := d.LinearForm()
	require.True(t, ok)
	assert.Equal(t, ms(630), off)
	relEq(t, 102e6*math.Ln10, scale)
	relEq(t, 1878.9094358831412782e6, 8*scale)

	// docs/algorithms.md, “φ accrual: Cassandra's variant”, ED FD: e_d = 1 −
	// 10^−φ = 0.770210 at elapsed 150; E = 0.99 is Θ = 2, t* = 469.727359.
	ed := 1 - math.Pow(10, -d.Level(ms(780)))
	displayEq(t, 0.770210, 6, ed)
	relEq(t, 0.77020972532698316361, ed)
	e, _ = d.ElapsedFor(2)
	durEq(t, 469.72735897078531954e6, e)
}

func TestCassandraDefaults(t *testing.T) {
	d := newCassandra(t, phi.CassandraConfig{})
	assert.Equal(t, phi.DefaultThreshold, d.Threshold())
	assert.Equal(t, phi.DefaultWindowSize, d.Window().Size())
	assert.Equal(t, 0.0, d.Level(time.Hour))
	_, ok := d.FreshnessPoint()
	assert.False(t, ok)
	_, _, ok = d.LinearForm()
	assert.False(t, ok)
	assert.True(t, d.WarmingUp())

	// First heartbeat: the initial interval 2 × 1 s.
	d.Observe(hb(0, 1000))
	assert.False(t, d.WarmingUp())
	assert.Equal(t, 2*time.Second, d.Mean())
	e, _ := d.ElapsedFor(8)
	durEq(t, 36841.361487904730944e6, e)

	// Intervals up to 2 s are recorded, longer ones not.
	d.Observe(hb(1, 3000))
	assert.Equal(t, 2, d.Window().Len())
	d.Observe(hb(2, 5001))
	assert.Equal(t, 2, d.Window().Len())
	tau, _ := d.FreshnessPoint()
	durEq(t, 5001e6+36841.361487904730944e6, tau, "T_last moved")

	for _, cfg := range []phi.CassandraConfig{
		{Threshold: -1}, {Threshold: math.NaN()}, {Threshold: math.Inf(1)},
		{WindowSize: -1}, {BootstrapInterval: new(time.Duration(-1))}, {MaxInterval: new(time.Duration(-1))}, {MinSamples: new(-1)}, {WindowSize: 3, MinSamples: new(4)},
	} {
		_, err := phi.NewCassandra(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}

func TestCassandraAwkwardInput(t *testing.T) {
	d := newCassandra(t, phi.CassandraConfig{WindowSize: 5, MinSamples: new(5)})
	feedCommon(d)
	assert.False(t, d.WarmingUp())
	tau, _ := d.FreshnessPoint()
	d.Observe(hb(6, 640))                           // duplicate
	d.Observe(hb(1, 650))                           // stale
	d.Observe(hb(7, 500))                           // backwards
	d.Observe(detector.Heartbeat{Arrival: ms(629)}) // backwards, no sequence number
	tau2, _ := d.FreshnessPoint()
	assert.Equal(t, tau, tau2)
	assert.Equal(t, 0.0, d.Level(ms(600)), "elapsed clamped at 0")
	assert.Equal(t, 0.0, d.Level(ms(630)))

	// Gap of hours: not recorded by default, recorded without a cap.
	d.Observe(hb(8, 630+2*3600e3))
	assert.Equal(t, ms(102), d.Mean())
	u := newCassandra(t, phi.CassandraConfig{MaxInterval: new(time.Duration(0))})
	u.Observe(hb(0, 0))
	u.Observe(hb(1, 2*3600e3))
	assert.Equal(t, (2*time.Hour+2*time.Second)/2, u.Mean())
	l := u.Level(math.MaxInt64)
	assert.False(t, math.IsInf(l, 0) || math.IsNaN(l))

	// Zero intervals (same instant, no sequence numbers): μ floored at 1 ns.
	z := newCassandra(t, phi.CassandraConfig{WindowSize: 2})
	for range 4 {
		z.Observe(detector.Heartbeat{Arrival: time.Second})
	}
	assert.Equal(t, time.Duration(0), z.Mean())
	l = z.Level(2 * time.Second)
	assert.False(t, math.IsInf(l, 0) || math.IsNaN(l))
	relEq(t, 1e9/math.Ln10, l)
}
