package kappa

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// The clear test decides the crossings of a jittered stream with σ/Δ ≈
// 0.1 and 0.2 (Δ = 100 ms, as fdreplay's κ sweep), always ElapsedFor's
// instant, and declines the half-integer thresholds whose crossing falls
// exactly on an instant (K = k + 1/2 at EA_{ℓ+1} + k·Δ): there, without its
// margin, it would decide an instant next to the crossing where rounding
// leaves κ on the other side of K.
func TestClearMarginIsNeeded(t *testing.T) {
	ks := []float64{0.5, 0.7, 1.5, 2.2, 2.5, 3.9, 7.5, 11.3, 15.5}
	d, err := New(Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 200}, MinSamples: new(0)})
	require.NoError(t, err)
	ts, ok := d.TrackAll(ks)
	require.True(t, ok)
	rng := rand.New(rand.NewPCG(11, 12))
	dst := make([]time.Duration, len(ks))
	done := make([]bool, len(ks))
	var decided, wrongWithout, declined int
	for n := range 6000 {
		sd := 10e6 // σ/Δ ≈ 0.1, then 0.2: more terms of κ near an instant on the crossing
		if n >= 3000 {
			sd = 20e6
		}
		a := time.Duration(n)*100*time.Millisecond + time.Duration(30e6+sd*rng.NormFloat64())
		d.Observe(detector.Heartbeat{Seq: uint64(n + 1), HasSeq: true, Arrival: a})
		if !d.banded {
			continue
		}
		st := d.bandState()
		reach := d.k0max
		if d.k0ok {
			reach = d.k0
		}
		perWidth, fixed := clearMargin(&st, ts.kmax)
		for _, margin := range []float64{1, 0} {
			clear(done)
			ts.clearCrossings(&st, reach, margin*perWidth, margin*fixed, dst, done)
			for i, k := range ks {
				want, _ := d.FreshnessPointAt(k)
				switch {
				case !done[i] && margin > 0:
					declined++
				case !done[i]:
				case margin == 0:
					if dst[i] != want {
						wrongWithout++
					}
				default:
					decided++
					require.Equal(t, want, dst[i], "state %d, K = %v: the clear test's crossing", n, k)
				}
			}
		}
	}
	t.Logf("%d crossings decided, %d declined; without the margin %d wrong", decided, declined, wrongWithout)
	// Of the 12,000 crossings of the four thresholds off the half-integers
	// at σ/Δ ≈ 0.1 (at 0.2 the single-term bands do not apply).
	require.Greater(t, decided, 11000, "the clear test decides nearly every crossing off the instants")
	require.Positive(t, wrongWithout, "the margin matters: without it crossings on an instant come out wrong")
}
