package bertier

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRoundNanos(t *testing.T) {
	for x, want := range map[float64]time.Duration{
		0: 0, 0.49: 0, 0.5: 1, 1.5: 2, -0.5: -1, -1.49: -1, -2.5: -3, 235867187.5: 235867188,
		math.NaN(): 0, 1e300: math.MaxInt64, -1e300: math.MinInt64, math.Inf(1): math.MaxInt64,
	} {
		assert.Equal(t, want, roundNanos(x), "%v", x)
	}
}
