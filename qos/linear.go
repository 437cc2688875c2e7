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
// needed to answer a set of parameter values p at once (docs/algorithms.md,
// “Sweeping a parameter in one pass”).
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
	// With Config.Intervals: the grid, and per cell the bucket counts and
	// sums above (cell c's bucket b at c·(len(ps)+1) + b) and the
	// suspected time of segments with scale 0.
	grid                         cellGrid
	cCntU, cCntW                 []float64
	cSU, cSUU, cSV, cSVV, cConst []float64
	// tab, when not nil, maps x in (ps[0], ps[len−1]] to a first guess of
	// bucket(x): tab[int((x − ps[0])·tabInv)] is the number of points below
	// the start of that slot. bucket corrects the guess exactly.
	tab    []int32
	tabInv float64

	// spill, when not nil, receives per evaluated heartbeat c, s, its
	// delay and its cell (pendD and pendCell, set by the replayer just
	// before openSegment) instead of c and s; floor records whether some
	// c_k + s_k·ps[0] < 0 (see linearCurve.floor).
	spill    *linearSpill
	pendD    int64
	pendCell uint8
	floor    bool
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

// newLinearCollectorTab is newLinearCollector with a bucket table of 32
// slots per query point: each slacks then costs a lookup and, mostly, no
// step of search (the points may cluster, so a slot may hold several).
func newLinearCollectorTab(ps []float64, capacity int) *linearCollector {
	l := newLinearCollector(ps, capacity)
	n := len(ps)
	if n < 2 || !(ps[n-1] > ps[0]) {
		return l
	}
	g := 32 * n
	l.tabInv = float64(g) / (ps[n-1] - ps[0])
	if math.IsInf(l.tabInv, 0) || l.tabInv == 0 {
		return l
	}
	l.tab = make([]int32, g+1)
	i := 0
	for c := range l.tab {
		at := ps[0] + float64(c)/l.tabInv
		for i < n && ps[i] < at {
			i++
		}
		l.tab[c] = int32(i)
	}
	return l
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
	if l.tab != nil {
		if x > ps[n-1] {
			return n
		}
		f := (x - ps[0]) * l.tabInv
		if !(f >= 0) {
			f = 0
		}
		i := int(l.tab[min(int(f), len(l.tab)-1)])
		for i > 0 && ps[i-1] >= x {
			i--
		}
		for i < n && ps[i] < x {
			i++
		}
		return i
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

// withCells makes l keep its buckets per time cell of g as well.
func (l *linearCollector) withCells(g cellGrid) {
	n := g.n * (len(l.ps) + 1)
	l.grid = g
	l.cCntU, l.cCntW = make([]float64, n), make([]float64, n)
	l.cSU, l.cSUU, l.cSV, l.cSVV = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	l.cConst = make([]float64, g.n)
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
	// A detector saturates τ at the end of the time.Duration range instead
	// of wrapping (detector.AddSat), which is not linear: near that end the
	// sweep replays per point. The bound keeps a margin above float64's
	// rounding there (its ulp is 2 µs at 2^63 ns).
	if len(l.ps) > 0 && float64(off)+scale*max(l.ps[len(l.ps)-1], 0) >= 0x1p63-0x1p13 {
		return errNotLinear
	}
	l.open, l.off, l.scale, l.start = true, off, scale, at
	if fresh {
		if l.spill != nil {
			c := float64(off - at)
			if len(l.ps) > 0 && c+scale*l.ps[0] < 0 {
				l.floor = true
			}
			l.spill.add(c, scale, l.pendD, l.pendCell)
			return nil
		}
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
	cells := l.cCntU != nil
	var base int
	if cells {
		cl := l.grid.cell(l.start)
		base = cl * (len(l.ps) + 1)
		if l.scale == 0 && end > l.off {
			l.cConst[cl] += float64(end - max(l.off, l.start))
		}
	}
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
		bu := l.bucket(u)
		l.cntU[bu]++
		if cells {
			l.cCntU[base+bu]++
		}
	} else {
		u = float64(end-l.off) / l.scale
		v = float64(l.start-l.off) / l.scale
		bu := l.bucket(u)
		l.sU[bu] += l.scale
		l.sUU[bu] += l.scale * u
		l.cntU[bu]++
		bv := l.bucket(v)
		l.sV[bv] += l.scale
		l.sVV[bv] += l.scale * v
		if cells {
			l.cCntU[base+bu]++
			l.cSU[base+bu] += l.scale
			l.cSUU[base+bu] += l.scale * u
			l.cSV[base+bv] += l.scale
			l.cSVV[base+bv] += l.scale * v
		}
	}
	bw := l.bucket(min(v, l.uPrev))
	l.cntW[bw]++
	if cells {
		l.cCntW[base+bw]++
	}
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

	// With Config.Intervals: the collector (its per-cell buckets, made
	// suffix sums per cell), the base replay's cells (observed time), the
	// cell of each evaluated heartbeat, and per cell Σ td0 and Σ scale.
	lin              *linearCollector
	cells            *cellSeries
	evCell           []uint8
	cTD0, cScale, cN []float64

	// n is the number of evaluated heartbeats, and the last one's td0,
	// scale and floor (−Inf without a floor).
	n                             int
	lastTD0, lastScale, lastFloor float64
	// When the per-heartbeat data was spilled (fromSpill; td0, scales and
	// floor are then nil): per query point, Σ_k TD_k(p) under the floor
	// and its sums per cell.
	floorSum   []float64
	floorCells [][]float64
}

// replayLinear runs one replay of det collecting slacks for the query
// points ps; it returns errNotLinear when det's freshness point is not
// linear on this stream.
func replayLinear(det detector.Detector, src Source, cfg Config, ps []float64) (*linearCurve, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.RecordMistakes = false
	qs := slices.Clone(ps)
	slices.Sort(qs)
	qs = slices.Compact(qs)
	// On a long Source that is not a slice the per-heartbeat data goes to
	// a file, read back sequentially (fromSpill), so that memory does not
	// grow with the stream.
	_, isSlice := src.(sliceSource)
	spilled := !isSlice && src.Len() > cfg.Spill.inMemory()
	hint := src.Len()
	if spilled {
		hint = 0
	}
	lin := newLinearCollectorTab(qs, hint)
	if spilled {
		sp, err := newLinearSpill(cfg.Spill.Dir)
		if err != nil {
			return nil, err
		}
		defer sp.close()
		lin.spill = sp
	}
	r := newReplayer(det, cfg, lin, hint)
	if cfg.Intervals {
		r.withCells(src)
		lin.withCells(r.cells.grid)
	}
	if err := r.run(src); err != nil {
		return nil, err
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
	if spilled {
		cellN := 0
		if r.cells != nil {
			cellN = r.cells.grid.n
		}
		if err := lc.fromSpill(lin.spill, sync, int64(cfg.DelayOffset), lin.floor, cellN); err != nil {
			return nil, err
		}
		if lc.n != res.Evaluated {
			return nil, fmt.Errorf("qos: internal error: %d linear TD samples for %d evaluated heartbeats", lc.n, res.Evaluated)
		}
		if lin.floor {
			lc.floor = []float64{} // not nil: TD is floored (sums in floorSum)
		}
		if r.cells != nil {
			lc.setCells(lin, r.cells, nil)
		}
		return lc, nil
	}
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
	if r.cells != nil {
		lc.setCells(lin, r.cells, r.evCell)
	}
	n := len(lc.td0)
	lc.n = n
	if n > 0 {
		lc.lastTD0, lc.lastScale, lc.lastFloor = lc.td0[n-1], lc.scales[n-1], math.Inf(-1)
		if lc.floor != nil {
			lc.lastFloor = lc.floor[n-1]
		}
	}
	if n != res.Evaluated {
		return nil, fmt.Errorf("qos: internal error: %d linear TD samples for %d evaluated heartbeats", n, res.Evaluated)
	}
	if lc.sameS && n > 0 {
		r, mx := rankValues(lc.td0, [2]int{rank(0.50, n), rank(0.99, n)}, tdSampleSize(n))
		lc.tdRanks = [3]float64{r[0], r[1], mx}
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
	res.Suspected = detector.RoundNanos((max(susp, 0)))

	n := lc.n
	if n > 0 {
		if lc.floor == nil {
			res.TD.Mean = detector.RoundNanos(((lc.sumTD0 + p*lc.sumScale) / float64(n)))
			res.LastTD = detector.RoundNanos((lc.lastTD0 + lc.lastScale*p))
		} else {
			var sum float64
			if lc.floorSum != nil {
				sum = lc.floorSum[i]
			} else {
				for k, c := range lc.td0 {
					sum += max(c+lc.scales[k]*p, lc.floor[k])
				}
			}
			res.TD.Mean = detector.RoundNanos((sum / float64(n)))
			res.LastTD = detector.RoundNanos((max(lc.lastTD0+lc.lastScale*p, lc.lastFloor)))
		}
		if lc.sameS {
			sh := lc.lastScale * p
			res.TD.P50 = detector.RoundNanos((lc.tdRanks[0] + sh))
			res.TD.P99 = detector.RoundNanos((lc.tdRanks[1] + sh))
			res.TD.Max = detector.RoundNanos((lc.tdRanks[2] + sh))
		} else {
			if lc.quant == nil {
				lc.quant = lc.allPercentiles()
			}
			q := lc.quant[i]
			res.TD.P50 = detector.RoundNanos((q.p50))
			res.TD.P99 = detector.RoundNanos((q.p99))
			res.TD.Max = detector.RoundNanos((q.max))
		}
	}
	res.setRates()
	if lc.cells != nil {
		res.setCI(lc.cellsAt(i, p))
	}
	return res, nil
}

// setCells keeps what the per-point intervals need: the collector's
// per-cell buckets turned into suffix sums per cell, the base replay's
// cells, and per cell Σ td0_k and Σ scale_k.
func (lc *linearCurve) setCells(lin *linearCollector, cells *cellSeries, evCell []uint8) {
	b := len(lc.ps) + 1
	for c := range cells.grid.n {
		o := c * b
		for i := b - 2; i >= 0; i-- {
			lin.cCntU[o+i] += lin.cCntU[o+i+1]
			lin.cCntW[o+i] += lin.cCntW[o+i+1]
			lin.cSU[o+i] += lin.cSU[o+i+1]
			lin.cSUU[o+i] += lin.cSUU[o+i+1]
			lin.cSV[o+i] += lin.cSV[o+i+1]
			lin.cSVV[o+i] += lin.cSVV[o+i+1]
		}
	}
	lc.lin, lc.cells, lc.evCell = lin, cells, evCell
	if lc.cN != nil {
		return // fromSpill summed them
	}
	lc.cTD0, lc.cScale, lc.cN = make([]float64, cells.grid.n), make([]float64, cells.grid.n), make([]float64, cells.grid.n)
	for k, c := range evCell {
		lc.cTD0[c] += lc.td0[k]
		lc.cScale[c] += lc.scales[k]
		lc.cN[c]++
	}
}

// cellsAt returns the cells of query point p, the i-th.
func (lc *linearCurve) cellsAt(i int, p float64) *cellSeries {
	s := newCellSeries(lc.cells.grid)
	copy(s.span, lc.cells.span)
	l := lc.lin
	b := len(lc.ps) + 1
	for c := range s.grid.n {
		o := c*b + i + 1
		s.mist[c] = l.cCntU[o] - l.cCntW[o]
		s.susp[c] = max((l.cSUU[o]-p*l.cSU[o])-(l.cSVV[o]-p*l.cSV[o])+l.cConst[c], 0)
	}
	if lc.floor == nil {
		for c := range s.grid.n {
			s.tdSum[c] = lc.cTD0[c] + p*lc.cScale[c]
		}
	} else if lc.floorCells != nil {
		copy(s.tdSum, lc.floorCells[i])
	} else {
		for k, c := range lc.evCell {
			s.tdSum[c] += max(lc.td0[k]+lc.scales[k]*p, lc.floor[k])
		}
	}
	copy(s.tdN, lc.cN)
	return s
}
