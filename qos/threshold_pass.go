package qos

import (
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// thresholdPass is the replay engine (docs/algorithms.md, “Replaying a
// trace”; replayer.step and finish) for several thresholds of one detector
// whose state, warm-up and ok do not depend on the threshold (method
// SharedState): everything a replay does apart from τ is done once per
// heartbeat for all of them (staleness, warm-up, counts, delays, the cell of
// each evaluated heartbeat), and per threshold only what τ decides (the
// gap's mistakes and suspected time, TD_k). Each point's Result equals a
// replay of a detector built with its threshold in every field, as long as
// that detector's FreshnessPoint is the point's fp and its ok and WarmingUp
// are src's.
type thresholdPass struct {
	src     thresholdDetector
	cfg     Config
	pts     []thresholdPoint
	fill    func(taus []time.Duration) // sets each point's freshness point
	taus    []time.Duration            // the points' freshness points after prevA
	pending bool                       // taus are in force over the current gap
	minTau  time.Duration              // the least of taus
	outs    []int32                    // the points suspecting just after prevA (their out)
	// τ − A_k of the last evaluated heartbeats, heartbeat by heartbeat
	// (tdRows of them), moved to each point's td every tdBlock heartbeats:
	// one stream of writes instead of one per point. With win, their TD_k
	// by threshold instead (tdWindows.put).
	tdBuf  []int64
	tdRows int

	base       Result // the fields that do not depend on τ
	havePrev   bool
	prevA      time.Duration
	hasSeq     bool
	lastSeq    uint64
	evaluating bool
	delay      []int64 // A_k − σ_k per evaluated heartbeat, when every one had σ_k
	allSent    bool
	plaus      bool
	grid       *cellGrid // with Config.Intervals
	evCell     []uint8   // the cell of each evaluated heartbeat
	// spilled: the points' τ − A_k go to a tdSpill each, with the delay
	// and cell of their row (rowD, rowC) instead of delay and evCell.
	spilled bool
	rowD    [tdBlock]int64
	rowC    [tdBlock]uint8

	// sweepRanked's passes: the first fills sample and does nothing that
	// depends on τ; the second adds each TD_k to win instead of keeping
	// τ − A_k in the points' td.
	sample *tdSample
	win    *tdWindows
	// wide: the int64 TD_k of the narrow point finish is summarizing.
	wide []int64
	// flushed: the rows flushTD moved to the points' td so far; strata:
	// the stratified sample's indices among them (stratSample), whose
	// values each point keeps in samp.
	flushed int
	strata  []int
	// narrowMem: the memory of the narrow points' values, hint each,
	// from narrowPool and back to it at close.
	narrowMem *[]uint32
}

// thresholdPoint is the part of a replay that depends on τ.
type thresholdPoint struct {
	mistakes  int
	suspected time.Duration
	intervals []Interval
	out       bool // suspected just after prevA
	openStart time.Duration
	td        []int64 // τ − A_k per evaluated heartbeat, then TD_k
	// narrow: τ − A_k in 4 bytes while every one fits (a pass made with
	// narrow; td is then nil until one does not: flushNarrow).
	narrow []uint32
	spill  *tdSpill
	cells  *cellSeries
	vOr    uint64  // the bitwise or of the τ − A_k (each ≥ 0): at least the greatest
	samp   []int64 // τ − A_k at the pass's strata
}

// newThresholdPass returns the pass of n thresholds whose freshness points
// fill sets, once src has observed a heartbeat (when src's FreshnessPoint
// is ok). hint is the expected number of heartbeats. With narrow the
// points keep their τ − A_k in 4 bytes each while they fit (flushNarrow).
func newThresholdPass(src thresholdDetector, n int, fill func([]time.Duration), cfg Config, hint int, grid *cellGrid, narrow bool) *thresholdPass {
	p := &thresholdPass{src: src, cfg: cfg, pts: make([]thresholdPoint, n), fill: fill, taus: make([]time.Duration, n),
		outs: make([]int32, 0, n), allSent: true, plaus: true, grid: grid, delay: make([]int64, 0, hint)}
	p.tdBuf = make([]int64, tdStride*n)
	if narrow {
		p.narrowMem = getNarrowMem(n * hint)
	}
	for i := range p.pts {
		if narrow {
			p.pts[i] = thresholdPoint{narrow: (*p.narrowMem)[i*hint : i*hint : (i+1)*hint]}
		} else {
			p.pts[i] = thresholdPoint{td: make([]int64, 0, hint)}
		}
		if grid != nil {
			p.pts[i].cells = newCellSeries(*grid)
		}
		if hint > 0 {
			p.pts[i].samp = make([]int64, 0, hint/tdStratum+1)
		}
	}
	if grid != nil {
		p.evCell = make([]uint8, 0, hint)
	}
	return p
}

// newSpilledThresholdPass is newThresholdPass for a stream too long for
// the points' TD_k in memory: each point moves its τ − A_k to a tdSpill
// (about 6 bytes a heartbeat), in memory that does not grow with the
// stream.
func newSpilledThresholdPass(src thresholdDetector, n int, fill func([]time.Duration), cfg Config, grid *cellGrid) (*thresholdPass, error) {
	p := newThresholdPass(src, n, fill, cfg, 0, grid, false)
	p.spilled = true
	cells := 0
	if grid != nil {
		cells = grid.n
	}
	for i := range p.pts {
		s, err := newTDSpill(cfg.Spill.Dir, int64(cfg.DelayOffset), cells)
		if err != nil {
			p.close()
			return nil, err
		}
		p.pts[i].spill, p.pts[i].td = s, nil
	}
	return p, nil
}

// close removes the points' spill files and returns the narrow points'
// memory to narrowPool.
func (p *thresholdPass) close() {
	if p.narrowMem != nil {
		for i := range p.pts {
			p.pts[i].narrow = nil
		}
		narrowPool.Put(p.narrowMem)
		p.narrowMem = nil
	}
	for i := range p.pts {
		if s := p.pts[i].spill; s != nil {
			s.close()
			p.pts[i].spill = nil
		}
	}
}

// step is replayer.step for every threshold at once; the shared detector
// observes hb here.
func (p *thresholdPass) step(hb detector.Heartbeat) error {
	if p.havePrev && hb.Arrival < p.prevA {
		return errArrivalOrder(p.base.Records+1, hb, p.prevA)
	}
	p.base.Records++
	stale := hb.HasSeq && p.hasSeq && hb.Seq <= p.lastSeq
	a := hb.Arrival
	if p.pending {
		p.gap(a)
	}
	p.src.Observe(hb)
	if stale {
		p.base.Stale++
	} else if hb.HasSeq {
		p.lastSeq, p.hasSeq = hb.Seq, true
	}
	p.prevA, p.havePrev = a, true
	ok := started(p.src) // ok is the same for every threshold
	ready := ok && !p.src.WarmingUp()
	if !p.evaluating && !p.startsEvaluation(a, stale, ready) {
		return nil
	}
	if p.sample != nil {
		if ready && !stale {
			p.evaluate(hb)
		}
		p.sampleStep(a, stale, ready)
		return nil
	}
	if !ready {
		// The detector went back into warm-up: no freshness point is in
		// force and nothing is reported until it is ready again.
		if !stale {
			p.base.WarmUp++
		}
		for i := range p.pts {
			q := &p.pts[i]
			q.closeMistake(a, p.cfg.RecordMistakes)
			q.out = false
		}
		p.pending, p.outs = false, p.outs[:0]
		return nil
	}
	if !stale {
		p.evaluate(hb)
	}
	p.fill(p.taus)
	p.pending = true
	p.transition(a, stale)
	return nil
}

// gap is replayer.gap for every threshold: the suspicion of the thresholds
// whose freshness point (p.taus, in force since prevA) passed before a.
func (p *thresholdPass) gap(a time.Duration) {
	if a <= p.minTau {
		return // no τ passed
	}
	gapCell := -1 // the cell of prevA, computed once for the thresholds whose τ falls in this gap
	for i, tau := range p.taus {
		if a <= tau {
			continue
		}
		q := &p.pts[i]
		from := max(tau, p.prevA)
		starts := !q.out
		if starts {
			q.mistakes++
			q.openStart = from
			p.outs = append(p.outs, int32(i))
		}
		q.suspected += a - from
		q.out = true
		if q.cells != nil {
			if gapCell < 0 {
				gapCell = p.grid.cell(p.prevA)
			}
			if starts {
				q.cells.mist[gapCell]++
			}
			q.cells.susp[gapCell] += float64(a - from)
		}
	}
}

// startsEvaluation is replayer.startsEvaluation for every threshold.
func (p *thresholdPass) startsEvaluation(a time.Duration, stale, ready bool) bool {
	if !p.base.startsEvaluation(a, stale, ready, p.cfg.WarmUp) {
		return false
	}
	p.evaluating = true
	for i := range p.pts {
		p.pts[i].out = false
	}
	p.outs = p.outs[:0]
	return true
}

// evaluate records what does not depend on τ of the evaluated heartbeat
// hb: its count, time cell and delay.
func (p *thresholdPass) evaluate(hb detector.Heartbeat) {
	p.base.Evaluated++
	if p.win != nil {
		// sweepRanked's second pass: the first pass's delays and clock
		// flags serve; only the cells are new.
		if p.grid != nil {
			p.evCell = append(p.evCell, uint8(p.grid.cell(hb.Arrival)))
		}
		return
	}
	var c uint8
	if p.grid != nil && p.sample == nil { // the first pass keeps no cells
		c = uint8(p.grid.cell(hb.Arrival))
	}
	d, sent, plausible := oneWayDelay(hb)
	if !plausible {
		p.plaus = false
	}
	if !sent {
		p.allSent = false
	}
	switch {
	case p.spilled:
		p.rowD[p.tdRows], p.rowC[p.tdRows] = d, c
		return
	case p.grid != nil && p.sample == nil:
		p.evCell = append(p.evCell, c)
	}
	if sent {
		p.delay = append(p.delay, d)
	}
}

// transition is replayer.evaluate's τ − A_k (unless stale) and
// replayer.transition for every threshold, with the freshness points of
// p.taus after the heartbeat arriving at a.
func (p *thresholdPass) transition(a time.Duration, stale bool) {
	minTau := time.Duration(math.MaxInt64)
	switch {
	case !stale && p.win != nil:
		minTau = p.win.put(p.tdBuf, p.tdRows, p.taus, a)
		if p.tdRows++; p.tdRows == tdBlock {
			p.flushTD()
		}
	case !stale:
		minTau = putTD(p.tdBuf, p.tdRows, p.taus, a)
		if p.tdRows++; p.tdRows == tdBlock {
			p.flushTD()
		}
	default:
		for _, tau := range p.taus {
			minTau = min(minTau, tau)
		}
	}
	p.minTau = minTau
	if a <= minTau {
		// No point suspects after a: those suspecting before it end
		// their mistakes, the others stay as they are.
		for _, i := range p.outs {
			q := &p.pts[i]
			q.closeMistake(a, p.cfg.RecordMistakes)
			q.out = false
		}
		p.outs = p.outs[:0]
		return
	}
	aCell := -1
	p.outs = p.outs[:0]
	for i, tau := range p.taus {
		q := &p.pts[i]
		after := tau < a
		if after && !q.out {
			q.mistakes++
			q.openStart = a
			if q.cells != nil {
				if aCell < 0 {
					aCell = p.grid.cell(a)
				}
				q.cells.mist[aCell]++
			}
		}
		if !after && q.out {
			q.closeMistake(a, p.cfg.RecordMistakes)
		}
		if after {
			p.outs = append(p.outs, int32(i))
		}
		q.out = after
	}
}

// tdBlock is how many heartbeats' τ − A_k the pass holds before moving
// them to each point's td.
const tdBlock = 64

// putTD writes max(τ − a, 0) of every freshness point τ of taus, the
// τ − A_k of the evaluated heartbeat arriving at a, to row r of buf,
// threshold i's at i·tdStride + r (the layout of tdWindows.put, whose
// columns flushTD then reads in order), and returns the least of taus.
// Not inlined, so that its loop keeps its variables in registers.
//
//go:noinline
func putTD(buf []int64, r int, taus []time.Duration, a time.Duration) time.Duration {
	minTau := time.Duration(math.MaxInt64)
	j := r // i·tdStride + r, stepped rather than multiplied
	for _, tau := range taus {
		buf[j] = int64(max(tau-a, 0))
		minTau = min(minTau, tau)
		j += tdStride
	}
	return minTau
}

// flushTD moves the rows of tdBuf (putTD's) to each point's td (or
// spill, or win).
func (p *thresholdPass) flushTD() {
	n := len(p.pts)
	if p.spilled {
		for i := range p.pts {
			s := p.pts[i].spill
			col := p.tdBuf[i*tdStride : i*tdStride+p.tdRows]
			for r, v := range col {
				s.add(v, p.rowD[r], p.rowC[r])
			}
		}
		p.tdRows = 0
		return
	}
	if p.win != nil {
		p.win.add(p.tdBuf, p.tdRows, n, p.evCell)
		p.tdRows = 0
		return
	}
	at := len(p.strata) // the strata in these rows: strata[at:]
	for j := len(p.strata); ; j++ {
		k := stratSample(j)
		if k >= p.flushed+p.tdRows {
			break
		}
		p.strata = append(p.strata, k)
	}
	for i := range p.pts {
		q := &p.pts[i]
		col := p.tdBuf[i*tdStride : i*tdStride+p.tdRows]
		for _, k := range p.strata[at:] {
			q.samp = append(q.samp, col[k-p.flushed])
		}
		if q.narrow != nil && q.flushNarrow(col) {
			continue
		}
		q.td = append(q.td, col...)
		or := q.vOr
		for _, v := range col {
			or |= uint64(v)
		}
		q.vOr = or
	}
	p.flushed += p.tdRows
	p.tdRows = 0
}

// stratSample returns the j-th index of a pass's stratified sample of its
// rows: one row drawn from each run of tdStratum (j·tdStratum + an offset
// from a mix of j), so that a pass keeps each point's sample as it writes
// its τ − A_k, where tdScan's sample would read them again at random
// (tdSampleSize: about as many values for up to 2^19 rows, more beyond).
func stratSample(j int) int {
	x := uint64(j+1) * 0x9e3779b97f4a7c15
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 32
	return j*tdStratum + int(x%tdStratum)
}

// tdStratum is the rows a pass's sample takes one from (stratSample).
const tdStratum = 32

func (q *thresholdPoint) closeMistake(at time.Duration, record bool) {
	if q.out && record {
		q.intervals = append(q.intervals, Interval{Start: q.openStart, End: at})
	}
}

// finish returns each threshold's Result as replayer.finish would. spans
// gives the observed time per cell from the first evaluated arrival (with
// Config.Intervals).
func (p *thresholdPass) finish(spans *spanMemo) ([]Result, error) {
	defer p.close()
	if !p.evaluating {
		return nil, noEvaluation(p.base.WarmUp, p.cfg.WarmUp)
	}
	p.flushTD()
	base := p.base
	base.End = p.prevA
	base.Span = base.End - base.Start
	sync := clockSyncOf(p.cfg.Clock, p.allSent, p.plaus)
	base.setClock(sync, p.cfg.DelayOffset)
	out := make([]Result, len(p.pts))
	var delays []int64
	if sync {
		delays = p.delay
	}
	scanSt, scanLast, scanned := p.scanAll(delays)
	for i := range p.pts {
		q := &p.pts[i]
		res := base
		res.Mistakes, res.Suspected, res.MistakeIntervals = q.mistakes, q.suspected, q.intervals
		if q.out && p.cfg.RecordMistakes {
			res.MistakeIntervals = append(res.MistakeIntervals, Interval{Start: q.openStart, End: res.End})
		}
		if q.cells != nil {
			if err := spans.fill(q.cells, res.Start); err != nil {
				return nil, err
			}
		}
		if q.spill != nil {
			st, last, err := q.spill.stats(sync, q.cells)
			if err != nil {
				return nil, err
			}
			res.TD, res.LastTD = st, time.Duration(last)
		} else if p.win != nil {
			var ok bool
			if res.TD, res.LastTD, ok = p.win.stats(i); !ok {
				p.win.missed[i] = true // swept again
			}
		} else if scanned[i] {
			res.TD, res.LastTD = scanSt[i], scanLast[i]
		} else {
			td := q.td
			if q.narrow != nil {
				p.wide = widenTD(p.wide, q.narrow)
				td, q.narrow = p.wide, nil
			}
			res.TD, res.LastTD = finishTD(td, delays, int64(p.cfg.DelayOffset), q.cells, p.evCell)
		}
		res.setRates()
		if q.cells != nil {
			res.setCI(q.cells)
		}
		q.td = nil
		out[i] = res
	}
	return out, nil
}

// scanAll summarizes by tdScan the TD_k of the points kept in memory,
// whose bases are delays (Config.DelayOffset when nil), and returns each
// point's statistics, last TD_k and whether tdScan answered.
func (p *thresholdPass) scanAll(delays []int64) ([]TDStats, []time.Duration, []bool) {
	n := len(p.pts)
	st, last, ok := make([]TDStats, n), make([]time.Duration, n), make([]bool, n)
	if p.win != nil || p.spilled {
		return st, last, ok
	}
	bMin, bMax := baseRange(delays, int64(p.cfg.DelayOffset))
	var nIdx, wIdx []int
	var nPts []tdScanPoint[uint32]
	var wPts []tdScanPoint[int64]
	for i := range p.pts {
		q := &p.pts[i]
		if q.narrow != nil {
			nIdx = append(nIdx, i)
			nPts = append(nPts, tdScanPoint[uint32]{td: q.narrow, vMax: q.vOr, cells: q.cells, samp: q.samp})
		} else {
			wIdx = append(wIdx, i)
			wPts = append(wPts, tdScanPoint[int64]{td: q.td, vMax: q.vOr, cells: q.cells, samp: q.samp})
		}
	}
	off, evs := int64(p.cfg.DelayOffset), p.base.Evaluated
	sc := tdScanPool.Get().(*tdScanScratch)
	defer tdScanPool.Put(sc)
	if len(nPts) > 0 {
		tdScan(nPts, evs, delays, off, bMin, bMax, p.evCell, p.strata, sc)
	}
	if len(wPts) > 0 {
		tdScan(wPts, evs, delays, off, bMin, bMax, p.evCell, p.strata, sc)
	}
	for j, i := range nIdx {
		st[i], last[i], ok[i] = nPts[j].st, nPts[j].last, nPts[j].ok
	}
	for j, i := range wIdx {
		st[i], last[i], ok[i] = wPts[j].st, wPts[j].last, wPts[j].ok
	}
	return st, last, ok
}

// finishTD adds to each τ − A_k of td its base (base[k] when base is not
// nil, else off) to make it TD_k, fills the TD sums of cells (when not nil;
// cellSeries.setTD with the cell evCell[k] of each heartbeat), and returns
// tdStats and the last TD_k: what replayer.finish does with TD, in one pass.
func finishTD(td, base []int64, off int64, cells *cellSeries, evCell []uint8) (TDStats, time.Duration) {
	acc := sumTD(td, base, off, cells, evCell)
	return acc.stats(td)
}

// started returns src's FreshnessPoint's ok, without solving for τ where
// src can tell (kappa.Detector.Started): the first pass of sweepRanked
// reads no τ at most heartbeats.
func started(src thresholdDetector) bool {
	if s, can := src.(interface{ Started() bool }); can {
		return s.Started()
	}
	_, ok := src.FreshnessPoint()
	return ok
}
