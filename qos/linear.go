package qos

import (
	"errors"
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
	// c_k + s_k·ps[0] < 0 (see linearCurve.floor), spilled or not.
	spill    *linearSpill
	pendD    int64
	pendCell uint8
	floor    bool

	// sides are collectors of other query points fed the same segments
	// (replayLinearApart); they keep no per-heartbeat data of their own
	// (c, s and spill are this collector's). dead marks a side that left
	// the linear range (the saturation bound of its points) and is fed no
	// more.
	sides []*linearCollector
	dead  bool
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
	for _, sd := range l.sides {
		sd.withCells(g)
	}
}

func (l *linearCollector) breakChain() {
	l.open = false
	l.uPrev = math.Inf(-1)
	for _, sd := range l.sides {
		sd.breakChain()
	}
}

// saturates reports whether τ = off + scale·p reaches the end of the
// time.Duration range at l's greatest query point.
func (l *linearCollector) saturates(off time.Duration, scale float64) bool {
	return len(l.ps) > 0 && float64(off)+scale*max(l.ps[len(l.ps)-1], 0) >= 0x1p63-0x1p13
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
	if l.saturates(off, scale) {
		return errNotLinear
	}
	l.open, l.off, l.scale, l.start = true, off, scale, at
	for _, sd := range l.sides {
		if sd.dead {
			continue
		}
		if sd.saturates(off, scale) {
			sd.dead, sd.open = true, false
			continue
		}
		sd.open, sd.off, sd.scale, sd.start = true, off, scale, at
		if fresh && float64(off-at)+scale*sd.ps[0] < 0 {
			sd.floor = true
		}
	}
	if fresh {
		c := float64(off - at)
		if len(l.ps) > 0 && c+scale*l.ps[0] < 0 {
			l.floor = true
		}
		if l.spill != nil {
			l.spill.add(c, scale, l.pendD, l.pendCell)
			return nil
		}
		l.c = append(l.c, c)
		l.s = append(l.s, scale)
	}
	return nil
}

// closeSegment ends the open segment at end, in l and in its open sides
// (opened with l: the same off, scale and start), whose slacks and cell
// are the same as l's and are computed once.
func (l *linearCollector) closeSegment(end time.Duration) {
	if !l.open {
		return
	}
	cl := -1
	if l.cCntU != nil {
		cl = l.grid.cell(l.start)
	}
	var u, v float64
	if l.scale == 0 {
		u, v = math.Inf(-1), math.Inf(-1)
		if end > l.off {
			u = math.Inf(1)
		}
		if l.start > l.off {
			v = math.Inf(1)
		}
	} else {
		u = float64(end-l.off) / l.scale
		v = float64(l.start-l.off) / l.scale
	}
	for _, sd := range l.sides {
		if sd.open {
			sd.closeWith(end, u, v, cl)
		}
	}
	l.closeWith(end, u, v, cl)
}

// closeWith adds the open segment ending at end, with slacks u and v, to
// the buckets (and to those of time cell cl when l keeps cells).
func (l *linearCollector) closeWith(end time.Duration, u, v float64, cl int) {
	l.open = false
	cells := l.cCntU != nil
	var base int
	if cells {
		base = cl * (len(l.ps) + 1)
		if l.scale == 0 && end > l.off {
			l.cConst[cl] += float64(end - max(l.off, l.start))
		}
	}
	if l.scale == 0 {
		if end > l.off {
			l.constSusp += float64(end - max(l.off, l.start))
		}
		bu := l.bucket(u)
		l.cntU[bu]++
		if cells {
			l.cCntU[base+bu]++
		}
	} else {
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

// replayLinear runs one replay of det collecting slacks for the query
// points ps; it returns errNotLinear when det's freshness point is not
// linear on this stream.
func replayLinear(det detector.Detector, src Source, cfg Config, ps []float64) (*linearCurve, error) {
	return replayLinearApart(det, src, cfg, ps, nil, nil, new(linearScratch))
}

// replayLinearApart is replayLinear that also answers each query point of
// apart as a replay with that point alone would (a replay of the detector
// at that point, with ps = {that point}): its own collector is fed the
// same segments, so that its sums are added in the same order as alone,
// and the replay itself is shared (det's state and linear form do not
// depend on the point). It calls side with each apart[j]'s curve, before
// it builds the next one and ps' (so that one is kept at a time), but not
// for a point that alone leaves the linear range where ps do not (its
// replay alone would fall back to a replay per point). The replay's
// per-heartbeat data in memory (c, s, delays, cells) goes to sc, which
// the curves read (c as their td0) until their points are taken.
func replayLinearApart(det detector.Detector, src Source, cfg Config, ps, apart []float64, side func(j int, lc *linearCurve) error, sc *linearScratch) (*linearCurve, error) {
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
	lin := newLinearCollectorTab(qs, 0)
	lin.c, lin.s = reuse(&sc.c, hint), reuse(&sc.s, hint)
	for _, a := range apart {
		lin.sides = append(lin.sides, newLinearCollector([]float64{a}, 0))
	}
	if spilled {
		sp, err := newLinearSpill(cfg.Spill.Dir)
		if err != nil {
			return nil, err
		}
		defer sp.close()
		lin.spill = sp
	}
	r := newReplayer(det, cfg, lin, 0) // no storage of its own: sc's
	if hint > 0 {
		r.delay = reuse(&sc.delay, hint)
	}
	if cfg.Intervals {
		r.withCells(src)
		r.evCell = reuse(&sc.evCell, hint)
		lin.withCells(r.cells.grid)
	}
	err := r.run(src)
	keep(&sc.c, lin.c)
	keep(&sc.s, lin.s)
	keep(&sc.delay, r.delay)
	keep(&sc.evCell, r.evCell)
	if err != nil {
		return nil, err
	}
	res, err := r.finish()
	if err != nil {
		return nil, err
	}
	// The TD_k at p = 0 and, where some collector's TD is floored, the
	// floors: the same for lin and its sides, which share them.
	var td0, floors []float64
	if !spilled {
		td0, floors = lin.shiftTD0(r, res.ClockSync)
	}
	for j, sd := range lin.sides {
		if sd.dead {
			continue
		}
		lc, err := sd.curve(res, r, td0, floors, lin.s, lin.spill, cfg)
		if err != nil {
			return nil, err
		}
		if err := side(j, lc); err != nil {
			return nil, err
		}
	}
	return lin.curve(res, r, td0, floors, lin.s, lin.spill, cfg)
}

// shiftTD0 turns l.c into TD_k at p = 0, c_k plus the TD base of heartbeat
// k (replayer.tdBase), in place, and returns it with the bases as floors
// when l or one of its live sides is floored (else nil): the td0 and floor
// of every curve of the replay (linearCollector.curve).
func (l *linearCollector) shiftTD0(r *replayer, sync bool) (td0, floors []float64) {
	floored := l.floor
	for _, sd := range l.sides {
		floored = floored || (sd.floor && !sd.dead)
	}
	if floored {
		floors = make([]float64, len(l.c))
	}
	for k := range l.c {
		b := float64(r.tdBase(sync, k))
		if floors != nil {
			floors[k] = b
		}
		l.c[k] += b
	}
	return l.c, floors
}
