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
		d := newAkka(t, phi.AkkaConfig{AcceptableHeartbeatPause: c.pause})
		d.Observe(detector.Heartbeat{Arrival: 10 * time.Second})
		assert.Equal(t, c.mean, d.Mean())
		assert.Equal(t, 250*time.Millisecond, d.StdDev())
		tau, ok := d.FreshnessPoint()
		require.True(t, ok)
		want := 10*time.Second + time.Duration(math.Ceil(float64(c.mean)+2.5e8*y))
		assert.Equal(t, want, tau)
	}
	_, err := phi.NewAkka(phi.AkkaConfig{AcceptableHeartbeatPause: new(-time.Second)})
	assert.ErrorContains(t, err, "AcceptableHeartbeatPause")
}

// Akka's σ floor can be turned off: with new(0) a perfectly regular stream
// has s' = 1 ns (the guard that keeps y finite), not 100 ms.
func TestAkkaMinStdDeviationZero(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{MinStdDeviation: new(time.Duration(0)), MaxSampleSize: 2,
		FirstHeartbeatEstimate: time.Second})
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

// Cassandra's seed interval can be disabled: with InitialInterval new(0)
// the window holds only real intervals, so after heartbeats at 0, 100 ms and
// 200 ms μ = 100 ms exactly (with the default seed of 2 s, μ = 2.2 s/3).
func TestCassandraNoSeedInterval(t *testing.T) {
	off := newCassandra(t, phi.CassandraConfig{InitialInterval: new(time.Duration(0))})
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
	d := newCassandra(t, phi.CassandraConfig{InitialInterval: new(time.Second), MaxInterval: new(5 * time.Second)})
	d.Observe(detector.Heartbeat{Arrival: 0})
	d.Observe(detector.Heartbeat{Arrival: 4 * time.Second}) // ≤ 5 s: recorded
	assert.Equal(t, 2500*time.Millisecond, d.Mean())
}
