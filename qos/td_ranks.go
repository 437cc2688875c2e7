// Exact nearest-rank TD percentiles: selection, and rank windows drawn on a sample.

package qos

import (
	"iter"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/fdkit/fdkit/internal/selection"
)

// tdStats computes mean, nearest-rank p50 and p99, and max of td, which it
// may reorder.
func tdStats(td []int64) TDStats {
	n := len(td)
	if n == 0 {
		return TDStats{}
	}
	var sum float64
	mn, mx := td[0], td[0]
	for _, v := range td {
		sum += float64(v)
		mx = max(mx, v)
		mn = min(mn, v)
	}
	return tdStatsOf(td, sum, mn, mx)
}

// tdStatsOf is tdStats of a non-empty td whose sum (added in order), least
// and greatest values are known.
func tdStatsOf(td []int64, sum float64, mn, mx int64) TDStats {
	n := len(td)
	s := TDStats{Mean: time.Duration(math.Round(sum / float64(n))), Max: time.Duration(mx)}
	p50, p99 := tdRankPair(td, mn, mx, tdSampleSize(n))
	s.P50, s.P99 = time.Duration(p50), time.Duration(p99)
	return s
}

// tdRankPair returns the nearest-rank p50 and p99 of the non-empty td, whose
// least and greatest values are mn and mx, reordering td: from rank windows
// drawn on a sample of m values (rankValuesInt) when m > 0 and they hold the
// ranks, else by selection among all values.
func tdRankPair(td []int64, mn, mx int64, m int) (p50, p99 int64) {
	n := len(td)
	r50, r99 := rank(0.50, n), rank(0.99, n)
	if m > 0 {
		if r, ok := rankValuesInt(td, mn, mx, [2]int{r50, r99}, m); ok {
			return r[0], r[1]
		}
	}
	p50 = selection.Rank(td, r50)
	return p50, selectAbove(td, [2]int{r50, r99})
}

// selectAbove returns the value of ranks[1] among a, which selection.Rank has
// just left partitioned around ranks[0] ≤ ranks[1]: it selects among the
// values above ranks[0] only.
func selectAbove[T int64 | float64](a []T, ranks [2]int) T {
	if ranks[1] == ranks[0] {
		return a[ranks[0]]
	}
	return selection.Rank(a[ranks[0]+1:], ranks[1]-ranks[0]-1)
}

// tdSampleSize is the size of the sample that draws the rank windows of n
// values (rankValuesInt, rankValues, linearCurve.percentiles): n/32 up to
// 16384, so that the windows hold a few percent of the values; 0 (select
// among all values) below 16384 values, where windows do not pay.
func tdSampleSize(n int) int {
	if n < 1<<14 {
		return 0
	}
	return min(n/32, 1<<14)
}

// rank returns the 0-based nearest-rank index ⌈q·n⌉ − 1.
func rank(q float64, n int) int {
	k := int(math.Ceil(q*float64(n))) - 1
	return min(max(k, 0), n-1)
}

// rankValuesInt returns the values of ranks (0-based, increasing) among td,
// whose least and greatest values are mn and mx, without reordering td: a
// pseudo-random sample of m values gives a window per rank (sampleBounds),
// one read of td counts the values below each window and keeps those in it,
// and the selection runs on the small windows. ok is false (the caller
// selects from all values) for a short td, when mx − mn overflows, when
// many values of the sample are on the windows' sides (sidesHeavy: the
// windows would keep nearly all values, while a selection among few
// distinct values is quick), or when a window misses its rank.
func rankValuesInt(td []int64, mn, mx int64, ranks [2]int, m int) (r [2]int64, ok bool) {
	n := len(td)
	if m == 0 || n < 8*m || (mn < 0 && mx > math.MaxInt64+mn) {
		return r, false
	}
	const block = 4096 // each block needs room for all of its values
	scratch := rankScratch.Get().(*[3][]int64)
	defer rankScratch.Put(scratch)
	sample := slices.Grow(scratch[0][:0], m)[:m]
	in0 := slices.Grow(scratch[1][:0], windowCap(ranks[0], n, m)+block)
	in1 := slices.Grow(scratch[2][:0], windowCap(ranks[1], n, m)+block)
	for j, k := range sampleIndices(n, m) {
		sample[j] = td[k]
	}
	val, has := sampleBounds(sample, ranks, n)
	if sidesHeavy(sample, val, has) {
		*scratch = [3][]int64{sample, in0, in1}
		return r, false
	}
	// A side beyond the sample is the least or greatest value, so every
	// difference below stays within mx − mn.
	lo0, hi0, lo1, hi1 := windowEdges(val, has, mn, mx)
	var b0, b1 int
	for a := 0; a < n; a += block {
		vs := td[a:min(a+block, n)]
		in0, in1 = slices.Grow(in0, len(vs)), slices.Grow(in1, len(vs))
		in0, b0 = windowScan(vs, lo0, hi0, in0, b0)
		in1, b1 = windowScan(vs, lo1, hi1, in1, b1)
	}
	*scratch = [3][]int64{sample, in0, in1}
	r0, r1 := ranks[0]-b0, ranks[1]-b1
	if r0 < 0 || r0 >= len(in0) || r1 < 0 || r1 >= len(in1) {
		return r, false
	}
	return [2]int64{selection.Rank(in0, r0), selection.Rank(in1, r1)}, true
}

// rankScratch keeps rankValuesInt's sample and windows for its next call:
// a sweep computes them for every threshold of every stream, and fresh
// ones would be cleared each time.
var rankScratch = sync.Pool{New: func() any { return new([3][]int64) }}

// windowScan adds to below the values of vs under lo and appends to in
// those in [lo, hi], which it has room for; every difference v − lo and
// hi − v must fit an int64. It is free of data-dependent branches (the
// sign bit of v − lo is 1 iff v < lo): values near a window are as often
// in as out, and a branch on them is mispredicted half the time. Not
// inlined, its few variables stay in registers.
//
//go:noinline
func windowScan(vs []int64, lo, hi int64, in []int64, below int) ([]int64, int) {
	k := len(in)
	w := in[:k+len(vs)]
	for _, v := range vs {
		d := uint64(v - lo)
		below += int(d >> 63)
		w[k] = v
		k += int(((d | uint64(hi-v)) >> 63) ^ 1)
	}
	return w[:k], below
}

// sidesHeavy reports whether more than one value in 64 of the sample
// equals a side of the rank windows (val where has). Windows keep the
// values on their sides, and would then keep about as large a share of
// all values: a constant delay or a coarse clock gives few distinct TDs.
func sidesHeavy(sample []int64, val [4]int64, has [4]bool) bool {
	at := -1
	for j := range 4 {
		if has[j] {
			at = j
		}
	}
	if at < 0 {
		return false
	}
	for j := range 4 {
		if !has[j] {
			val[j] = val[at]
		}
	}
	ties := 0
	for _, v := range sample {
		if v == val[0] || v == val[1] || v == val[2] || v == val[3] {
			ties++
		}
	}
	return ties*64 > len(sample)
}

// sampleIndices yields m pairs (j, k): j counts 0..m−1 and k is a
// pseudo-random index in [0, n) drawn by a fixed-seed xorshift64 generator
// (Marsaglia 2003), so the rank windows built on the sample are reproducible.
func sampleIndices(n, m int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		x := uint64(0x9e3779b97f4a7c15)
		for j := range m {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			if !yield(j, int(x%uint64(n))) {
				return
			}
		}
	}
}

// sampleWindows returns, for each of the two ranks (0-based, among n
// values), a window [lo, hi] of the values of sample (which it reorders)
// that holds that rank among all n values with overwhelming probability:
// about four standard deviations of the sample rank either side. A window
// side beyond the sample is infinite.
func sampleWindows(sample []float64, ranks [2]int, n int) (lo, hi [2]float64) {
	val, has := sampleBounds(sample, ranks, n)
	for j := range 2 {
		lo[j], hi[j] = math.Inf(-1), math.Inf(1)
		if has[2*j] {
			lo[j] = val[2*j]
		}
		if has[2*j+1] {
			hi[j] = val[2*j+1]
		}
	}
	return lo, hi
}

// sampleBounds returns the window sides of sampleWindows as lo0, hi0, lo1,
// hi1, with has false for a side beyond the sample.
func sampleBounds[T int64 | float64](sample []T, ranks [2]int, n int) (val [4]T, has [4]bool) {
	m := len(sample)
	var at [4]int // sample indices of lo0, hi0, lo1, hi1; −1: beyond
	for j, r := range ranks {
		a, b := windowAt(r, n, m)
		at[2*j], at[2*j+1] = a, b
		if a < 0 {
			at[2*j] = -1
		}
		if b >= m {
			at[2*j+1] = -1
		}
	}
	// Select the indices in increasing order, each in the part of the
	// sample above the previous one (selection.Rank leaves it partitioned).
	order := [4]int{0, 1, 2, 3}
	slices.SortFunc(order[:], func(x, y int) int { return at[x] - at[y] })
	base := 0
	for _, o := range order {
		if at[o] < 0 {
			continue
		}
		val[o], has[o] = selection.Rank(sample[base:], at[o]-base), true
		base = at[o]
	}
	return val, has
}

// windowAt returns the sample indices of the sides of the window that
// holds the rank r among n values, for a sample of m: about four standard
// deviations of the sample rank either side (a < 0 or b ≥ m: beyond the
// sample).
func windowAt(r, n, m int) (a, b int) {
	q := float64(r) / float64(n)
	margin := 4*math.Sqrt(float64(m)*q*(1-q)) + 4
	return int(q*float64(m) - margin), int(math.Ceil(q*float64(m) + margin))
}

// windowEdges returns the two rank windows' edges [lo0, hi0] and
// [lo1, hi1] from sampleBounds' val and has: a side the sample does not
// bound is the least (mn) or greatest (mx) value.
func windowEdges(val [4]int64, has [4]bool, mn, mx int64) (lo0, hi0, lo1, hi1 int64) {
	lo0, hi0, lo1, hi1 = mn, mx, mn, mx
	if has[0] {
		lo0 = val[0]
	}
	if has[1] {
		hi0 = val[1]
	}
	if has[2] {
		lo1 = val[2]
	}
	if has[3] {
		hi1 = val[3]
	}
	return lo0, hi0, lo1, hi1
}

// windowCap is the room to make for the values in the window of the rank r
// among n values, for a sample of m: the expected count with an eighth to
// spare, so that the window's slice rarely grows.
func windowCap(r, n, m int) int {
	a, b := windowAt(r, n, m)
	w := min(b, m) - max(a, 0) + 2
	return int(float64(n) / float64(m) * float64(w) * 9 / 8)
}
