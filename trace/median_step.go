package trace

import "github.com/fdkit/fdkit/internal/selection"

// medianStep returns the median of st (the upper one of an even count),
// at least 0, reordering st; ok is false for fewer than two steps. The
// steps are finite (differences of int64 times over a positive count), so
// the element of rank len/2 is the one slices.Sort would put there, found
// by selection (about 2k + 1 = 17 of them at the default k).
func medianStep(st []float64) (float64, bool) {
	if len(st) < 2 {
		return 0, false
	}
	return max(selection.Rank(st, len(st)/2), 0), true
}
