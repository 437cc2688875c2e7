package qos

import (
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/internal/selection"
)

// tdScan is finishTD for a thresholdPass's point, in one read of its
// τ − A_k and no write of them: what finishTD computes in a pass that
// writes the TD_k (sumTD), a pass for the cells' sums (cellSums) and a
// read for the rank windows (rankValuesInt), it computes in one pass that
// adds each TD_k's base as it reads it. As in rankValuesInt a
// pseudo-random sample of the TD_k gives a window around each rank
// (sampleBounds); the pass adds the TD_k up (the sum, the extremes, the
// cells' sums, a run of one cell at a time, exact under the bound of
// sumTD), counts the values below each window and those equal to its
// sides, and keeps the values inside (as tdWindows does in sweepRanked's
// second pass). The nearest-rank p50 and p99 are then selected in the
// windows.
//
// td holds τ − A_k, each in [0, vMax]; base is TD_k − (τ − A_k) per
// heartbeat (nil: off for every one), every base in [bMin, bMax]. ok is
// false, and the caller uses finishTD, where tdScan cannot answer
// exactly: fewer values than tdSampleSize samples, values or bases too
// large for the differences of the scan to stay within 2^62 (near), sums
// that would not equal sumTD's float64 sums, or a window that misses its
// rank. cells's TD sums may then hold partial sums (finishTD clears them).
func tdScan[V uint32 | int64](td []V, vMax uint64, base []int64, off, bMin, bMax int64, cells *cellSeries, evCell []uint8, sc *tdScanScratch) (st TDStats, last time.Duration, ok bool) {
	n := len(td)
	m := tdSampleSize(n)
	if m == 0 || vMax >= 1<<60 || bMin <= -1<<60 || bMax >= 1<<60 {
		return st, 0, false
	}
	if base != nil {
		base = base[:n]
	}
	at := func(k int) int64 {
		if base != nil {
			return int64(td[k]) + base[k]
		}
		return int64(td[k]) + off
	}
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	sample := slices.Grow(sc.sample[:0], m)[:m]
	for j, k := range sampleIndices(n, m) {
		sample[j] = at(k)
	}
	val, has := sampleBounds(sample, ranks, n)
	sc.sample = sample
	// Every TD_k lies in [bMin, vMax + bMax], within 2^61 of 0.
	lo0, hi0, lo1, hi1 := windowEdges(val, has, bMin, int64(vMax)+bMax)
	w := tdScanWindows{lo: [2]int64{lo0, lo1}, hi: [2]int64{hi0, hi1},
		in: [2][]int64{sc.in[0][:0], sc.in[1][:0]}}
	wd0, wd1 := uint64(hi0-lo0), uint64(hi1-lo1)
	if cells != nil {
		clear(cells.tdSum)
		clear(cells.tdN)
	}
	var sum int64
	mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
	t := sc.t[:]
	var hits [tdScanBlock]int64
	for i := 0; i < n; {
		// The run of heartbeats [i, e) in one cell c (all of them without
		// cells), a block at a time.
		e, c := n, uint8(0)
		if cells != nil {
			c, e = evCell[i], i+1
			for e < n && evCell[e] == c {
				e++
			}
		}
		var runSum int64
		for a := i; a < e; a += tdScanBlock {
			b := min(a+tdScanBlock, e)
			var bs []int64
			if base != nil {
				bs = base[a:b]
			}
			s, lo, hi := addBase(td[a:b], bs, off, t[:b-a], mn, mx)
			mn, mx, runSum = lo, hi, runSum+s
			b0, b1, k := windowTallyNear(t[:b-a], lo0, lo1, wd0, wd1, hits[:b-a])
			w.below[0] += b0
			w.below[1] += b1
			for _, v := range hits[:k] {
				w.add(v)
			}
		}
		sum += runSum
		if cells != nil {
			cells.tdSum[c] += float64(runSum)
			cells.tdN[c] += float64(e - i)
		}
		i = e
	}
	sc.in = w.in
	if float64(n)*max(math.Abs(float64(mn)), math.Abs(float64(mx))) >= 1<<52 {
		return st, 0, false // sumTD adds these in float64, one at a time
	}
	r, ok := w.ranks(ranks)
	if !ok {
		return st, 0, false
	}
	st = TDStats{Mean: time.Duration(math.Round(float64(sum) / float64(n))), Max: time.Duration(mx),
		P50: time.Duration(r[0]), P99: time.Duration(r[1])}
	return st, time.Duration(at(n - 1)), true
}

// tdScanBlock is how many TD_k tdScan makes at a time, in a buffer that
// stays in the first-level cache.
const tdScanBlock = 512

// tdScanScratch is tdScan's memory, kept from one point to the next.
type tdScanScratch struct {
	sample []int64
	in     [2][]int64
	t      [tdScanBlock]int64
}

// tdScanWindows are tdScan's two rank windows [lo, hi]: the values
// counted below lo, at lo and at hi, and those kept strictly inside.
type tdScanWindows struct {
	lo, hi     [2]int64
	below      [2]int
	atLo, atHi [2]int
	in         [2][]int64
}

// add accounts v, which lies in one of the windows or both.
func (w *tdScanWindows) add(v int64) {
	for j := range 2 {
		switch lo, hi := w.lo[j], w.hi[j]; {
		case v == lo:
			w.atLo[j]++
		case v == hi:
			w.atHi[j]++
		case v > lo && v < hi:
			w.in[j] = append(w.in[j], v)
		}
	}
}

// ranks returns the values of ranks (0-based) from the windows' counts,
// or false when a window misses its rank.
func (w *tdScanWindows) ranks(ranks [2]int) (r [2]int64, ok bool) {
	for j, rk := range ranks {
		k := rk - w.below[j]
		switch in := w.in[j]; {
		case k < 0:
			return r, false
		case k < w.atLo[j]:
			r[j] = w.lo[j]
		case k-w.atLo[j] < len(in):
			r[j] = selection.Rank(in, k-w.atLo[j])
		case k-w.atLo[j]-len(in) < w.atHi[j]:
			r[j] = w.hi[j]
		default:
			return r, false
		}
	}
	return r, true
}

// addBase writes to t each value of vs plus its base (bs[k], or off when
// bs is nil) and returns their sum (wrapping) and their extremes with mn
// and mx. Not inlined, so that its loop keeps its variables in registers.
//
//go:noinline
func addBase[V uint32 | int64](vs []V, bs []int64, off int64, t []int64, mn, mx int64) (sum, mn2, mx2 int64) {
	t = t[:len(vs)]
	if bs != nil {
		bs = bs[:len(vs)]
		for k, v := range vs {
			x := int64(v) + bs[k]
			t[k] = x
			sum += x
			mn, mx = min(mn, x), max(mx, x)
		}
		return sum, mn, mx
	}
	for k, v := range vs {
		x := int64(v) + off
		t[k] = x
		sum += x
		mn, mx = min(mn, x), max(mx, x)
	}
	return sum, mn, mx
}

// baseRange returns the least and greatest of base, or off twice when
// base is nil.
func baseRange(base []int64, off int64) (lo, hi int64) {
	if base == nil {
		return off, off
	}
	lo, hi = math.MaxInt64, math.MinInt64
	for _, b := range base {
		lo, hi = min(lo, b), max(hi, b)
	}
	return lo, hi
}
