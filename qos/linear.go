package qos

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// errNotLinear reports that a detector's freshness point was not linear in
// its parameter somewhere on the stream (no detector.Linear, or LinearForm
// returned ok = false, for example because a clamp was active). Sweep then
// falls back to one replay per point.
var errNotLinear = errors.New("qos: freshness point not linear in the swept parameter")

// linearCollector records, during one replay of a detector.Linear, what is
// needed to answer a set of parameter values p at once (ALGORITHMS.md §9.4).
//
// The evaluated part of the stream is cut into segments, one per processed
// heartbeat: segment j runs from its heartbeat's arrival S_j to the next
// arrival E_j, and over it τ_j(p) = off_j + scale_j·p. With the slacks
// u_j = (E_j − off_j)/scale_j and v_j = (S_j − off_j)/scale_j (v_j ≤ u_j):
//
//   - the monitor suspects somewhere in segment j iff p < u_j, and already
//     at its start iff p < v_j;
//   - a trust→suspect transition happens in segment j iff p < u_j and not
//     (p < v_j and p < u_{j−1}), the previous segment having ended in
//     suspicion; so mistakes(p) = #{u_j > p} − #{w_j > p} with
//     w_j = min(v_j, u_{j−1}) (u before the first segment is −∞);
//   - the time suspected in segment j is E_j − max(τ_j, S_j) when positive,
//     which is scale_j·((u_j − p)⁺ − (v_j − p)⁺).
//
// Counts and sums over {u_j > p} are prefix sums over the slacks in
// increasing order. Since the query points are known before the pass, the
// slacks are not stored and sorted: each is dropped into the bucket between
// two consecutive query points (a binary search among them) and the buckets
// are summed from the top, which gives the same exact counts and sums in
// O(log P) per heartbeat and O(P) memory. TD_k(p) = c_k + scale_k·p with
// c_k = off_k − A_k plus the clock-dependent base is kept per heartbeat for
// the TD percentiles (TD_k is at least the base: see Result.TD).
type linearCollector struct {
	det       detector.Linear // the replayed detector, once seen
	ps        []float64       // query points, sorted, distinct
	open      bool
	off       time.Duration
	scale     float64
	start     time.Duration
	uPrev     float64
	cntU      []int     // per bucket b (b = #{p < x}): number of u, of w
	cntW      []int     //
	sU, sUU   []float64 // per bucket: Σ scale, Σ scale·u over u with scale > 0
	sV, sVV   []float64 // per bucket: Σ scale, Σ scale·v over v with scale > 0
	constSusp float64   // suspected time of segments with scale 0, ns
	c, s      []float64 // per evaluated heartbeat: τ(0) − A_k (ns) and scale
}

func newLinearCollector(ps []float64, capacity int) *linearCollector {
	b := len(ps) + 1
	return &linearCollector{
		ps: ps, uPrev: math.Inf(-1),
		cntU: make([]int, b), cntW: make([]int, b),
		sU: make([]float64, b), sUU: make([]float64, b),
		sV: make([]float64, b), sVV: make([]float64, b),
		c: make([]float64, 0, capacity), s: make([]float64, 0, capacity),
	}
}

// bucket returns the number of query points strictly below x. The search
// is written without data-dependent jumps (the compiler emits conditional
// moves): slacks fall anywhere among the points, so a branchy binary search
// would mispredict about half its comparisons.
func (l *linearCollector) bucket(x float64) int {
	ps := l.ps
	n := len(ps)
	if n == 0 || x <= ps[0] {
		return 0 // the common case for v and w: τ after the heartbeat
	}
	base := 0
	for n > 1 {
		half := n >> 1
		if ps[base+half] < x {
			base += half
		}
		n -= half
	}
	if ps[base] < x {
		base++
	}
	return base
}

func (l *linearCollector) breakChain() {
	l.open = false
	l.uPrev = math.Inf(-1)
}

func (l *linearCollector) openSegment(det detector.Detector, at time.Duration, fresh bool) error {
	if l.det == nil {
		ld, isLin := det.(detector.Linear)
		if !isLin {
			return errNotLinear
		}
		l.det = ld
	}
	off, scale, ok := l.det.LinearForm()
	if !ok || scale < 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return errNotLinear
	}
	l.open, l.off, l.scale, l.start = true, off, scale, at
	if fresh {
		l.c = append(l.c, float64(off-at))
		l.s = append(l.s, scale)
	}
	return nil
}

func (l *linearCollector) closeSegment(end time.Duration) {
	if !l.open {
		return
	}
	l.open = false
	var u, v float64
	if l.scale == 0 {
		u, v = math.Inf(-1), math.Inf(-1)
		if end > l.off {
			u = math.Inf(1)
			l.constSusp += float64(end - max(l.off, l.start))
		}
		if l.start > l.off {
			v = math.Inf(1)
		}
	} else {
		u = float64(end-l.off) / l.scale
		v = float64(l.start-l.off) / l.scale
		bu := l.bucket(u)
		l.sU[bu] += l.scale
		l.sUU[bu] += l.scale * u
		bv := l.bucket(v)
		l.sV[bv] += l.scale
		l.sVV[bv] += l.scale * v
	}
	l.cntU[l.bucket(u)]++
	l.cntW[l.bucket(min(v, l.uPrev))]++
	l.uPrev = u
}

// linearCurve answers the query points from a finished collection.
type linearCurve struct {
	base    Result // counts, span and clock decision of the pass
	ps      []float64
	cntU    []int // suffix sums: index i counts buckets ≥ i
	cntW    []int
	sU, sUU []float64
	sV, sVV []float64
	constS  float64
	td0     []float64 // c_k + base_k, ns
	scales  []float64
	sameS   bool // every scale equal: TD percentiles shift with p
	// floor, when not nil, holds per heartbeat the least TD_k (its base:
	// A_k − σ_k or d̄), reached when τ_{k+1}(p) < A_k at some query point:
	// TD_k(p) = max(td0_k + scale_k·p, floor_k).
	floor    []float64
	tdRanks  [3]float64
	sumTD0   float64
	sumScale float64
	quant    []tdQuantiles // per query point, when !sameS
}

// replayLinear runs one replay of det collecting slacks for the query
// points ps; it returns errNotLinear when det's freshness point is not
// linear on this stream.
func replayLinear(det detector.Detector, hbs []detector.Heartbeat, cfg Config, ps []float64) (*linearCurve, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.RecordMistakes = false
	qs := slices.Clone(ps)
	slices.Sort(qs)
	qs = slices.Compact(qs)
	lin := newLinearCollector(qs, len(hbs))
	r := newReplayer(det, cfg, lin, len(hbs))
	for _, hb := range hbs {
		if err := r.step(hb); err != nil {
			return nil, err
		}
	}
	res, err := r.finish()
	if err != nil {
		return nil, err
	}
	lc := &linearCurve{base: res, ps: qs, constS: lin.constSusp, scales: lin.s,
		cntU: lin.cntU, cntW: lin.cntW, sU: lin.sU, sUU: lin.sUU, sV: lin.sV, sVV: lin.sVV}
	for i := len(qs) - 1; i >= 0; i-- {
		lc.cntU[i] += lc.cntU[i+1]
		lc.cntW[i] += lc.cntW[i+1]
		lc.sU[i] += lc.sU[i+1]
		lc.sUU[i] += lc.sUU[i+1]
		lc.sV[i] += lc.sV[i+1]
		lc.sVV[i] += lc.sVV[i+1]
	}
	sync := res.ClockSync
	lc.td0 = lin.c
	lc.sameS = true
	for k := range lc.td0 {
		// Scales are ≥ 0, so τ(p) ≥ A_k at the smallest query point means
		// at every point.
		if lc.td0[k]+lin.s[k]*qs[0] < 0 && lc.floor == nil {
			lc.floor = make([]float64, len(lc.td0))
			for j := range k {
				lc.floor[j] = float64(r.tdBase(sync, j))
			}
		}
		b := float64(r.tdBase(sync, k))
		if lc.floor != nil {
			lc.floor[k] = b
		}
		lc.td0[k] += b
		lc.sumTD0 += lc.td0[k]
		lc.sumScale += lin.s[k]
		if lin.s[k] != lin.s[0] {
			lc.sameS = false
		}
	}
	if lc.floor != nil {
		lc.sameS = false
	}
	n := len(lc.td0)
	if n != res.Evaluated {
		return nil, fmt.Errorf("qos: internal error: %d linear TD samples for %d evaluated heartbeats", n, res.Evaluated)
	}
	if lc.sameS && n > 0 {
		buf := slices.Clone(lc.td0)
		lc.tdRanks[0] = selectRank(buf, rank(0.50, n))
		lc.tdRanks[1] = selectRank(buf, rank(0.99, n))
		lc.tdRanks[2] = slices.Max(buf)
	}
	return lc, nil
}

// at returns the QoS for parameter value p, one of the query points (in
// the detector's LinearForm units).
func (lc *linearCurve) at(p float64) (Result, error) {
	i, found := slices.BinarySearch(lc.ps, p)
	if !found {
		return Result{}, fmt.Errorf("qos: internal error: %g is not a query point", p)
	}
	res := lc.base
	res.MistakeIntervals = nil
	// Buckets above i hold the slacks > p.
	res.Mistakes = lc.cntU[i+1] - lc.cntW[i+1]
	susp := (lc.sUU[i+1] - p*lc.sU[i+1]) - (lc.sVV[i+1] - p*lc.sV[i+1]) + lc.constS
	res.Suspected = time.Duration(math.Round(max(susp, 0)))

	n := len(lc.td0)
	if n > 0 {
		if lc.floor == nil {
			res.TD.Mean = time.Duration(math.Round((lc.sumTD0 + p*lc.sumScale) / float64(n)))
			res.LastTD = time.Duration(math.Round(lc.td0[n-1] + lc.scales[n-1]*p))
		} else {
			var sum float64
			for k, c := range lc.td0 {
				sum += max(c+lc.scales[k]*p, lc.floor[k])
			}
			res.TD.Mean = time.Duration(math.Round(sum / float64(n)))
			res.LastTD = time.Duration(math.Round(max(lc.td0[n-1]+lc.scales[n-1]*p, lc.floor[n-1])))
		}
		if lc.sameS {
			sh := lc.scales[0] * p
			res.TD.P50 = time.Duration(math.Round(lc.tdRanks[0] + sh))
			res.TD.P99 = time.Duration(math.Round(lc.tdRanks[1] + sh))
			res.TD.Max = time.Duration(math.Round(lc.tdRanks[2] + sh))
		} else {
			if lc.quant == nil {
				lc.quant = lc.allPercentiles()
			}
			q := lc.quant[i]
			res.TD.P50 = time.Duration(math.Round(q.p50))
			res.TD.P99 = time.Duration(math.Round(q.p99))
			res.TD.Max = time.Duration(math.Round(q.max))
		}
	}
	res.setRates()
	return res, nil
}

// tdQuantiles holds, per query point, the exact nearest-rank p50 and p99
// and the maximum of TD_k(p) = td0_k + scale_k·p (at least floor_k).
type tdQuantiles struct{ p50, p99, max float64 }

// allPercentiles computes tdQuantiles for every query point, exactly.
//
// It selects as Floyd and Rivest do: for each point the two ranks are first
// located in a pseudo-random sample of 16384 values, which gives for each a
// window that holds it with overwhelming probability; one pass over all
// values counts those below each window and keeps those inside, and the
// final selection runs on the small windows. The pass is blocked: each block
// of values is read once and evaluated at every point, so the 16 bytes per
// heartbeat cross the memory bus once rather than once per point. If a
// window misses its rank (or the stream is small), that point selects from
// all values instead, so every answer is exact.
func (lc *linearCurve) allPercentiles() []tdQuantiles {
	n := len(lc.td0)
	P := len(lc.ps)
	out := make([]tdQuantiles, P)
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	full := func(p float64) tdQuantiles {
		buf := make([]float64, n)
		m := math.Inf(-1)
		for k, c := range lc.td0 {
			v := c + lc.scales[k]*p
			if lc.floor != nil && v < lc.floor[k] {
				v = lc.floor[k]
			}
			buf[k] = v
			if v > m {
				m = v
			}
		}
		return tdQuantiles{selectRank(buf, ranks[0]), selectRank(buf, ranks[1]), m}
	}
	const m = 16384
	if n < 8*m {
		for i, p := range lc.ps {
			out[i] = full(p)
		}
		return out
	}
	idx := make([]int, m)
	x := uint64(0x9e3779b97f4a7c15)
	for j := range idx {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		idx[j] = int(x % uint64(n))
	}
	type window struct {
		lo, hi [2]float64
		below  [2]int
		in     [2][]float64
		max    float64
	}
	ws := make([]window, P)
	sample := make([]float64, m)
	for i, p := range lc.ps {
		for j, k := range idx {
			sample[j] = lc.td0[k] + lc.scales[k]*p
			if lc.floor != nil && sample[j] < lc.floor[k] {
				sample[j] = lc.floor[k]
			}
		}
		w := &ws[i]
		w.max = math.Inf(-1)
		for j, r := range ranks {
			q := float64(r) / float64(n)
			margin := 4*math.Sqrt(m*q*(1-q)) + 4
			a, b := int(q*m-margin), int(math.Ceil(q*m+margin))
			w.lo[j], w.hi[j] = math.Inf(-1), math.Inf(1)
			if a >= 0 {
				w.lo[j] = selectRank(sample, a)
			}
			if b < m {
				w.hi[j] = selectRank(sample, b)
			}
			w.in[j] = make([]float64, 0, int(float64(n)*(2*margin+2)/m)+16)
		}
	}
	const block = 4096
	for b0 := 0; b0 < n; b0 += block {
		cs := lc.td0[b0:min(b0+block, n)]
		ss := lc.scales[b0 : b0+len(cs)]
		var fl []float64
		if lc.floor != nil {
			fl = lc.floor[b0 : b0+len(cs)]
		}
		for i, p := range lc.ps {
			w := &ws[i]
			lo0, hi0, lo1, hi1 := w.lo[0], w.hi[0], w.lo[1], w.hi[1]
			below0, below1, mx := w.below[0], w.below[1], w.max
			in0, in1 := w.in[0], w.in[1]
			// Branch-free counting (the sign bit of v − lo is 1 iff
			// v < lo): a comparison with the median would be mispredicted
			// half the time. Not the max builtin: its NaN handling is slow.
			for k, c := range cs {
				v := c + ss[k]*p
				if fl != nil && v < fl[k] {
					v = fl[k]
				}
				if v > mx {
					mx = v
				}
				b0 := math.Float64bits(v - lo0)
				b1 := math.Float64bits(v - lo1)
				below0 += int(b0 >> 63)
				below1 += int(b1 >> 63)
				if (b0|math.Float64bits(hi0-v))>>63 == 0 {
					in0 = append(in0, v)
				}
				if (b1|math.Float64bits(hi1-v))>>63 == 0 {
					in1 = append(in1, v)
				}
			}
			w.below[0], w.below[1], w.max = below0, below1, mx
			w.in[0], w.in[1] = in0, in1
		}
	}
	for i := range ws {
		w := &ws[i]
		r0, r1 := ranks[0]-w.below[0], ranks[1]-w.below[1]
		if r0 < 0 || r0 >= len(w.in[0]) || r1 < 0 || r1 >= len(w.in[1]) {
			out[i] = full(lc.ps[i])
			continue
		}
		out[i] = tdQuantiles{selectRank(w.in[0], r0), selectRank(w.in[1], r1), w.max}
		w.in = [2][]float64{}
	}
	return out
}
