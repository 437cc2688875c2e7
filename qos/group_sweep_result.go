// The end of the grouped φ pass: one Result per threshold, TDs in batches.

package qos

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/internal/selection"
)

// finish builds each point's Result as the replay's finish would.
func (p *groupPass) finish() ([]Result, error) {
	out := make([]Result, len(p.ys))
	var buf []int64
	// Points lo..hi−1 with no node bound between them have always been
	// together: they share their nodes, which cover the evaluated
	// heartbeats in order.
	cut := make([]bool, len(p.ys)+1)
	for _, nd := range p.all {
		cut[nd.lo], cut[nd.hi] = true, true
	}
	for _, g := range p.grps {
		if !g.evaluating {
			return nil, errNotLinear // ErrNoEvaluation: the replays report it
		}
		if g.pending {
			p.closeGap(g, p.prevA, false)
		}
		allSent, plaus := g.startFresh > p.lastNoSent, g.startFresh > p.lastImplaus
		sync := clockSyncOf(p.cfg.Clock, allSent, plaus)
		for lo := g.lo; lo < g.hi; {
			hi := lo + 1
			for hi < g.hi && !cut[hi] {
				hi++
			}
			var err error
			if buf, err = p.finishPoints(g, lo, hi, sync, out, buf); err != nil {
				return nil, err
			}
			lo = hi
		}
	}
	return out, nil
}

// finishPoints sets out[lo..hi−1], the Results of points of group g that
// have always been together, summarizing their TD_k in batches; buf is
// scratch space, returned for reuse.
func (p *groupPass) finishPoints(g *thresholdGroup, lo, hi int, sync bool, out []Result, buf []int64) ([]int64, error) {
	nodes, err := p.nodesOf(lo, hi, g.startFresh)
	if err != nil {
		return buf, err
	}
	fresh := p.nFresh
	td := tdBatch{p: p, nodes: nodes, sync: sync, n: fresh - g.startFresh, bMin: p.bMin, bMax: p.bMax, lastM: g.mean, lastS: g.sd}
	if err := td.gatherSample(); err != nil {
		return buf, err
	}
	for j := lo; j < hi; j += tdBatchSize {
		ys := p.ys[j:min(j+tdBatchSize, hi)]
		var st [tdBatchSize]TDStats
		var last [tdBatchSize]int64
		var cs [tdBatchSize]*cellSeries
		if p.cells != nil {
			for c := range ys {
				cs[c] = p.cells[j+c]
				clear(cs[c].tdSum)
				clear(cs[c].tdN)
			}
		}
		var err error
		if buf, err = td.summarize(ys, st[:len(ys)], last[:len(ys)], cs[:len(ys)], buf); err != nil {
			return buf, err
		}
		for c := range ys {
			res := Result{Records: p.records, Stale: p.stale, WarmUp: g.warmUp, Evaluated: fresh - g.startFresh,
				Start: g.start, End: p.prevA, Mistakes: p.mistakes[j+c], Suspected: p.suspected[j+c],
				TD: st[c], LastTD: time.Duration(last[c])}
			res.Span = res.End - res.Start
			if p.intervals != nil {
				res.MistakeIntervals = p.intervals[j+c]
			}
			res.setClock(sync, p.cfg.DelayOffset)
			res.setRates()
			if p.cells != nil {
				if err := p.spans.fill(cs[c], g.start); err != nil {
					return buf, err
				}
				res.setCI(cs[c])
			}
			out[j+c] = res
		}
	}
	return buf, nil
}

// nodesOf returns the nodes of points lo..hi−1, which have always been
// together, evaluated from fresh heartbeat start on.
func (p *groupPass) nodesOf(lo, hi, start int) ([]*groupNode, error) {
	var nodes []*groupNode
	at := start
	for _, nd := range p.all {
		if lo < nd.lo || lo >= nd.hi {
			continue
		}
		if nd.from != at || hi > nd.hi {
			return nil, fmt.Errorf("qos: internal error: φ group node of heartbeat %d follows %d", nd.from, at)
		}
		nodes = append(nodes, nd)
		at += nd.n
	}
	if at != p.nFresh {
		return nil, fmt.Errorf("qos: internal error: %d φ TD samples for %d evaluated heartbeats", at-start, p.nFresh-start)
	}
	return nodes, nil
}

// tdBatchSize thresholds are summarized per read of a group's forms.
const tdBatchSize = 4

// tdBatch summarizes the TD_k of a group's thresholds: TD_k =
// ⌈AkkaCrossing(m'_k, s'_k, y(Θ))⌉ + base_k over the n heartbeats of nodes,
// base_k being A_k − σ_k when sync and d̄ otherwise, all bases in
// [bMin, bMax].
type tdBatch struct {
	p          *groupPass
	nodes      []*groupNode
	sync       bool
	n          int
	bMin, bMax int64
	// The form after the last heartbeat (the group's), which gives the
	// last TD_k with the last delay.
	lastM, lastS float64
	// The forms and bases of the sample of heartbeats (sampleIndices)
	// whose TD_k give the rank windows, gathered once for the group in
	// index order (the windows depend on the sample's values only).
	sm, ss []float64
	sb     []int64
	// summarize's scratch, kept for the group's next batch (vals: the
	// bases d̄ of a block when clocks are not synchronized).
	sample, vals []int64
	in0, in1     [tdBatchSize][]int64
	runs         []cellRun
	// A block's TD_k of one threshold, and those in a window (akkaRun,
	// windowTallyNear).
	tds, hits []int64
}

// cellRun ends a run of heartbeats in one cell: at index end (exclusive)
// of a block.
type cellRun struct {
	end  int
	cell uint8
}

// sampleSize is the size of the sample of the rank windows, 0 when
// summarize stores the values instead.
func (t *tdBatch) sampleSize() int {
	m := t.p.sampleSize
	if m == 0 {
		m = tdSampleSize(t.n)
	}
	if t.n < 8*m {
		return 0
	}
	return m
}

// gatherSample fills the sample's forms and bases, when summarize uses a
// sample.
func (t *tdBatch) gatherSample() error {
	m := t.sampleSize()
	if m == 0 {
		return nil
	}
	idx := make([]int, 0, m)
	for _, k := range sampleIndices(t.n, m) {
		idx = append(idx, k)
	}
	slices.Sort(idx)
	t.sm, t.ss, t.sb = make([]float64, m), make([]float64, m), make([]int64, m)
	j, start := 0, 0 // the next sample; the block holds the heartbeats from start on
	return t.p.blocks(t.nodes, func(b groupBlock) {
		for ; j < m && idx[j] < start+len(b.m); j++ {
			k := idx[j] - start
			t.sm[j], t.ss[j] = b.m[k], b.s[k]
			t.sb[j] = int64(t.p.cfg.DelayOffset)
			if t.sync {
				t.sb[j] = b.d[k]
			}
		}
		start += len(b.m)
	})
}

// lastValue returns the last TD_k of threshold y.
func (t *tdBatch) lastValue(y float64) int64 {
	b := int64(t.p.cfg.DelayOffset)
	if t.sync {
		b = t.p.lastDelay
	}
	return int64(math.Ceil(crossing(t.lastM, t.lastS, y))) + b
}

// values calls fn with the TD_k of threshold y block by block, in order,
// and adds them to cs's TD sums when cs is not nil (cellSeries.setTD's
// order).
func (t *tdBatch) values(y float64, cs *cellSeries, vals []int64, fn func([]int64)) error {
	return t.p.blocks(t.nodes, func(b groupBlock) {
		vs := vals[:len(b.m)]
		base := int64(t.p.cfg.DelayOffset)
		for k, mk := range b.m {
			if t.sync {
				base = b.d[k]
			}
			vs[k] = int64(math.Ceil(crossing(mk, b.s[k], y))) + base
		}
		if cs != nil {
			for k, v := range vs {
				c := b.c[k]
				cs.tdSum[c] += float64(v)
				cs.tdN[c]++
			}
		}
		fn(vs)
	})
}

// stored returns what tdStats returns for threshold y, and the last TD_k,
// from all values stored in buf (returned for reuse); on spilled data
// (which may be longer than memory allows) it reads them three times
// instead (streamed). With cs not nil it also adds them to cs's TD sums,
// in heartbeat order as the replayer's finish does (cellSeries.setTD).
func (t *tdBatch) stored(y float64, cs *cellSeries, buf []int64) (TDStats, int64, []int64, error) {
	if t.p.freshSpill != nil {
		st, last, err := t.streamed(y, cs)
		return st, last, buf, err
	}
	td := buf[:0]
	vals := make([]int64, groupBlockLen)
	if err := t.values(y, cs, vals, func(vs []int64) { td = append(td, vs...) }); err != nil {
		return TDStats{}, 0, td, err
	}
	last := td[len(td)-1]
	return tdStats(td), last, td, nil
}

// streamed is stored without storing the values: a pass adds them up in
// order, then selectStream finds the ranks.
func (t *tdBatch) streamed(y float64, cs *cellSeries) (TDStats, int64, error) {
	vals := make([]int64, groupBlockLen)
	var sum float64
	mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
	err := t.values(y, cs, vals, func(vs []int64) {
		for _, v := range vs {
			sum += float64(v)
			mn, mx = min(mn, v), max(mx, v)
		}
	})
	if err != nil {
		return TDStats{}, 0, err
	}
	n := t.n
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	r, err := selectStream(n, ranks, mn, mx, func(fn func(int64)) error {
		return t.values(y, nil, vals, func(vs []int64) {
			for _, v := range vs {
				fn(v)
			}
		})
	})
	if err != nil {
		return TDStats{}, 0, err
	}
	st := TDStats{Mean: time.Duration(math.Round(sum / float64(n))), P50: time.Duration(r[0]), P99: time.Duration(r[1]), Max: time.Duration(mx)}
	return st, t.lastValue(y), nil
}

// summarize sets st[c] to what tdStats returns for the TD_k of threshold
// ys[c] (at most tdBatchSize), and last[c] to the last TD_k. For a long
// stream the values are not stored: as in rankValuesInt, a sample of them
// gives a window per rank, and one pass over the forms computes every
// threshold's values, adds them up, counts those below each window and keeps
// those inside (one read of the forms for the whole batch). A window that
// misses its rank, or bases so far apart that differences could overflow,
// make that threshold store its values and call tdStats; so does a sum that
// the float64 sum of tdStats would not give exactly, and a threshold whose
// sample has many values on its windows' sides (sidesHeavy: few distinct
// values, as with a constant delay), whose windows would keep nearly all
// values (tdStats counts them instead). The same pass adds the TD_k to the
// TD sums of cs[c] when not nil (cellSeries.setTD's order). buf is scratch
// space, returned for reuse.
func (t *tdBatch) summarize(ys []float64, st []TDStats, last []int64, cs []*cellSeries, buf []int64) ([]int64, error) {
	m := t.sampleSize()
	const lim = 1 << 60
	if m == 0 || t.bMin < -lim || t.bMax > lim {
		for c, y := range ys {
			var err error
			if st[c], last[c], buf, err = t.stored(y, cs[c], buf); err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	ranks := [2]int{rank(0.50, t.n), rank(0.99, t.n)}
	var w batchWindows
	t.drawWindows(ys, ranks, m, &w)
	var tl batchTally
	if err := t.tally(ys, cs, ranks, m, &w, &tl); err != nil {
		return buf, err
	}
	for c, y := range ys {
		var err error
		if st[c], last[c], buf, err = t.conclude(c, y, cs[c], ranks, &w, &tl, buf); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// batchWindows are a batch's two rank windows per threshold, [lo0, hi0]
// around the median's rank and [lo1, hi1] around the 99th percentile's,
// drawn on the sample; beyond the sample they are the bounds of every
// value, base ≤ TD_k < base + maxExactCrossing. sides marks a threshold
// whose sample is heavy on its windows' sides (sidesHeavy): it is
// summarized from stored values instead.
type batchWindows struct {
	lo0, hi0, lo1, hi1 [tdBatchSize]int64
	sides              [tdBatchSize]bool
}

// batchTally is what the one read of a batch's forms gives each threshold:
// the exact sum and the greatest of its TD_k, the counts below each window
// (b0, b1) and the values inside them (in0, in1).
type batchTally struct {
	sum, mx  [tdBatchSize]int64
	b0, b1   [tdBatchSize]int
	in0, in1 [tdBatchSize][]int64
}

// drawWindows sets w's windows of each threshold ys[c] from the TD_k of
// the sample of m heartbeats (the forms and bases gatherSample gathered).
func (t *tdBatch) drawWindows(ys []float64, ranks [2]int, m int, w *batchWindows) {
	t.sample = slices.Grow(t.sample[:0], m)[:m]
	sample := t.sample
	for c, y := range ys {
		for jj, mk := range t.sm {
			sample[jj] = int64(math.Ceil(crossing(mk, t.ss[jj], y))) + t.sb[jj]
		}
		val, has := sampleBounds(sample, ranks, t.n)
		w.sides[c] = sidesHeavy(sample, val, has)
		w.lo0[c], w.hi0[c], w.lo1[c], w.hi1[c] = t.bMin, t.bMax+maxExactCrossing, t.bMin, t.bMax+maxExactCrossing
		if has[0] {
			w.lo0[c] = val[0]
		}
		if has[1] {
			w.hi0[c] = val[1]
		}
		if has[2] {
			w.lo1[c] = val[2]
		}
		if has[3] {
			w.hi1[c] = val[3]
		}
	}
}

// tally reads the batch's forms once, a block at a time, and fills tl for
// every threshold ys[c] without heavy sides: each block's TD_k (akkaRun),
// added up, counted against w's windows and kept inside them
// (windowTallyNear), and added to cs[c]'s TD sums when not nil, a run of
// one cell at a time (cellSums' order). m is the sample's size, which
// bounds the values a window keeps (windowCap).
func (t *tdBatch) tally(ys []float64, cs []*cellSeries, ranks [2]int, m int, w *batchWindows, tl *batchTally) error {
	n, B := t.n, len(ys)
	const block = groupBlockLen // each block needs room for all of its values
	for c := range B {
		tl.mx[c] = math.MinInt64
		tl.in0[c] = slices.Grow(t.in0[c][:0], windowCap(ranks[0], n, m)+block)
		tl.in1[c] = slices.Grow(t.in1[c][:0], windowCap(ranks[1], n, m)+block)
	}
	var yv [tdBatchSize]float64
	copy(yv[:], ys)
	if !t.sync {
		t.vals = slices.Grow(t.vals[:0], block)[:block]
		for k := range t.vals {
			t.vals[k] = int64(t.p.cfg.DelayOffset)
		}
	}
	t.tds = slices.Grow(t.tds[:0], block)[:block]
	t.hits = slices.Grow(t.hits[:0], block)[:block]
	err := t.p.blocks(t.nodes, func(blk groupBlock) {
		ms := blk.m
		ss := blk.s[:len(ms)]
		bs := blk.d[:len(ms)]
		if !t.sync {
			bs = t.vals[:len(ms)]
		}
		t.cellRuns(blk)
		tds, hits := t.tds[:len(ms)], t.hits[:len(ms)]
		for c := range B {
			if w.sides[c] {
				continue
			}
			y := yv[c]
			cells := cs[c]
			a := 0
			for _, r := range t.runs {
				rs, x := akkaRun(ms[a:r.end], ss[a:r.end], bs[a:r.end], y, tds[a:r.end], tl.mx[c])
				tl.sum[c] += rs
				tl.mx[c] = x
				if cells != nil {
					// As cellSums: exact where exactSum holds (conclude).
					cells.tdSum[r.cell] += float64(rs)
					cells.tdN[r.cell] += float64(r.end - a)
				}
				a = r.end
			}
			// Values and sides are below 2^61 in magnitude (summarize's
			// lim), as windowTallyNear needs; a window with hi < lo makes
			// it pass every value, and the checks keep none.
			l0, h0, l1, h1 := w.lo0[c], w.hi0[c], w.lo1[c], w.hi1[c]
			c0, c1, k := windowTallyNear(tds, l0, l1, uint64(h0-l0), uint64(h1-l1), hits)
			tl.b0[c] += c0
			tl.b1[c] += c1
			for _, v := range hits[:k] {
				if l0 <= v && v <= h0 {
					tl.in0[c] = append(tl.in0[c], v)
				}
				if l1 <= v && v <= h1 {
					tl.in1[c] = append(tl.in1[c], v)
				}
			}
		}
	})
	t.in0, t.in1 = tl.in0, tl.in1
	return err
}

// cellRuns sets t.runs to the block's runs of heartbeats in one cell (one
// run without cells), which the thresholds share.
func (t *tdBatch) cellRuns(blk groupBlock) {
	n := len(blk.m)
	t.runs = t.runs[:0]
	for a := 0; a < n; {
		e, c := n, uint8(0)
		if blk.c != nil {
			fc := blk.c[:n]
			c, e = fc[a], a+1
			for e < len(fc) && fc[e] == c {
				e++
			}
		}
		t.runs = append(t.runs, cellRun{end: e, cell: c})
		a = e
	}
}

// conclude returns the statistics and last TD_k of threshold y, the c-th
// of its batch, from the tally when its windows caught their ranks and its
// sum is the one tdStats would give, and from stored values otherwise (as
// stored, with cells when the tally's cell sums are not exact either).
func (t *tdBatch) conclude(c int, y float64, cells *cellSeries, ranks [2]int, w *batchWindows, tl *batchTally, buf []int64) (TDStats, int64, []int64, error) {
	if w.sides[c] {
		return t.stored(y, cells, buf)
	}
	n := t.n
	// tdStats adds float64(TD_k) in order: while every partial sum is an
	// integer of at most 2^53 (values ≥ 0, n·max ≤ 2^53) that sum is exact
	// and equals tl.sum[c].
	exactSum := t.bMin >= 0 && tl.mx[c] <= (1<<53)/int64(n)
	// So are the cells' sums, added a run of one cell at a time
	// (cellSums): otherwise stored adds them again as setTD does.
	if exactSum || cells == nil {
		cells = nil
	} else {
		clear(cells.tdSum)
		clear(cells.tdN)
	}
	in0, in1 := tl.in0[c], tl.in1[c]
	r0, r1 := ranks[0]-tl.b0[c], ranks[1]-tl.b1[c]
	if r0 < 0 || r0 >= len(in0) || r1 < 0 || r1 >= len(in1) || !exactSum {
		return t.stored(y, cells, buf)
	}
	st := TDStats{
		Mean: time.Duration(math.Round(float64(tl.sum[c]) / float64(n))),
		P50:  time.Duration(selection.Rank(in0, r0)),
		P99:  time.Duration(selection.Rank(in1, r1)),
		Max:  time.Duration(tl.mx[c]),
	}
	return st, t.lastValue(y), buf, nil
}

// akkaRun writes to tds the TD_k = ⌈crossing(ms[k], ss[k], y)⌉ + bs[k] of a
// run of heartbeats and returns their sum and their greatest value with
// mx, as math.Ceil and phi.AkkaCrossing give them. Every crossing is
// below maxExactCrossing (checked when the form was taken, at the group's
// greatest y), far from where int64 conversion stops being exact (2^63),
// so its ceiling is the truncation, plus one when that is below it; the
// max with 0 is then taken on the integer, the same for x < 0.
// It is apart and not inlined so that its loop keeps its few variables in
// registers.
//
//go:noinline
func akkaRun(ms, ss []float64, bs []int64, y float64, tds []int64, mx int64) (sum, mx2 int64) {
	ss, bs, tds = ss[:len(ms)], bs[:len(ms)], tds[:len(ms)]
	for k, m := range ms {
		x := m + ss[k]*y // phi.AkkaCrossing before its max
		e := int64(x)
		e += int64(b2i(float64(e) < x))
		v := max(e, 0) + bs[k]
		tds[k] = v
		sum += v
		mx = max(mx, v)
	}
	return sum, mx
}
