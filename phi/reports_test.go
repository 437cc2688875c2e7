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

func at(d time.Duration) detector.Heartbeat { return detector.Heartbeat{Arrival: d} }

// Cassandra's failure detector once learnt a node's downtime as an ordinary
// interval, so the next failure of that node took far longer to convict;
// fd_max_interval_ms (Cassandra and Scylla, default 2 s) keeps such an
// interval out of the window. Cassandra's rule is interArrivalTime <=
// MAX_INTERVAL: an interval of exactly 2 s is recorded, one of 2 s + 1 ns
// is not. Worked by hand: after the seed interval of 2 s
// (fd_initial_value_ms) and ten 1 s intervals, an hour's gap and one more
// 1 s interval, the window is {2 s, 1 s × 11}: μ = 13/12 s, and the
// detection time is Θ·μ·ln 10 = 8 · 13/12 s · ln 10 ≈ 19.956 s, as if the
// hour never happened.
func TestCassandraDoesNotLearnDowntime(t *testing.T) {
	d, err := phi.NewCassandra(phi.CassandraConfig{})
	require.NoError(t, err)
	var now time.Duration
	for i := 0; i <= 10; i++ {
		now = time.Duration(i) * time.Second
		d.Observe(at(now))
	}
	now += time.Hour
	d.Observe(at(now))
	now += time.Second
	d.Observe(at(now))
	assert.Equal(t, 12, d.Window().Len())
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	want := time.Duration(math.Ceil(8 * 13.0 / 12 * 1e9 * math.Ln10))
	assert.Equal(t, want, tau-now)
	// With the cap off (new(0)), the hour is learnt: μ = (2 s + 11 s + 1 h)/13.
	u, err := phi.NewCassandra(phi.CassandraConfig{MaxInterval: new(time.Duration(0))})
	require.NoError(t, err)
	for i := 0; i <= 10; i++ {
		u.Observe(at(time.Duration(i) * time.Second))
	}
	u.Observe(at(10*time.Second + time.Hour))
	u.Observe(at(11*time.Second + time.Hour))
	assert.Equal(t, (13*time.Second+time.Hour)/13, u.Mean())

	// The boundary: exactly fd_max_interval_ms is recorded, 1 ns more is not.
	d.Observe(at(now + 2*time.Second))
	assert.Equal(t, 13, d.Window().Len())
	d.Observe(at(now + 4*time.Second + 1))
	assert.Equal(t, 13, d.Window().Len())

	// Scylla's setting fd_max_interval_ms independently of
	// fd_initial_value_ms: with a 5 s cap a 4 s gap is learnt.
	s, err := phi.NewCassandra(phi.CassandraConfig{MaxInterval: new(5 * time.Second)})
	require.NoError(t, err)
	s.Observe(at(0))
	s.Observe(at(4 * time.Second))
	assert.Equal(t, 2, s.Window().Len())
	assert.Equal(t, 3*time.Second, s.Mean())
}

// Akka's φ once lost precision and returned Infinity or NaN for long
// silences (the logistic approximation then switched branches to stay
// accurate). Here, for every model on its defaults, φ stays finite, not
// NaN, and non-decreasing from the last heartbeat out to the end of the
// Duration range.
func TestPhiFiniteForLongSilences(t *testing.T) {
	akka, err := phi.NewAkka(phi.AkkaConfig{})
	require.NoError(t, err)
	normal, err := phi.NewNormal(phi.NormalConfig{})
	require.NoError(t, err)
	cass, err := phi.NewCassandra(phi.CassandraConfig{})
	require.NoError(t, err)
	for name, d := range map[string]detector.Accrual{"akka": akka, "normal": normal, "cassandra": cass} {
		for i := range 20 {
			d.Observe(at(time.Duration(i) * time.Second))
		}
		last := 19 * time.Second
		prev := 0.0
		for _, e := range []time.Duration{0, time.Millisecond, time.Second, 5 * time.Second, time.Minute, time.Hour, 1000 * time.Hour, math.MaxInt64 - last} {
			l := d.Level(last + e)
			assert.False(t, math.IsNaN(l) || math.IsInf(l, 0) || l < 0, "%s at +%v: %v", name, e, l)
			assert.GreaterOrEqual(t, l, prev, "%s at +%v", name, e)
			prev = l
		}
		assert.Greater(t, prev, d.(interface{ Threshold() float64 }).Threshold(), name)
	}
}
