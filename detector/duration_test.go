package detector_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
)

func TestAddSat(t *testing.T) {
	assert.Equal(t, time.Duration(7), detector.AddSat(3, 4))
	assert.Equal(t, time.Duration(math.MaxInt64), detector.AddSat(math.MaxInt64-1, 5))
	assert.Equal(t, time.Duration(math.MinInt64), detector.AddSat(math.MinInt64+1, -5))
	assert.Equal(t, time.Duration(-1), detector.AddSat(2, -3))
}

func TestRoundNanos(t *testing.T) {
	for x, want := range map[float64]time.Duration{
		0: 0, 0.49: 0, 0.5: 1, 1.5: 2, -0.5: -1, -1.49: -1, -2.5: -3, 235867187.5: 235867188,
		math.Inf(1): math.MaxInt64, math.Inf(-1): math.MinInt64,
	} {
		assert.Equal(t, want, detector.RoundNanos(x), "%v", x)
	}
	assert.Equal(t, time.Duration(3), detector.RoundNanos(2.5))
	assert.Equal(t, time.Duration(-3), detector.RoundNanos(-2.5))
	assert.Equal(t, time.Duration(2), detector.RoundNanos(2.49))
	assert.Equal(t, time.Duration(math.MaxInt64), detector.RoundNanos(1e300))
	assert.Equal(t, time.Duration(math.MinInt64), detector.RoundNanos(-1e300))
	assert.Equal(t, time.Duration(0), detector.RoundNanos(math.NaN()))
}
