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

// κ(T_last) is never above the bound that lets a state skip its erfc, and
// reachedAtLast answers κ(T_last) ≥ K as the sum itself does, from tight
// spreads (the sum returns 0 early) through those where the first term
// counts (σ/Δ from 1/9) to the integral (σ/Δ > 4), for the normal and the
// step contribution, with heartbeats late enough that κ(T_last) is not
// small.
func TestReachedAtLastIsKappaOfLast(t *testing.T) {
	ks := []float64{1e-300, 1e-12, 0.01, 0.3, 0.5, 0.999, 1, 1.0000000001, 1.5, 2, 3.7, 16, math.Inf(1)}
	for _, step := range []bool{false, true} {
		for _, sd := range []float64{0.3, 1.5, 3, 8, 60} { // ms, Δ = 10 ms
			c := Config{Estimator: chen.EstimatorConfig{Interval: 10 * time.Millisecond, WindowSize: 50}, MinStdDev: new(time.Duration(0))}
			if step {
				c.Contribution = ContributionStep
			}
			d, err := New(c)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(17, uint64(sd*10)))
			bounded := 0
			for n := range 600 {
				a := time.Duration((float64(n+1)*10 + 2 + rng.NormFloat64()*sd) * 1e6)
				if rng.IntN(20) == 0 {
					a += time.Duration(rng.IntN(40)) * time.Millisecond // a late heartbeat
				}
				d.Observe(detector.Heartbeat{Seq: uint64(n + 1), HasSeq: true, Arrival: a})
				if !d.seen {
					continue
				}
				if !d.k0ok {
					bounded++
				}
				want := d.kappa(d.last)
				if !d.k0ok {
					require.LessOrEqual(t, want, d.k0max, "σ %g ms, heartbeat %d", sd, n)
				}
				for _, k := range ks {
					require.Equal(t, want >= k, d.reachedAtLast(k), "σ %g ms, heartbeat %d, K %g", sd, n, k)
				}
			}
			if !step && sd >= 1.5 && sd <= 3 {
				require.Positive(t, bounded, "σ %g ms: some states wait for the bound", sd)
			}
		}
	}
}
