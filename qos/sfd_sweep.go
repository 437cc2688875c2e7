package qos

import (
	"math"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
)

// sweepSFD computes the points of an SFD initial-margin sweep (values in ms,
// the other settings from scfg) exactly as one replay per margin would, without
// running the NFD-E estimator once per margin. SFD's τ = EA_{ℓ+1} + SM
// (docs/algorithms.md, “SFD, the self-tuning detector”): EA does not depend on
// the margin, only the sequence of SM does, through the control rule. So
// sfd.MarginsTrace runs the control of every margin over one shared estimator,
// whose pass also records per heartbeat whether τ moves, EA_{ℓ+1} and the
// window length (warm-up). What the replay (docs/algorithms.md, “Replaying
// a trace”) does apart from τ does not depend on the margin either
// (sfdSchedule); each margin is then replayed in a loop that only computes τ =
// EA_{ℓ+1} + SM and accounts the gaps, mistakes and TD_k exactly as
// replayer.step does.
//
// It returns errNotLinear (Sweep then replays each point, which reports the
// errors) for a value New rejects, an invalid configuration, or a replay
// error.
//
// The shared estimator pass keeps data per heartbeat: on a Source that is
// not a slice and holds more than Config.Spill.InMemory heartbeats it returns
// errNotLinear too, so that memory does not grow with the stream.
func sweepSFD(scfg sfd.Config, values []float64, src Source, cfg Config) ([]*Point, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	hbs, ok, err := heartbeatsOf(src, cfg.Spill.inMemory())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNotLinear
	}
	margins := make([]time.Duration, len(values))
	for i, v := range values {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, errNotLinear
		}
		margins[i] = sfdMargin(v)
	}
	paths, et, err := sfd.MarginsTrace(scfg, margins, hbs)
	if err != nil {
		return nil, errNotLinear
	}
	tr, err := newSFDTrace(scfg, et)
	if err != nil {
		return nil, errNotLinear
	}
	sch, err := newSFDSchedule(hbs, tr, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Intervals {
		sch.cells = newCellSeries(newCellGrid(sliceSource(hbs)))
		_ = sch.cells.setSpan(sliceSource(hbs), sch.base.Start) // a slice has no read error
		sch.evCell = make([]uint8, 0, sch.base.Evaluated)
		for k, a := range sch.arr {
			if c := sch.code[k]; c&sfdStale == 0 && (c&sfdCode == sfdStart || c&sfdCode == sfdEval) {
				sch.evCell = append(sch.evCell, uint8(sch.cells.grid.cell(a)))
			}
		}
	}
	sch.setQuiet(tr)
	pts := make([]*Point, len(values))
	buf := make([]int64, 0, sch.base.Evaluated)
	for i, v := range values {
		var res Result
		res, buf = sch.replay(tr, paths[i], buf)
		pts[i] = &Point{Value: v, Result: res}
	}
	return pts, nil
}

// Codes of sfdSchedule: what the replay (replayer.step) does at a
// heartbeat after the gap before it and the detector's update, which does
// not depend on the margin: nothing (before evaluation), start evaluating
// and evaluate, evaluate, or stop (the detector went back into warm-up).
const (
	sfdSkip uint8 = iota
	sfdStart
	sfdEval
	sfdBreak

	sfdCode  = 3 // mask of the codes above
	sfdStale = 4 // flag: the heartbeat is stale for the replay
	sfdMoves = 8 // flag: the heartbeat moves τ (Fresh or Restart)
)

// sfdSchedule is the part of a replay of SFD (docs/algorithms.md, “Replaying a
// trace”) that is the same for every margin: which heartbeats are stale, when
// evaluation starts and breaks (warm-up depends on the window's length only),
// the counts, span and clock decision of the Result and the TD base of each
// evaluated fresh heartbeat.
type sfdSchedule struct {
	arr  []time.Duration // arrivals, contiguous for the per-margin loops
	code []uint8         // sfdSkip..sfdBreak, | sfdStale, | sfdMoves
	base Result          // the Result's margin-independent fields
	tdB  []int64         // per evaluated fresh heartbeat: A_k − σ_k or d̄
	rec  bool            // Config.RecordMistakes
	// With Config.Intervals: the observed time per cell (the same for
	// every margin) and the cell of each evaluated fresh heartbeat.
	cells  *cellSeries
	evCell []uint8
	// The quiet blocks (setQuiet): per block of sfdBlock heartbeats,
	// quiet[b] is the least margin for which it is quiet
	// (math.MaxInt64: never), ev[b] the index of its first evaluated
	// fresh heartbeat (ev has one more entry, the count), and blockEA[b]
	// the EA_{ℓ+1} in force after its last heartbeat; no block is quiet
	// above the margin room. w[j] is EA_{ℓ+1} − A_k + tdB[j] for the j-th
	// evaluated fresh heartbeat k: TD_k = w[j] + SM in a quiet block.
	quiet   []int64
	room    time.Duration
	ev      []int32
	blockEA []time.Duration
	w       []int64
	// Per block: the sum, least and greatest of its w[j] (their TD_k are
	// these plus SM), when it has any.
	wSum, wMin, wMax []int64
	// w sorted (quietRanks, once some margin needs it), and the replay's
	// record of its quiet blocks.
	sortedW  []int64
	q        sfdQuiet
	rankBufs sfdRankBufs
}

// newSFDSchedule mirrors replayer.step for everything but τ. It returns
// errNotLinear when the replay fails (out of order, nothing evaluated),
// which the replays of each point then report.
func newSFDSchedule(hbs []detector.Heartbeat, tr *sfdTrace, cfg Config) (*sfdSchedule, error) {
	n := len(hbs)
	sch := &sfdSchedule{arr: make([]time.Duration, n), code: make([]uint8, n), rec: cfg.RecordMistakes}
	res := &sch.base
	var prevA time.Duration
	var hasSeq, seen, evaluating bool
	var lastSeq uint64
	delay := make([]int64, 0, n) // at most one per heartbeat: no copies on growth
	allSent, plaus := true, true
	for k, hb := range hbs {
		if k > 0 && hb.Arrival < prevA {
			return nil, errNotLinear
		}
		res.Records++
		stale := hb.HasSeq && hasSeq && hb.Seq <= lastSeq
		sch.arr[k] = hb.Arrival
		if stale {
			sch.code[k] |= sfdStale
		}
		if tr.moves[k] {
			sch.code[k] |= sfdMoves
		}
		if stale {
			res.Stale++
		} else if hb.HasSeq {
			lastSeq, hasSeq = hb.Seq, true
		}
		prevA = hb.Arrival
		seen = seen || tr.moves[k]
		ready := seen && int(tr.lens[k]) >= tr.minSamples
		if !evaluating {
			if stale {
				continue
			}
			if fresh := res.Records - res.Stale; !ready || fresh <= cfg.WarmUp {
				res.WarmUp++
				continue
			}
			evaluating = true
			res.Start = hb.Arrival
			sch.code[k] |= sfdStart
		} else {
			sch.code[k] |= sfdEval
		}
		if !ready {
			if !stale {
				res.WarmUp++
			}
			sch.code[k] = sch.code[k]&^sfdCode | sfdBreak
			continue
		}
		if !stale {
			res.Evaluated++
			d, sent, plausible := oneWayDelay(hb)
			delay = append(delay, d)
			if !plausible {
				plaus = false
			}
			if !sent {
				allSent = false
			}
		}
	}
	if !evaluating {
		return nil, errNotLinear
	}
	res.End = prevA
	res.Span = res.End - res.Start
	sync := clockSyncOf(cfg.Clock, allSent, plaus)
	res.setClock(sync, cfg.DelayOffset)
	if sync {
		sch.tdB = delay
	} else {
		sch.tdB = delay[:0]
		for range res.Evaluated {
			sch.tdB = append(sch.tdB, int64(cfg.DelayOffset))
		}
	}
	return sch, nil
}

// replay is replayer.step and finish for the SFD detector with the margin
// changes of one initial margin, on the schedule's margin-independent part:
// τ after heartbeat k is EA_{ℓ+1} + SM where k moves τ. buf is scratch
// space for the TD_k, returned for reuse.
func (sch *sfdSchedule) replay(tr *sfdTrace, changes []sfd.MarginChange, buf []int64) (Result, []int64) {
	res := sch.base
	td := buf[:0]
	var tau, cur, prevA, openStart time.Duration
	var pending, out bool
	var sum int64 // of the TD_k, with their extremes
	mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
	ci := 0
	sm := changes[0].SM
	var cells *cellSeries
	if sch.cells != nil {
		cells = sch.cells.clone()
		clear(cells.mist)
		clear(cells.susp)
	}
	nextFrom := math.MaxInt // the heartbeat of the next margin change
	if len(changes) > 1 {
		nextFrom = changes[1].From
	}
	q := &sch.q
	for k := 0; k < len(sch.arr); k++ {
		if k%sfdBlock == 0 {
			b := k / sfdBlock
			q.quiet[b], q.sm[b] = pending && !out && sch.isQuiet(b, sm, nextFrom), sm
		}
		if b := k / sfdBlock; k%sfdBlock == 0 && q.quiet[b] {
			// A quiet block: τ = EA_{ℓ+1} + SM stays at or after every
			// arrival, so no mistake starts or ends; only TD_k is added.
			ws := sch.w[sch.ev[b]:sch.ev[b+1]]
			for _, w := range ws {
				td = append(td, w+int64(sm))
			}
			if len(ws) > 0 {
				sum += sch.wSum[b] + int64(len(ws))*int64(sm)
				mn, mx = min(mn, sch.wMin[b]+int64(sm)), max(mx, sch.wMax[b]+int64(sm))
			}
			k = min(k+sfdBlock, len(sch.arr)) - 1
			prevA, cur = sch.arr[k], sch.blockEA[b]+sm
			tau = cur
			continue
		}
		a, c := sch.arr[k], sch.code[k]
		if pending && a > tau {
			from := max(tau, prevA)
			if !out {
				res.Mistakes++
				openStart = from
				if cells != nil {
					cells.mist[cells.grid.cell(prevA)]++
				}
			}
			res.Suspected += a - from
			if cells != nil {
				cells.susp[cells.grid.cell(prevA)] += float64(a - from)
			}
			out = true
		}
		prevA = a
		if c&sfdMoves != 0 {
			for ci+1 < len(changes) && changes[ci+1].From <= k {
				ci++
				sm = changes[ci].SM
				nextFrom = math.MaxInt
				if ci+1 < len(changes) {
					nextFrom = changes[ci+1].From
				}
			}
			cur = detector.AddSat(tr.next[k], sm)
		}
		switch c & sfdCode {
		case sfdSkip:
			continue
		case sfdBreak:
			if out && sch.rec {
				res.MistakeIntervals = append(res.MistakeIntervals, Interval{Start: openStart, End: a})
			}
			pending, out = false, false
			continue
		case sfdStart:
			out = false
		}
		pending, tau = true, cur
		if c&sfdStale == 0 {
			j := len(td)
			v := int64(max(tau-a, 0)) + sch.tdB[j]
			td = append(td, v)
			sum += v
			mn, mx = min(mn, v), max(mx, v)
		}
		after := tau < a
		if after && !out {
			res.Mistakes++
			openStart = a
			if cells != nil {
				cells.mist[cells.grid.cell(a)]++
			}
		}
		if !after && out && sch.rec {
			res.MistakeIntervals = append(res.MistakeIntervals, Interval{Start: openStart, End: a})
		}
		out = after
	}
	if out && sch.rec {
		res.MistakeIntervals = append(res.MistakeIntervals, Interval{Start: openStart, End: res.End})
	}
	// The TD_k's sum in int64 equals sumTD's float64 sum where every
	// partial sum is exact (sumTD); the sums wrap only past that bound.
	var acc tdAcc
	if n := len(td); n > 0 && float64(n)*max(math.Abs(float64(mn)), math.Abs(float64(mx))) < 1<<52 {
		acc = tdAcc{sum: float64(sum), mn: mn, mx: mx}
		if cells != nil {
			clear(cells.tdSum)
			clear(cells.tdN)
			cellSums(td, sch.evCell[:n], cells.tdSum, cells.tdN)
		}
	} else {
		acc = sumTD(td, nil, 0, cells, sch.evCell)
	}
	res.TD, res.LastTD = sch.tdStatsQuiet(td, q, acc)
	res.setRates()
	if cells != nil {
		res.setCI(cells)
	}
	return res, td
}

// sfdMargin is the initial margin SFDFamily's detector uses for v ms.
func sfdMargin(v float64) time.Duration { return durMS(v) }

// newSFDTrace returns the trace et of SFD's estimator, with the settings
// of scfg, with the warm-up's sample count. Errors: an invalid estimator
// or warm-up setting.
func newSFDTrace(scfg sfd.Config, et *sfd.EstimatorTrace) (*sfdTrace, error) {
	est, err := chen.NewEstimator(scfg.Estimator)
	if err != nil {
		return nil, err
	}
	minSamples, err := chen.MinSamples(scfg.MinSamples, est.WindowSize())
	if err != nil {
		return nil, err
	}
	return &sfdTrace{next: et.Next, moves: et.Moves, lens: et.Lens, minSamples: minSamples}, nil
}

// sfdTrace is what SFD's estimator made of each heartbeat of a stream,
// whatever the margin.
type sfdTrace struct {
	next       []time.Duration // EA_{ℓ+1} after heartbeat k, if it moves τ
	moves      []bool          // heartbeat k is Fresh or a Restart: it moves τ
	lens       []int32         // the window's length after heartbeat k
	minSamples int
}

// sfdBlock is the length, in heartbeats, of the blocks of sfdSchedule's
// quiet test.
const sfdBlock = 64

// isQuiet reports whether block b is quiet for margin sm, with the next
// margin change at heartbeat from: its heartbeats are all evaluated, none
// arrives after τ = EA_{ℓ+1} + SM or has τ before it, τ does not
// saturate, and SM stays in force throughout. Started with a freshness
// point in force and no mistake open, such a block is replayed by adding
// its TD_k alone.
func (sch *sfdSchedule) isQuiet(b int, sm time.Duration, from int) bool {
	return int64(sm) >= sch.quiet[b] && sm <= sch.room && from >= (b+1)*sfdBlock
}

// setQuiet fills the quiet-block fields of sch from tr (sfdSchedule).
// Within a block whose heartbeats are all evaluated (no start, stop or
// warm-up), with a margin SM in force throughout, heartbeat k starts a
// mistake iff A_k > τ before it or τ after it is before A_k, that is iff
// A_k − EA > SM for the EA in force before or after k (the stale ones
// included: they neither move τ nor add a TD); so the block is quiet for
// every SM ≥ the largest such difference, as long as EA + SM does not
// saturate and w + SM does not overflow (room).
func (sch *sfdSchedule) setQuiet(tr *sfdTrace) {
	n := len(sch.arr)
	nb := (n + sfdBlock - 1) / sfdBlock
	sch.quiet, sch.blockEA = make([]int64, nb), make([]time.Duration, nb)
	sch.wSum, sch.wMin, sch.wMax = make([]int64, nb), make([]int64, nb), make([]int64, nb)
	sch.q = sfdQuiet{quiet: make([]bool, nb), sm: make([]time.Duration, nb)}
	sch.ev, sch.w = make([]int32, nb+1), make([]int64, 0, len(sch.tdB))
	var ea time.Duration
	seen := false
	for b := range nb {
		sch.ev[b] = int32(len(sch.w))
		q := int64(math.MinInt64)
		for k := b * sfdBlock; k < min((b+1)*sfdBlock, n); k++ {
			c, a := sch.code[k], sch.arr[k]
			before := ea
			if c&sfdMoves != 0 {
				ea, seen = tr.next[k], true
			}
			d, ok := diff(a, min(before, ea))
			if c&sfdCode != sfdEval || !seen || !ok {
				q = math.MaxInt64
			} else if q != math.MaxInt64 {
				q = max(q, d)
			}
			if c&sfdStale == 0 && c&sfdCode != sfdSkip && c&sfdCode != sfdBreak {
				j := len(sch.w)
				w, ok := diff(ea, a)
				if ok {
					w, ok = diff(time.Duration(w), -time.Duration(sch.tdB[j]))
				}
				if !ok {
					q = math.MaxInt64 // the slow path computes this TD_k
				}
				sch.w = append(sch.w, w)
			}
		}
		sch.blockEA[b] = ea
		sch.quiet[b] = q
		sum, lo, hi := int64(0), int64(math.MaxInt64), int64(math.MinInt64)
		for _, w := range sch.w[sch.ev[b]:] {
			sum += w // wraps only where the replay's bound fails
			lo, hi = min(lo, w), max(hi, w)
		}
		sch.wSum[b], sch.wMin[b], sch.wMax[b] = sum, lo, hi
	}
	sch.ev[nb] = int32(len(sch.w))
	hi := int64(0)
	for _, e := range sch.blockEA {
		hi = max(hi, int64(e))
	}
	for _, v := range sch.w {
		hi = max(hi, v)
	}
	sch.room = time.Duration(math.MaxInt64 - hi)
}

// diff returns x − y and whether it did not overflow.
func diff(x, y time.Duration) (int64, bool) {
	d := x - y
	return int64(d), (d < x) == (y > 0)
}
