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

// Zero is sayable (package detector, “Configuration: zero and defaults”):
// new(0) is zero, nil the default.

// Akka with an acceptable pause of 0 has no pause: after the first heartbeat
// the history is {750 ms, 1250 ms}, μ = 1 s, σ = 250 ms (> 100 ms), so
// m' = 1 s and τ = A + ⌈1 s + 250 ms·y(8)⌉; with the default pause m' = 4 s.
// (Before fdkit's presence rule, a pause of 0 meant the 3 s default.)
func TestAkkaPauseZeroIsNoPause(t *testing.T) {
	y := phi.AkkaYOfLevel(8)
	for _, c := range []struct {
		pause *time.Duration
		mean  time.Duration
	}{{new(time.Duration(0)), time.Second}, {nil, 4 * time.Second}, {new(2 * time.Second), 3 * time.Second}} {
		d := newAkka(t, phi.AkkaConfig{AcceptablePause: c.pause})
		d.Observe(detector.Heartbeat{Arrival: 10 * time.Second})
		assert.Equal(t, c.mean, d.Mean())
		assert.Equal(t, 250*time.Millisecond, d.StdDev())
		tau, ok := d.FreshnessPoint()
		require.True(t, ok)
		want := 10*time.Second + time.Duration(math.Ceil(float64(c.mean)+2.5e8*y))
		assert.Equal(t, want, tau)
	}
	_, err := phi.NewAkka(phi.AkkaConfig{AcceptablePause: new(-time.Second)})
	assert.ErrorContains(t, err, "AcceptablePause")
}

// Akka's σ floor can be turned off: with new(0) a perfectly regular stream
// has s' = 1 ns (the guard that keeps y finite), not 100 ms.
func TestAkkaMinStdDevZero(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{MinStdDev: new(time.Duration(0)), WindowSize: 2,
		BootstrapInterval: new(time.Second)})
	for i := range 5 {
		d.Observe(detector.Heartbeat{Arrival: time.Duration(i) * time.Second})
	}
	assert.Equal(t, time.Duration(1), d.StdDev())
}

// Normal φ with MinSamples new(0) has no warm-up: WarmingUp is false from
// the first heartbeat; the default warms up until two intervals.
func TestNormalMinSamplesZero(t *testing.T) {
	off := newNormal(t, phi.NormalConfig{MinSamples: new(0)})
	def := newNormal(t, phi.NormalConfig{})
	for _, d := range []*phi.Normal{off, def} {
		assert.True(t, d.WarmingUp(), "no heartbeat yet")
		d.Observe(detector.Heartbeat{Arrival: 0})
	}
	assert.False(t, off.WarmingUp())
	assert.True(t, def.WarmingUp())
}

// Normal φ's σ floor: nil is μ/100, new(0) is none (σ_eff ≥ 1 ns).
// Intervals 1 s, 1 s, 1 s: σ = 0, μ = 1 s.
func TestNormalMinStdDevZero(t *testing.T) {
	off := newNormal(t, phi.NormalConfig{MinStdDev: new(time.Duration(0))})
	def := newNormal(t, phi.NormalConfig{})
	for _, d := range []*phi.Normal{off, def} {
		for i := range 4 {
			d.Observe(detector.Heartbeat{Arrival: time.Duration(i) * time.Second})
		}
	}
	assert.Equal(t, 10*time.Millisecond, def.StdDev())
	assert.Equal(t, time.Duration(1), off.StdDev())
}

// Cassandra's seed interval can be disabled: with BootstrapInterval new(0)
// the window holds only real intervals, so after heartbeats at 0, 100 ms and
// 200 ms μ = 100 ms exactly (with the default seed of 2 s, μ = 2.2 s/3).
func TestCassandraNoSeedInterval(t *testing.T) {
	off := newCassandra(t, phi.CassandraConfig{BootstrapInterval: new(time.Duration(0))})
	def := newCassandra(t, phi.CassandraConfig{})
	for _, d := range []*phi.Cassandra{off, def} {
		for i := range 3 {
			d.Observe(detector.Heartbeat{Arrival: time.Duration(i) * 100 * time.Millisecond})
		}
	}
	assert.Equal(t, 100*time.Millisecond, off.Mean())
	assert.Equal(t, 733333333*time.Nanosecond, def.Mean())
	assert.Equal(t, 2, off.Window().Len())
	// Scylla's fd_initial_value_ms and fd_max_interval_ms are independent.
	d := newCassandra(t, phi.CassandraConfig{BootstrapInterval: new(time.Second), MaxInterval: new(5 * time.Second)})
	d.Observe(detector.Heartbeat{Arrival: 0})
	d.Observe(detector.Heartbeat{Arrival: 4 * time.Second}) // ≤ 5 s: recorded
	assert.Equal(t, 2500*time.Millisecond, d.Mean())
}

// A bootstrap interval of new(0) assumes no interval. Normal: μ = σ = 0,
// the relative σ floor μ/100 is 0, so σ_eff = 1 ns and
// τ = A + ⌈z(8)·1 ns⌉ = A + 6 ns. Akka: the history is {0, 0}, so m' = 3 s
// (the default pause) and s' = 100 ms (the default floor):
// τ = A + ⌈3 s + 100 ms·y(8)⌉. Either way φ stays finite and not negative.
func TestBootstrapIntervalZero(t *testing.T) {
	const a = 10 * time.Second
	n := newNormal(t, phi.NormalConfig{BootstrapInterval: new(time.Duration(0))})
	n.Observe(detector.Heartbeat{Arrival: a})
	tau, ok := n.FreshnessPoint()
	require.True(t, ok)
	assert.Equal(t, a+time.Duration(math.Ceil(phi.ZOfLevel(8))), tau)
	assert.Equal(t, a+6, tau)

	k := newAkka(t, phi.AkkaConfig{BootstrapInterval: new(time.Duration(0))})
	k.Observe(detector.Heartbeat{Arrival: a})
	tau, ok = k.FreshnessPoint()
	require.True(t, ok)
	assert.Equal(t, a+time.Duration(math.Ceil(3e9+1e8*phi.AkkaYOfLevel(8))), tau)

	for _, d := range []detector.Accrual{n, k} {
		for _, now := range []time.Duration{a, a + 1, a + time.Hour, math.MaxInt64} {
			l := d.Level(now)
			assert.False(t, math.IsNaN(l) || math.IsInf(l, 0) || l < 0, "level %v at %v", l, now)
		}
	}
}
