package phi_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scenarios of the peers' own unit tests, with each peer's parameters
// and fdkit's defaults otherwise (the relearn rule on, K = min(10, window)):
// none has K intervals left out close together, so the rule changes none of
// their expected values. Akka's AccrualFailureDetectorSpec builds its
// detector with threshold 8, 1000 samples, min std deviation 100 ms, no
// acceptable pause and a first estimate of 1 s unless a case says otherwise;
// isAvailable is φ < Θ.
func TestAkkaSpecScenarios(t *testing.T) {
	mk := func(cfg phi.AkkaConfig) *phi.Akka {
		if cfg.AcceptablePause == nil {
			cfg.AcceptablePause = new(time.Duration(0))
		}
		return newAkka(t, cfg)
	}
	available := func(d *phi.Akka, at float64) bool { return d.Level(ms(at)) < d.Threshold() }

	t.Run("guess after one heartbeat", func(t *testing.T) {
		// History 750, 1250 ms: μ = 1000, σ = 250; y = 0, 4, 8.
		d := mk(phi.AkkaConfig{})
		d.Observe(hb(0, 0))
		assert.InDelta(t, 0.3, d.Level(ms(1000)), 0.2)
		assert.InDelta(t, 4.5, d.Level(ms(2000)), 0.3)
		assert.Greater(t, d.Level(ms(3000)), 15.0)
	})
	t.Run("monitored after heartbeats", func(t *testing.T) {
		d := mk(phi.AkkaConfig{})
		for i, at := range []float64{0, 1000, 1100} {
			d.Observe(hb(uint64(i), at))
		}
		assert.True(t, available(d, 1200))
	})
	t.Run("dead if heartbeats are missed", func(t *testing.T) {
		d := mk(phi.AkkaConfig{Threshold: 3})
		for i, at := range []float64{0, 1000, 1100} {
			d.Observe(hb(uint64(i), at))
		}
		assert.True(t, available(d, 1200))
		assert.False(t, available(d, 8200))
	})
	t.Run("available again after a failure", func(t *testing.T) {
		// 1000 heartbeats 1 s apart, a 5 min pause, then a 7 s one.
		d := mk(phi.AkkaConfig{AcceptablePause: new(3 * time.Second)})
		at := 0.0
		for i := range 1000 {
			at = float64(i) * 1000
			d.Observe(hb(uint64(i), at))
		}
		seq := uint64(1000)
		steps := []struct {
			beat, check float64
			want        bool
		}{{0, 300_000, false}, {100, 900, true}, {100, 7000, false}, {100, 900, true}, {100, 900, true}}
		for i, s := range steps {
			if s.beat > 0 {
				at += s.beat
				d.Observe(hb(seq, at))
				seq++
			}
			at += s.check
			assert.Equal(t, s.want, available(d, at), "step %d", i)
		}
	})
	t.Run("accepts configured missing heartbeats", func(t *testing.T) {
		d := mk(phi.AkkaConfig{AcceptablePause: new(3 * time.Second)})
		for i, at := range []float64{0, 1000, 2000, 3000} {
			d.Observe(hb(uint64(i), at))
		}
		assert.True(t, available(d, 7000))
		d.Observe(hb(4, 8000))
		assert.True(t, available(d, 9000))
	})
	t.Run("fails after configured missing heartbeats", func(t *testing.T) {
		d := mk(phi.AkkaConfig{AcceptablePause: new(3 * time.Second)})
		for i, at := range []float64{0, 1000, 2000, 3000, 4000, 5000} {
			d.Observe(hb(uint64(i), at))
		}
		assert.True(t, available(d, 5500))
		d.Observe(hb(6, 6000))
		assert.False(t, available(d, 11000))
	})
	t.Run("max sample size", func(t *testing.T) {
		// K = min(10, 3) = 3. The 600 ms interval ends while suspected and
		// is left out; the 500 ms one after it is recorded and ends nothing
		// (the run needs 3 in a row), and neither reaches K.
		d := mk(phi.AkkaConfig{WindowSize: 3})
		for i, at := range []float64{0, 100, 200, 300} {
			d.Observe(hb(uint64(i), at))
		}
		phi1 := d.Level(ms(400))
		for i, at := range []float64{1000, 1500, 2000, 2500} {
			d.Observe(hb(uint64(4+i), at))
		}
		assert.InDelta(t, phi1, d.Level(ms(3000)), 0.001)
		assert.Equal(t, 500*time.Millisecond, d.Window().MeanDuration(), "the 600 ms interval is not recorded")
	})
}

// Cassandra's ArrivalWindowTest: a window of 4, heartbeats 111 ms apart from
// 111 ms on. The first records the initial interval (2 s), pushed out by the
// fifth; φ = 111/(111·ln 10) = 0.4343 at 666 ms and 2445/(111·ln 10) =
// 9.566 at 3000 ms.
func TestCassandraArrivalWindowScenario(t *testing.T) {
	d, err := phi.NewCassandra(phi.CassandraConfig{WindowSize: 4})
	require.NoError(t, err)
	for i := range 5 {
		d.Observe(hb(uint64(i), float64(111*(i+1))))
	}
	assert.InDelta(t, 0.4342, d.Level(ms(666)), 0.01)
	assert.InDelta(t, 9.566, d.Level(ms(3000)), 0.01)
	relEq(t, 2445.0/111/2.302585092994046, d.Level(ms(3000)))
}

// Hazelcast's PhiAccrualFailureDetectorTest (Hazelcast's detector is a port
// of Akka's): threshold 1, 100 samples, min std deviation 100 ms, acceptable
// pause 1 s, first estimate 100 ms. After one heartbeat m' = 75..125 ms mean
// + 1 s, s' = 100 ms: y = −11 at once (φ about 10^−49; Hazelcast's own
// evaluation rounds it to 0), −6 after 500 ms, +9 after 2 s.
func TestHazelcastScenario(t *testing.T) {
	d := newAkka(t, phi.AkkaConfig{Threshold: 1, WindowSize: 100, MinStdDev: new(100 * time.Millisecond),
		AcceptablePause: new(time.Second), BootstrapInterval: new(100 * time.Millisecond)})
	assert.Zero(t, d.Level(ms(5000)), "no heartbeat yet")
	d.Observe(hb(0, 5000))
	assert.InDelta(t, 0, d.Level(ms(5000)), 1e-40)
	assert.Less(t, d.Level(ms(5500)), 1.0)
	assert.GreaterOrEqual(t, d.Level(ms(7000)), 1.0)
	last, _, _, ok := d.Form()
	require.True(t, ok)
	assert.Equal(t, ms(5000), last)
}
