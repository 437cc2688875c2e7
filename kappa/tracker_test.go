package kappa_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/stretchr/testify/require"
)

// A Tracker (and Trackers) gives FreshnessPointAt's freshness point, and
// Observe T_last + ElapsedFor(K), in every state, on
// streams with small and large σ/Δ (the staircase, the sum, the integral),
// with sender pauses, restarts and duplicates, for the step contribution,
// and at thresholds on κ's plateaus (the integers, where it falls back to
// ElapsedFor).
func TestTrackerEqualsFreshnessPointAt(t *testing.T) {
	ks := []float64{0.5, 1, 1.2, 2, 2.5, 3, 4.9999, 7, 11.3, 16, 40}
	for _, c := range []struct {
		name string
		sd   float64 // ns, lognormal scale of the delay
		step bool
	}{{"tiny-sd", 2e4, false}, {"small-sd", 1e6, false}, {"sd-near-delta", 8e6, false}, {"sd-above-4-delta", 6e7, false}, {"step", 1e6, true}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := kappa.Config{Estimator: chen.EstimatorConfig{Interval: 10 * ms, WindowSize: 100}}
			if c.step {
				cfg.Contribution = kappa.ContributionStep
			}
			d, err := kappa.New(cfg)
			require.NoError(t, err)
			trs := make([]*kappa.Tracker, len(ks))
			for i, k := range ks {
				var ok bool
				trs[i], ok = d.Track(k)
				require.True(t, ok)
			}
			all, ok := d.TrackAll(append([]float64{kappa.DefaultThreshold}, ks...))
			require.True(t, ok)
			taus := make([]time.Duration, len(ks)+1)
			require.False(t, all.FreshnessPoints(taus), "before the first heartbeat")
			rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
			seq, at := uint64(0), time.Duration(0)
			for n := range 5000 {
				seq++
				at += 10 * ms
				switch r := rng.IntN(1000); {
				case r < 3:
					at += time.Duration(rng.IntN(50)) * 10 * ms // a pause
				case r < 4:
					seq = 1 // a restart
				}
				a := at + time.Duration(math.Exp(rng.NormFloat64())*c.sd)
				d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: a})
				if n%97 == 0 {
					d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: a + 1}) // a duplicate
				}
				tau, _ := d.FreshnessPoint()
				e, _ := d.ElapsedFor(d.Threshold())
				require.Equal(t, detector.AddSat(d.Estimator().LastArrival(), e), tau, "heartbeat %d: Observe's τ is ElapsedFor's", n)
				require.True(t, all.FreshnessPoints(taus))
				require.Equal(t, tau, taus[0], "heartbeat %d: Trackers, the detector's own K", n)
				for i, tr := range trs {
					want, wok := d.FreshnessPointAt(ks[i])
					got, gok := tr.FreshnessPoint()
					require.Equal(t, wok, gok)
					require.Equal(t, want, got, "heartbeat %d, K = %g", n, ks[i])
					require.Equal(t, want, taus[i+1], "heartbeat %d, K = %g: Trackers", n, ks[i])
				}
			}
		})
	}
	d, err := kappa.New(kappa.Config{})
	require.NoError(t, err)
	for _, k := range []float64{0, -1, math.Inf(1), math.NaN()} {
		_, ok := d.Track(k)
		require.False(t, ok, "K = %g", k)
		_, ok = d.TrackAll([]float64{2.5, k})
		require.False(t, ok, "K = %g", k)
	}
	tr, _ := d.Track(3)
	_, ok := tr.FreshnessPoint()
	require.False(t, ok, "before the first heartbeat")
}

// Near the end of the time.Duration range the crossings of the larger
// thresholds lie beyond it (τ saturates at math.MaxInt64) while those of
// the smaller ones do not: Trackers, whose clear loop checks the reach of
// all its thresholds' predictions at once, give FreshnessPointAt's τ for
// each.
func TestTrackersAtTheEndOfTime(t *testing.T) {
	ks := []float64{0.5, 1.2, 2.5, 3.3, 4.7, 7.5, 11.3, 15.5}
	const delta = time.Millisecond
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{Interval: delta, WindowSize: 100}, MinSamples: new(0)})
	require.NoError(t, err)
	all, ok := d.TrackAll(ks)
	require.True(t, ok)
	taus := make([]time.Duration, len(ks))
	rng := rand.New(rand.NewPCG(31, 32))
	const n = 400
	start := time.Duration(math.MaxInt64) - n*delta - 8*delta
	var saturated, finite int
	for i := range n {
		a := start + time.Duration(i)*delta + time.Duration(3e5+1e5*rng.NormFloat64())
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: a})
		require.True(t, all.FreshnessPoints(taus))
		for j, k := range ks {
			want, _ := d.FreshnessPointAt(k)
			require.Equal(t, want, taus[j], "heartbeat %d, K = %g", i, k)
			if i > n-5 {
				if want == math.MaxInt64 {
					saturated++
				} else {
					finite++
				}
			}
		}
	}
	require.Positive(t, saturated, "some crossings lie beyond the range")
	require.Positive(t, finite)
}
