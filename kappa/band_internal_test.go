package kappa

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// The bands give ElapsedFor's crossing wherever they decide, and decide
// nearly every crossing where σ ≪ Δ: the single-term test for K = k + r
// (k = 0 included, r = 1/2 whose crossing falls on EA_{ℓ+1} + k·Δ itself
// and is decided inside the band by Level, r close to 0 or 1 with the wider
// cuts), the symmetric test for an integer K where κ rises steeply across
// it (σ/Δ from 0.1) and not where it is flat (σ/Δ = 0.03). Where σ/Δ
// exceeds 1/4 they step aside.
func TestBandCrossingIsElapsedFor(t *testing.T) {
	ks := []float64{0.3, 0.5, 0.97, 1.2, 2.5, 3.01, 4.9999, 7.5, 11.3, 1, 2, 16, 0x1p20 + 0.5}
	for _, c := range []struct {
		delta, mean, sd float64 // ms
		s               float64 // σ/Δ, about
		min             []float64
	}{
		// the least share of states decided, per threshold of ks
		{10, 3, 0.3, 0.03, []float64{1, 1, 1, 1, 1, 1, 0.99, 1, 1, 0, 0, 0, 0}},
		{100, 30, 10, 0.1, []float64{1, 1, 1, 1, 1, 1, 0.2, 1, 1, 0.95, 0.95, 0.95, 0}},
		{10, 3, 1, 0.1, []float64{1, 1, 1, 1, 1, 1, 0.2, 1, 1, 0.95, 0.95, 0.95, 0}},
		{10, 5, 2, 0.2, []float64{0.4, 0.1, 0, 0, 0.1, 0, 0, 0.1, 0, 0, 0.95, 0.95, 0}},
		{10, 10, 5, 0.5, make([]float64, len(ks))},
	} {
		d, err := New(Config{Estimator: chen.EstimatorConfig{Interval: time.Duration(c.delta * 1e6), WindowSize: 200}})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(5, uint64(c.sd*10)))
		decided := make([]int, len(ks))
		bs := make([]bands, len(ks))
		states := 0
		for n := range 3000 {
			a := time.Duration((float64(n+1)*c.delta + c.mean + rng.NormFloat64()*c.sd) * 1e6)
			d.Observe(detector.Heartbeat{Seq: uint64(n + 1), HasSeq: true, Arrival: a})
			if n < 200 {
				continue
			}
			states++
			for i, k := range ks {
				if d.kappaLast() >= k {
					continue // ElapsedFor is 0: elapsedFrom's case
				}
				want, ok := d.ElapsedFor(k)
				require.True(t, ok)
				if got, ok := d.bandCrossing(&bs[i], k); ok {
					decided[i]++
					require.Equal(t, want, got, "Δ %g ms, σ %g ms, heartbeat %d, K = %g", c.delta, c.sd, n, k)
				}
			}
		}
		for i, k := range ks {
			share := float64(decided[i]) / float64(states)
			require.GreaterOrEqual(t, share, c.min[i], "Δ %g ms, σ %g ms (s = %.3f), K = %g", c.delta, c.sd, d.s, k)
			if c.min[i] == 0 && (k == 16 && c.s < 0.05 || k > 0x1p20 || c.s > 0.25) {
				require.Zero(t, decided[i], "Δ %g ms, σ %g ms, K = %g", c.delta, c.sd, k)
			}
		}
	}
}

// newBands's bands: the narrowest cut for r = 1/2, none for an integer, a
// band of z_k just around Φ⁻¹(r) whose ends 0.5·math.Erfc puts on the
// right side of r by more than the error budget.
func TestNewBands(t *testing.T) {
	bs := newBands(2.5)
	require.Equal(t, 2.0, bs.k)
	require.False(t, bs.integer)
	b := bs.b[0]
	require.InDelta(t, 7.6, b.need, 1e-6, "k ≥ 1: both neighbours")
	require.Less(t, b.zlo, 0.0)
	require.Greater(t, b.zhi, 0.0)
	require.Less(t, b.zhi-b.zlo, 1e-12)
	half := newBands(0.5)
	require.Equal(t, 0.0, half.k)
	require.InDelta(t, 7.6+half.b[0].zlo, half.b[0].need, 1e-6, "k = 0: only the upper neighbour")
	for _, k := range []float64{0.3, 1.2, 7.5, 11.3} {
		bs := newBands(k)
		r := k - bs.k
		e := sumErr(5, k)
		for i, z := range bandZ {
			b := bs.b[i]
			require.False(t, math.IsInf(b.need, 1), "K = %g, Z = %g", k, z)
			q := math.Erfc(z / math.Sqrt2) // 2·Q(Z)
			require.GreaterOrEqual(t, 0.5*math.Erfc(-b.zhi/math.Sqrt2)-0x1p-49, r+e+q, "K = %g, Z = %g", k, z)
			require.Less(t, 0.5*math.Erfc(-b.zlo/math.Sqrt2)+0x1p-49, r-e-q, "K = %g, Z = %g", k, z)
			require.InDelta(t, math.Sqrt2*math.Erfinv(2*r-1), b.zmid, 1e-6)
		}
	}
	require.True(t, newBands(3).integer)
	require.True(t, math.IsInf(newBands(3).b[0].need, 1))
	require.True(t, math.IsInf(newBands(4.99999999999999).b[0].need, 1), "r within E + B of 1")
	require.True(t, math.IsInf(newBands(0x1p20 + 0.5).b[0].need, 1))
}
