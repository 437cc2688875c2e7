package swim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// defaultPeerDetectorFor returns the per-peer detector factory a Member
// uses when Config.PeerDetector is nil and the period is period.
func defaultPeerDetectorFor(t *testing.T, period time.Duration) func() (detector.Detector, error) {
	t.Helper()
	c := Config{Self: node("a"), ProbeInterval: period, ProbeTimeout: period / 2}
	require.NoError(t, c.normalize())
	require.NotNil(t, c.PeerDetector)
	return c.PeerDetector
}

// regular feeds d count heartbeats every period from start and returns the
// last arrival.
func regular(d detector.Detector, start time.Duration, period time.Duration, count int) time.Duration {
	at := start
	for i := range count {
		at = start + time.Duration(i)*period
		d.Observe(detector.Heartbeat{Arrival: at})
	}
	return at
}

// A peer heard exactly once a period for a window's worth, then not for two
// or three periods (a member's shuffled round-robin puts two probes of one
// target up to 2(n−1)−1 periods apart: 3 at n = 3, the live case where a
// third member rejoined a pair): the default peer detector must not suspect
// it, and its level must stay moderate. The σ floor (a tenth of the
// period) is what allows it: with a floor of 1 % of the mean (10 ms at
// 1 s), φ would be 8 at 1.06 s and about 2.2·10³ at 2 s (z = 100), and
// every later interval of the new rhythm, arriving after τ, would be
// dropped by SkipIfSuspected, so the detector would never learn it.
// Expected values with σ_min = period/10, pause = 3 periods, Θ = 8
// (DefaultPeerDetectorFor): τ = T_last + μ + 3P + σ_min·z(8) = T_last +
// (1 + 3 + 0.5612)·P; at 3 periods z = (3 − 4)/0.1 = −10, φ = −log10 Q(−10)
// ≈ 3·10⁻²⁴; at 4 periods z = 0, φ = log10 2.
func TestDefaultPeerDetectorToleratesRhythmChange(t *testing.T) {
	for _, period := range []time.Duration{time.Second, 200 * time.Millisecond} {
		newDet := defaultPeerDetectorFor(t, period)
		d, err := newDet()
		require.NoError(t, err)
		last := regular(d, 0, period, DefaultPeerWindow+1)
		a := d.(detector.Accrual)
		for _, gap := range []time.Duration{2 * period, 5 * period / 2, 3 * period} {
			assert.False(t, d.Suspected(last+gap), "period %v: suspected %v after the last heartbeat", period, gap)
			assert.Less(t, a.Level(last+gap), 0.01, "period %v: level %v after the last heartbeat", period, gap)
		}
		assert.InDelta(t, math.Log10(2), a.Level(last+4*period), 1e-6, "period %v: φ at μ + pause", period)
		tau, ok := d.FreshnessPoint()
		require.True(t, ok)
		want := last + period + 3*period + time.Duration(math.Ceil(float64(period/10)*phi.ZOfLevel(8)))
		assert.InDelta(t, float64(want), float64(tau), 2, "period %v: τ", period)
	}
}

// The new rhythm must be learnt: after a window's worth of intervals of 5
// periods (the group grew to about 11 members, each heard about every
// (n−1)/2 periods), a silence of one such interval plus the pause is not
// suspected: the 5 s intervals enter the window (with τ ≈ 1.06 s they
// would all arrive after it and SkipIfSuspected would drop them, keeping
// the 1 s rhythm for good and the peer suspected between heartbeats).
func TestDefaultPeerDetectorLearnsNewRhythm(t *testing.T) {
	newDet := defaultPeerDetectorFor(t, time.Second)
	d, err := newDet()
	require.NoError(t, err)
	last := regular(d, 0, time.Second, DefaultPeerWindow+1)
	for i := range 2 * DefaultPeerWindow {
		at := last + time.Duration(i+1)*5*time.Second
		d.Observe(detector.Heartbeat{Arrival: at})
		if i == 2*DefaultPeerWindow-1 {
			last = at
		}
	}
	assert.Equal(t, 5*time.Second+3*time.Second, d.(*phi.Normal).Mean(), "μ + pause once the window holds only the new rhythm")
	assert.False(t, d.Suspected(last+8*time.Second))
	assert.Less(t, d.(detector.Accrual).Level(last+7*time.Second), 0.01)
}

// The detector stays useful: a peer silent for 30 periods at the regular
// rhythm, or for 60 s at a rhythm of 5 s, is suspected, its level far above Θ.
func TestDefaultPeerDetectorSuspectsLongSilence(t *testing.T) {
	for _, period := range []time.Duration{time.Second, 200 * time.Millisecond} {
		d, err := defaultPeerDetectorFor(t, period)()
		require.NoError(t, err)
		last := regular(d, 0, period, DefaultPeerWindow+1)
		assert.True(t, d.Suspected(last+30*period), "period %v", period)
		assert.Greater(t, d.(detector.Accrual).Level(last+30*period), 100.0, "period %v", period)
		assert.True(t, d.Suspected(last+5*period), "period %v: 5 periods is past τ = 4.56 periods", period)
	}
	d, err := DefaultPeerDetector()
	require.NoError(t, err)
	last := regular(d, 0, 5*time.Second, DefaultPeerWindow+1)
	assert.True(t, d.Suspected(last+60*time.Second))
}

// DefaultPeerDetector is the detector of the default period.
func TestDefaultPeerDetectorIsDefaultPeriods(t *testing.T) {
	a, err := DefaultPeerDetector()
	require.NoError(t, err)
	b, err := defaultPeerDetectorFor(t, DefaultProbeInterval)()
	require.NoError(t, err)
	for _, d := range []detector.Detector{a, b} {
		regular(d, 0, time.Second, 5)
	}
	ta, _ := a.FreshnessPoint()
	tb, _ := b.FreshnessPoint()
	assert.Equal(t, ta, tb)
}

// Properties (docs/algorithms.md, “Conventions and the common trace”): on the
// irregular rhythm SWIM produces (a member hears a peer after 1 to 2(n−1)−1
// periods, the group size changing, the peer pausing now and then) the level
// is never NaN or negative and never decreases while no heartbeat arrives.
func TestDefaultPeerDetectorProperties(t *testing.T) {
	for _, period := range []time.Duration{time.Second, 100 * time.Millisecond} {
		newDet := defaultPeerDetectorFor(t, period)
		r := rand.New(rand.NewPCG(7, uint64(period)))
		for run := range 20 {
			d, err := newDet()
			require.NoError(t, err)
			a := d.(detector.Accrual)
			at := time.Duration(0)
			n := 2 + r.IntN(30)
			for hb := range 300 {
				if r.IntN(50) == 0 {
					n = 2 + r.IntN(30) // members join or leave
				}
				gap := time.Duration(1+r.IntN(2*(n-1)-1)) * period
				gap += time.Duration(r.Int64N(int64(period))) - period/2
				if r.IntN(40) == 0 {
					gap += time.Duration(r.IntN(30)) * period // the peer paused
				}
				prev := -1.0
				for s := range 16 {
					now := at + gap*time.Duration(s)/16
					l := a.Level(now)
					require.False(t, math.IsNaN(l) || l < 0, "period %v run %d heartbeat %d: level %v at %v", period, run, hb, l, now)
					require.GreaterOrEqual(t, l, prev, "period %v run %d heartbeat %d: level fell at %v", period, run, hb, now)
					prev = l
				}
				at += max(gap, 1)
				d.Observe(detector.Heartbeat{Arrival: at})
			}
		}
	}
}

// A period that is not positive is an error of the factory, not a panic;
// a huge one is no error.
func TestDefaultPeerDetectorForBadPeriod(t *testing.T) {
	for _, p := range []time.Duration{0, -time.Second} {
		d, err := DefaultPeerDetectorFor(p)()
		assert.Nil(t, d)
		assert.ErrorContains(t, err, "is not positive")
	}
	d, err := DefaultPeerDetectorFor(1 << 62)() // the pause saturates
	require.NoError(t, err)
	d.Observe(detector.Heartbeat{Arrival: 0})
	assert.False(t, d.Suspected(1<<62))
}
