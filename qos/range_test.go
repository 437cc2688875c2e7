package qos

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bounds whose ratio (log spacing) or difference (linear) overflows a
// float64 still give finite, increasing values: fdreplay accepted
// --range phi-akka=1e-300:1e300:log and swept Φ = +Inf.
func TestRangeWideBounds(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		log    bool
	}{{1e-300, 1e300, true}, {5e-324, math.MaxFloat64, true}, {-1e308, 1.7e308, false}, {-math.MaxFloat64, math.MaxFloat64, false}} {
		v, err := Range(tc.lo, tc.hi, 5, tc.log)
		require.NoError(t, err)
		assert.Equal(t, tc.lo, v[0])
		assert.Equal(t, tc.hi, v[4])
		for i, x := range v {
			require.False(t, math.IsInf(x, 0) || math.IsNaN(x), "%v: v[%d] = %g", tc, i, x)
			if i > 0 {
				assert.Less(t, v[i-1], x, "%v: increasing", tc)
			}
		}
	}
	v, err := Range(1e-300, 1e300, 3, true)
	require.NoError(t, err)
	assert.InDelta(t, 1, v[1], 1e-9)
	// Ordinary bounds keep their values.
	v, err = Range(100, 3000, 3, true)
	require.NoError(t, err)
	assert.Equal(t, []float64{100, 100 * math.Pow(30, 0.5), 3000}, v)
}

// One point is the lower bound, as documented (it was the upper one).
func TestRangeOnePointIsLo(t *testing.T) {
	for _, log := range []bool{false, true} {
		v, err := Range(3, 5, 1, log)
		require.NoError(t, err)
		assert.Equal(t, []float64{3}, v)
	}
	d, err := DurationRange(3, 5, 1, false)
	require.NoError(t, err)
	assert.Equal(t, 3, int(d[0]))
}
