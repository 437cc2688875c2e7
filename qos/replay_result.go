// The end of a replay: the Result's rates, spans and TD statistics.

package qos

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

func (r *replayer) finish() (Result, error) {
	res := r.res
	if !r.evaluating {
		return Result{}, fmt.Errorf("%w: all %d fresh heartbeats were in warm-up", ErrNoEvaluation, res.WarmUp)
	}
	res.End = r.prevA
	res.Span = res.End - res.Start
	if r.out && r.cfg.RecordMistakes {
		res.MistakeIntervals = append(res.MistakeIntervals, Interval{Start: r.openStart, End: res.End})
	}
	sync := r.clockSync()
	res.setClock(sync, r.cfg.DelayOffset)
	if r.spill != nil {
		defer r.spill.close()
		if r.cells != nil {
			if err := r.setSpan(res.Start); err != nil {
				return Result{}, err
			}
		}
		st, last, err := tdStatsSpilled(r.spill, sync, int64(r.cfg.DelayOffset), r.cells)
		if err != nil {
			return Result{}, err
		}
		res.TD, res.LastTD = st, time.Duration(last)
		res.setRates()
		if r.cells != nil {
			res.setCI(r.cells)
		}
		return res, nil
	}
	td := r.tdArr // reused in place: τ − A_k becomes TD_k
	for k := range td {
		td[k] += r.tdBase(sync, k)
	}
	if len(td) > 0 {
		res.LastTD = time.Duration(td[len(td)-1])
	}
	if r.cells != nil {
		if err := r.setSpan(res.Start); err != nil {
			return Result{}, err
		}
		if r.lin == nil {
			r.cells.setTD(td, r.evCell)
		}
	}
	res.TD = tdStats(td)
	res.setRates()
	if r.cells != nil && r.lin == nil {
		res.setCI(r.cells)
	}
	return res, nil
}

// errArrivalOrder is the error of a replay whose n-th heartbeat hb arrives
// before the previous arrival prev.
func errArrivalOrder(n int, hb detector.Heartbeat, prev time.Duration) error {
	return fmt.Errorf("qos: heartbeat %d (seq %d) arrives at %v, before the previous arrival %v: replay needs arrival order",
		n, hb.Seq, hb.Arrival, prev)
}

// clockSyncOf decides, after a pass, whether TD is send-based: every
// heartbeat had its send time (allSent) and, in ClockAuto, every delay was
// plausible (plaus).
func clockSyncOf(mode ClockMode, allSent, plaus bool) bool {
	switch mode {
	case ClockSynchronized:
		return allSent
	case ClockUnsynchronized:
		return false
	}
	return allSent && plaus
}

// setClock sets ClockSync, TDBasis and DelayOffset (d̄ = offset when
// arrival-based) for the decision sync.
func (res *Result) setClock(sync bool, offset time.Duration) {
	res.ClockSync = sync
	if sync {
		res.TDBasis = TDSend
	} else {
		res.TDBasis = TDArrival
		res.DelayOffset = offset
	}
}

// setSpan fills the span per cell from start, from r.spans when the
// replays of the stream share one.
func (r *replayer) setSpan(start time.Duration) error {
	if r.spans != nil {
		return r.spans.fill(r.cells, start)
	}
	return r.cells.setSpan(r.src, start)
}

// setRates fills MR, QAP and the mean durations from Mistakes, Suspected and
// Span.
func (res *Result) setRates() {
	res.MRPerSecond, res.QAP = 0, 1
	res.MeanTM, res.MeanTMR, res.MeanTG = 0, 0, 0
	if res.Span > 0 {
		res.MRPerSecond = float64(res.Mistakes) / res.Span.Seconds()
		res.QAP = 1 - float64(res.Suspected)/float64(res.Span)
	}
	if res.Mistakes > 0 {
		m := float64(res.Mistakes)
		res.MeanTM = time.Duration(math.Round(float64(res.Suspected) / m))
		res.MeanTMR = time.Duration(math.Round(float64(res.Span) / m))
		res.MeanTG = res.MeanTMR - res.MeanTM
	}
}

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
	r50, r99 := rank(0.50, n), rank(0.99, n)
	if r, ok := rankValuesInt(td, mn, mx, [2]int{r50, r99}, 16384); ok {
		s.P50, s.P99 = time.Duration(r[0]), time.Duration(r[1])
		return s
	}
	// selectRank leaves td partitioned around the median, so the p99 is
	// selected among the values above it only.
	s.P50 = time.Duration(selectRank(td, r50))
	if r99 > r50 {
		s.P99 = time.Duration(selectRank(td[r50+1:], r99-r50-1))
	} else {
		s.P99 = s.P50
	}
	return s
}

// rank returns the 0-based nearest-rank index ⌈q·n⌉ − 1.
func rank(q float64, n int) int {
	k := int(math.Ceil(q*float64(n))) - 1
	return min(max(k, 0), n-1)
}

// selectRank returns the k-th smallest element (0-based) of a, reordering a
// (quickselect with median-of-three pivots; O(len(a)) expected).
func selectRank[T int64 | float64](a []T, k int) T {
	lo, hi := 0, len(a)-1
	for hi > lo {
		if hi-lo < 16 {
			slices.Sort(a[lo : hi+1])
			return a[k]
		}
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
			return a[k]
		}
	}
	return a[k]
}

// ClocksLookSynchronized applies ClockAuto's rule to a whole stream: every
// heartbeat has a send time and its apparent one-way delay A − σ lies in
// [0, MaxPlausibleDelay]. Callers use it to configure detectors that measure
// TD themselves (SFD) the way the replay will.
func ClocksLookSynchronized(hbs []detector.Heartbeat) bool {
	ok, _ := ClocksLookSynchronizedIn(sliceSource(hbs))
	return ok
}

// ClocksLookSynchronizedIn is ClocksLookSynchronized over a Source; the
// error is the Source's.
func ClocksLookSynchronizedIn(src Source) (bool, error) {
	if src.Len() == 0 {
		return false, nil
	}
	seq, done := src.Pass()
	ok := true
	for hb := range seq {
		d := hb.Arrival - hb.Sent
		if !hb.HasSent || d < 0 || d > MaxPlausibleDelay {
			ok = false
			break
		}
	}
	return ok, done()
}

// rankValuesInt returns the values of ranks (0-based, increasing) among td,
// whose least and greatest values are mn and mx, without reordering td: a
// pseudo-random sample of m values gives a window per rank (sampleBounds),
// one read of td counts the values below each window and keeps those in it,
// and the selection runs on the small windows. ok is false (the caller
// selects from all values) for a short td, when mx − mn overflows, or when
// a window misses its rank.
func rankValuesInt(td []int64, mn, mx int64, ranks [2]int, m int) (r [2]int64, ok bool) {
	n := len(td)
	if n < 8*m || (mn < 0 && mx > math.MaxInt64+mn) {
		return r, false
	}
	sample := make([]int64, m)
	for j, k := range sampleIndices(n, m) {
		sample[j] = td[k]
	}
	val, has := sampleBounds(sample, ranks, n)
	// A side beyond the sample is the least or greatest value, so every
	// difference below stays within mx − mn.
	lo0, hi0, lo1, hi1 := mn, mx, mn, mx
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
	// Branch-free: the sign bit of v − lo is 1 iff v < lo.
	var b0, b1 int
	in0 := make([]int64, 0, 1024)
	in1 := make([]int64, 0, 1024)
	const block = 4096
	for a := 0; a < n; a += block {
		vs := td[a:min(a+block, n)]
		in0, in1 = slices.Grow(in0, len(vs)), slices.Grow(in1, len(vs))
		n0, n1 := len(in0), len(in1)
		w0, w1 := in0[:cap(in0)], in1[:cap(in1)]
		for _, v := range vs {
			d0, d1 := uint64(v-lo0), uint64(v-lo1)
			b0 += int(d0 >> 63)
			b1 += int(d1 >> 63)
			w0[n0] = v
			n0 += int(((d0 | uint64(hi0-v)) >> 63) ^ 1)
			w1[n1] = v
			n1 += int(((d1 | uint64(hi1-v)) >> 63) ^ 1)
		}
		in0, in1 = w0[:n0], w1[:n1]
	}
	r0, r1 := ranks[0]-b0, ranks[1]-b1
	if r0 < 0 || r0 >= len(in0) || r1 < 0 || r1 >= len(in1) {
		return r, false
	}
	return [2]int64{selectRank(in0, r0), selectRank(in1, r1)}, true
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
