// Sorting a stream's samples for their quantiles.

package trace

import (
	"math"
	"slices"
)

// radixMin is the length from which sortFloats sorts by radix: below it a
// comparison sort is as fast.
const radixMin = 1 << 10

// sortFloats sorts ns in increasing order. The result is that of
// slices.Sort: a sorted slice holds the same values in the same order
// whichever way it was sorted (−0 and +0, equal to slices.Sort and in an
// unspecified order there, come −0 first). A long slice without NaN is
// sorted by an LSD radix sort of its values' bits mapped to keys in the
// same order, eight bits a pass, skipping the bytes that every key shares
// (durations in nanoseconds share their sign, most of their exponent and
// their low mantissa bits): a few linear passes instead of a comparison
// sort's n·log n. A slice already in order is left as it is.
func sortFloats(ns []float64) {
	n := len(ns)
	if n < radixMin || slices.IsSorted(ns) {
		slices.Sort(ns)
		return
	}
	keys := make([]uint64, 2*n)
	src, dst := keys[:n], keys[n:]
	var counts [8][256]int
	for i, f := range ns {
		if f != f { // NaN: keep slices.Sort's order for it
			slices.Sort(ns)
			return
		}
		k := floatKey(f)
		src[i] = k
		for b := range 8 {
			counts[b][byte(k>>(8*b))]++
		}
	}
	for b := range 8 {
		c := &counts[b]
		if c[byte(src[0]>>(8*b))] == n {
			continue // every key has this byte
		}
		pos, sum := [256]int{}, 0
		for d, k := range c {
			pos[d], sum = sum, sum+k
		}
		shift := uint(8 * b)
		for _, k := range src {
			d := byte(k >> shift)
			dst[pos[d]] = k
			pos[d]++
		}
		src, dst = dst, src
	}
	for i, k := range src {
		ns[i] = keyFloat(k)
	}
}

// floatKey maps f (not NaN) to a key whose unsigned order is f's order:
// the sign bit set for f ≥ +0, every bit flipped for f ≤ −0.
func floatKey(f float64) uint64 {
	u := math.Float64bits(f)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

// keyFloat is floatKey's inverse.
func keyFloat(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}
