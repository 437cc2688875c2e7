package qos

import (
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/fdkit/fdkit/internal/selection"
)

// tdScan is finishTD for a thresholdPass's points, in one read of their
// τ − A_k and no write of them: what finishTD computes in a pass that
// writes the TD_k (sumTD), a pass for the cells' sums (cellSums) and a
// read for the rank windows (rankValuesInt), it computes in one pass that
// adds each TD_k's base as it reads it. As in rankValuesInt a
// pseudo-random sample of each point's TD_k gives a window around each
// rank (sampleBounds); the pass adds the TD_k up (the sum and the cells'
// sums, a run of one cell at a time, exact under the bound of sumTD,
// which vMax and the bases' range bound beforehand), counts the values
// below each window and those equal to its sides, keeps the values
// inside (as tdWindows does in sweepRanked's second pass), and takes the
// greatest among those not below the p99 window. The nearest-rank p50
// and p99 are then selected in the windows. The pass takes the points a
// block of heartbeats at a time, so that the block's bases and cells are
// read from memory once for all of them, and the sample's indices are
// drawn once and sorted, so that each point's sample is read in order.
// With sidx (increasing indices, the same for every point) each point's
// sample is instead its samp, td at those indices below n, which a pass
// keeps as it writes td (stratSample); any sample gives the same results,
// or a fallback to finishTD where a window misses its rank.
//
// Each point's td holds n τ − A_k, each in [0, vMax]; base is
// TD_k − (τ − A_k) per heartbeat (nil: off for every one), every base in
// [bMin, bMax]. A point's ok is false, and the caller uses finishTD,
// where tdScan cannot answer exactly: fewer values than tdSampleSize
// samples, values or bases too large for the differences of the scan to
// stay within 2^62 (near) or for n·max |TD_k| < 2^52 (sums that might
// not equal sumTD's float64 sums), or a window that misses its rank. Its
// cells's TD sums may then hold partial sums (finishTD clears them).
func tdScan[V uint32 | int64](pts []tdScanPoint[V], n int, base []int64, off, bMin, bMax int64, evCell []uint8, sidx []int, sc *tdScanScratch) {
	m := tdSampleSize(n)
	if m > 0 && sidx != nil {
		// The points' own samples (samp) at the increasing indices sidx,
		// those below n.
		sidx = sidx[:sort.SearchInts(sidx, n)]
		m = len(sidx)
	}
	var live []*tdScanPoint[V]
	for i := range pts {
		q := &pts[i]
		q.ok = false
		if m > 0 && (sidx == nil || len(q.samp) >= m) && q.vMax < 1<<60 && bMin > -1<<60 && bMax < 1<<60 && len(q.td) == n &&
			float64(n)*max(math.Abs(float64(bMin)), math.Abs(float64(int64(q.vMax)+bMax))) < 1<<52 {
			live = append(live, q)
		}
	}
	if len(live) == 0 {
		return
	}
	if base != nil {
		base = base[:n]
	}
	at := func(td []V, k int) int64 {
		if base != nil {
			return int64(td[k]) + base[k]
		}
		return int64(td[k]) + off
	}
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	idx := sidx
	if idx == nil {
		idx = slices.Grow(sc.idx[:0], m)[:m]
		for j, k := range sampleIndices(n, m) {
			idx[j] = k
		}
		slices.Sort(idx) // sampleBounds does not depend on the sample's order
		sc.idx = idx
	}
	cp := [2]int{windowCap(ranks[0], n, m), windowCap(ranks[1], n, m)} // room that windows rarely outgrow
	sample := slices.Grow(sc.sample[:0], m)[:m]
	sc.sample = sample
	if len(sc.in) < len(live) {
		sc.in = append(sc.in, make([][2][]int64, len(live)-len(sc.in))...)
	}
	for i, q := range live {
		if sidx == nil {
			for j, k := range idx {
				sample[j] = at(q.td, k)
			}
		} else {
			for j, k := range idx {
				b := off
				if base != nil {
					b = base[k]
				}
				sample[j] = q.samp[j] + b
			}
		}
		val, has := sampleBounds(sample, ranks, n)
		// Every TD_k lies in [bMin, vMax + bMax], within 2^61 of 0.
		lo0, hi0, lo1, hi1 := windowEdges(val, has, bMin, int64(q.vMax)+bMax)
		q.w = tdScanWindows{lo: [2]int64{lo0, lo1}, hi: [2]int64{hi0, hi1},
			in: [2][]int64{slices.Grow(sc.in[i][0][:0], cp[0]), slices.Grow(sc.in[i][1][:0], cp[1])}}
		q.wd0, q.dl = uint64(hi0-lo0), uint64(lo0-lo1)
		q.sum, q.mx = 0, math.MinInt64
		if q.cells != nil {
			clear(q.cells.tdSum)
			clear(q.cells.tdN)
		}
	}
	hits := &sc.hits
	withCells := evCell != nil && live[0].cells != nil
	for i := 0; i < n; {
		// The run of heartbeats [i, e) in one cell c (all of them without
		// cells), a block at a time.
		e, c := n, uint8(0)
		if withCells {
			c, e = evCell[i], i+1
			for e < n && evCell[e] == c {
				e++
			}
		}
		for _, q := range live {
			q.runSum = 0
		}
		for a := i; a < e; a += tdScanBlock {
			b := min(a+tdScanBlock, e)
			var bs []int64
			if base != nil {
				bs = base[a:b]
			}
			for _, q := range live {
				s, b0, b1, k := scanBlock(q.td[a:b], bs, off, q.w.lo[0], q.wd0, q.dl, hits)
				q.runSum += s
				q.w.below[0] += b0
				q.w.below[1] += b1
				for _, v := range hits[:k] {
					q.mx = max(q.mx, v)
					q.w.add(v)
				}
			}
		}
		for _, q := range live {
			q.sum += q.runSum
			if withCells {
				q.cells.tdSum[c] += float64(q.runSum)
				q.cells.tdN[c] += float64(e - i)
			}
		}
		i = e
	}
	for i, q := range live {
		sc.in[i] = q.w.in
		r, ok := q.w.ranks(ranks)
		if !ok {
			continue
		}
		q.st = TDStats{Mean: time.Duration(math.Round(float64(q.sum) / float64(n))), Max: time.Duration(q.mx),
			P50: time.Duration(r[0]), P99: time.Duration(r[1])}
		q.last, q.ok = time.Duration(at(q.td, n-1)), true
	}
}

// tdScanPoint is a point of tdScan: its τ − A_k (td, each in [0, vMax])
// and cells (nil without Config.Intervals); its TD statistics and last
// TD_k when ok; and the scan's state.
type tdScanPoint[V uint32 | int64] struct {
	td    []V
	vMax  uint64
	cells *cellSeries
	samp  []int64 // with tdScan's sidx: td[sidx[j]] for each j (a pass's stratified sample)

	st   TDStats
	last time.Duration
	ok   bool

	w               tdScanWindows
	sum, mx, runSum int64
	wd0, dl         uint64 // hi0 − lo0 and lo0 − lo1
}

// tdScanBlock is how many heartbeats tdScan takes at a time, for every
// point, so that their bases and cells stay in the first-level cache; a
// power of two (scanBlock masks its hits' index with tdScanBlock − 1).
const tdScanBlock = 512

// tdScanPool keeps tdScan's memory from one pass to the next: a sweep
// summarizes the points of every pass of every stream, and fresh windows
// would grow anew each time.
var tdScanPool = sync.Pool{New: func() any { return new(tdScanScratch) }}

// tdScanScratch is tdScan's memory.
type tdScanScratch struct {
	idx    []int
	sample []int64
	in     [][2][]int64 // a point's windows' values
	hits   [tdScanBlock]int64
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

// scanBlock returns the sum (wrapping) of the TD_k of a block, each value
// of vs plus its base (bs[k], or off when bs is nil), and how many are
// below lo0 and below lo1 = lo0 − dl, without a branch (about half are
// below the p50 window); it copies to hits those in the window
// [lo0, lo0 + wd0] or not below lo1 (the p99 window, the values above it
// and so the greatest), a branch rarely taken, returning how many. Every
// TD_k and lo0, lo1 must be near, so that x − lo's sign bit says whether
// x < lo. Not inlined, so that its loop keeps its variables in
// registers. The two loops differ only in the base (bs[j], or the constant
// off): they are kept apart so that the common constant-base loop reads no
// base array and tests no nil slice per value.
//
//go:noinline
func scanBlock[V uint32 | int64](vs []V, bs []int64, off, lo0 int64, wd0, dl uint64, hits *[tdScanBlock]int64) (sum int64, below0, below1, k int) {
	// below counts the values below lo0 in its low 32 bits and those below
	// lo1 in its high ones (a block holds at most tdScanBlock values), and
	// k indexes hits through a mask (k < len(vs) ≤ tdScanBlock): fewer
	// values live in the loop, which then keeps them all in registers.
	_ = hits[:len(vs)] // len(vs) ≤ tdScanBlock
	var below uint64
	if bs != nil {
		bs = bs[:len(vs)]
		for j, v := range vs {
			x := int64(v) + bs[j]
			sum += x
			d0 := uint64(x - lo0)
			d1 := d0 + dl
			if d0 <= wd0 || int64(d1) >= 0 {
				hits[k&(tdScanBlock-1)] = x
				k++
			}
			below += d0>>63 + d1>>63<<32
		}
		return sum, int(below & (1<<32 - 1)), int(below >> 32), k
	}
	for _, v := range vs {
		x := int64(v) + off
		sum += x
		d0 := uint64(x - lo0)
		d1 := d0 + dl
		if d0 <= wd0 || int64(d1) >= 0 {
			hits[k&(tdScanBlock-1)] = x
			k++
		}
		below += d0>>63 + d1>>63<<32
	}
	return sum, int(below & (1<<32 - 1)), int(below >> 32), k
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
