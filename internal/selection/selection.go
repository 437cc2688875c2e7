// Package selection finds the element of a given rank in a slice of
// numbers without sorting it: the percentiles of package qos and the
// median step of package trace's sanity checker.
package selection

// Rank returns the element of rank k (0 the least, 0 ≤ k < len(a)) of a,
// whose values are not NaN: the element slices.Sort would put at index k.
// It reorders a, leaving it partitioned around k: no element before index
// k is greater than a[k] and none after it is less. Hoare partitions
// around a median of three narrow the part holding k until it is short,
// which an insertion sort then orders; the expected time is linear in
// len(a).
func Rank[T int64 | float64](a []T, k int) T {
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
