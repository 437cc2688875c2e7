package trace

// medianStep returns the median of st (the upper one of an even count),
// at least 0, reordering st; ok is false for fewer than two steps. The
// steps are finite (differences of int64 times over a positive count), so
// the element of rank len/2 is the one slices.Sort would put there, found
// by selection (about 2k + 1 = 17 of them at the default k).
func medianStep(st []float64) (float64, bool) {
	if len(st) < 2 {
		return 0, false
	}
	return max(selectFloat(st, len(st)/2), 0), true
}

// selectFloat returns the element of rank k (0 the least) of a, of
// values without NaN, reordering a: Hoare partitions around a median of
// three until the part holding k is short, then an insertion sort of it.
func selectFloat(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for hi-lo >= 8 {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k] // between j and i: equal to p
		}
	}
	for i := lo + 1; i <= hi; i++ {
		for j := i; j > lo && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
	return a[k]
}
