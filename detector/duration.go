package detector

import (
	"math"
	"time"
)

// AddSat returns t + d, saturating at the ends of the time.Duration range
// instead of wrapping. Detectors compute freshness points with it, so that a
// huge timeout or margin (math.MaxInt64 meaning "never suspect") cannot turn
// τ into an instant in the far past.
func AddSat(t, d time.Duration) time.Duration {
	switch {
	case d > 0 && t > math.MaxInt64-d:
		return math.MaxInt64
	case d < 0 && t < math.MinInt64-d:
		return math.MinInt64
	}
	return t + d
}

// RoundNanos converts x nanoseconds to a time.Duration, rounding halves away
// from zero and saturating at the ends of the range; NaN gives 0. Detectors
// keep statistics in float64 nanoseconds and convert once with it.
func RoundNanos(x float64) time.Duration {
	switch {
	case x >= 0 && x < math.MaxInt64:
		return time.Duration(x + 0.5)
	case x < 0 && x > math.MinInt64:
		return time.Duration(x - 0.5)
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return 0
}
