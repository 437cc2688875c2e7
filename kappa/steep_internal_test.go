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

// At an integer K with σ/Δ ≈ 0.1, κ rises by only tens of ulps per
// nanosecond across its crossing (u ≈ 15.5 for K = 16, where the terms 15
// and 16 meet at z = ±5): below 2^-40·K, above five times the bound on
// sum's rounding. The local search accepts that crossing there, and it is
// ElapsedFor's, from a start a few nanoseconds off on either side.
func TestCrossingNearAcceptsIntegerK(t *testing.T) {
	d, err := New(Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 1000}})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 3000 {
		a := time.Duration(n+1)*100*time.Millisecond + time.Duration(30e6+rng.NormFloat64()*10e6)
		d.Observe(detector.Heartbeat{Seq: uint64(n + 1), HasSeq: true, Arrival: a})
		if n < 1000 || n%50 != 0 {
			continue
		}
		const k = 16.0
		want, ok := d.ElapsedFor(k)
		require.True(t, ok)
		a0, a1 := d.kappa(d.last+want-1), d.kappa(d.last+want)
		rise := d.steepRise(k)
		require.Less(t, a1-a0, 0x1p-40*k, "heartbeat %d: κ is flat for the old test", n)
		require.GreaterOrEqual(t, a1-a0, rise, "heartbeat %d: κ rises by %g, the test asks %g", n, a1-a0, rise)
		emax := time.Duration(math.MaxInt64) - d.last
		for _, off := range []time.Duration{-7, -1, 0, 1, 5} {
			got, ok := d.crossingNear(k, want+off, emax)
			require.True(t, ok, "heartbeat %d, start %+d ns", n, off)
			require.Equal(t, want, got, "heartbeat %d, start %+d ns", n, off)
		}
	}
}
