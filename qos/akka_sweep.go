package qos

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// maxExactCrossing bounds the crossings t* and arrival times the grouped
// Akka pass handles itself: below 2^53 ns (104 days) ⌈t*⌉ is exact in a
// float64 and T_last + ⌈t*⌉ cannot saturate; beyond it the sweep falls back
// to one replay per point.
const maxExactCrossing = 1 << 53

// akkaGroup is a set of thresholds (points lo..hi−1 in increasing y(Θ))
// whose replays have recorded the same intervals so far, so that one
// detector stands for all of them. Its fields mirror the replayer's state,
// which the thresholds of a group share.
type akkaGroup struct {
	det    *phi.Akka // threshold of point lo
	lo, hi int

	evaluating bool
	warmUp     int
	start      time.Duration
	startFresh int  // index, among fresh heartbeats, of the first evaluated one
	pending    bool // a freshness point is in force over the current gap
	last       time.Duration
	mean, sd   float64 // m', s' of the form in force
	node       *akkaNode
}

// akkaNode holds, for the evaluated fresh heartbeats from..from+len(m)−1
// during which its points lo..hi−1 formed one group, the form (m', s')
// after each: TD_k(Θ) = ⌈AkkaCrossing(m', s', y(Θ))⌉ + base_k.
type akkaNode struct {
	lo, hi int
	from   int
	m, s   []float64
}

// akkaPass is the grouped one-pass sweep of Akka thresholds.
type akkaPass struct {
	cfg  Config
	ys   []float64 // y(Θ) per point, increasing
	thr  []float64 // a threshold per point
	grps []*akkaGroup
	all  []*akkaNode

	mistakes  []int
	suspected []time.Duration
	intervals [][]Interval

	records, stale int
	havePrev       bool
	prevA          time.Duration
	hasSeq         bool
	lastSeq        uint64
	seen           bool          // a fresh heartbeat was observed
	lastFresh      time.Duration // T_last
	delay          []int64       // A − σ per fresh heartbeat (0 without σ)
	lastNoSent     int           // last fresh index without a send time, −1
	lastImplaus    int           // last fresh index with a delay outside [0, MaxPlausibleDelay], −1

	sampleSize int // of tdSummary's rank windows (tests make it small)

	// With Config.Intervals: the per-time-cell breakdown of each point
	// (as the replayer's), the stream, the cell of each fresh heartbeat's
	// arrival, and the stale arrivals since the last fresh one (the gaps
	// a mistake's suspected time is split over, cell by cell).
	cells     []*cellSeries
	spans     *spanMemo
	closed    int // bytes of the nodes no group extends any more
	freshCell []uint8
	staleA    []time.Duration
}

// sweepAkka computes the points of an Akka φ threshold sweep (values, with the
// other settings from acfg) from one pass over hbs, exactly as one replay per
// threshold would (docs/algorithms.md, “φ accrual: Akka's variant” and
// “Replaying a trace”).
//
// A threshold's history depends on Θ only through the update rule: the
// interval I ending at an arrival is recorded iff float64(I) < t*(Θ) =
// max(0, m' + s'·y(Θ)) (phi.AkkaCrossing), which is non-decreasing in
// y(Θ). Thresholds whose replays have recorded the same intervals share
// one detector state, so the pass keeps groups of consecutive thresholds
// (in increasing y), one phi.Akka each. At an arrival that lies between the
// crossings of a group's lowest and highest threshold the group splits: the
// thresholds whose crossing lies above the interval record it, the others
// do not, and the upper part continues on a phi.Akka.Fork of the state
// before the arrival. Groups never merge: windows with the same samples
// still differ in their running sums, so merged statistics would not be
// bit-identical. Splits need an arrival with φ above a threshold (a
// mistake), so groups stay few in practice; at worst there is one per
// threshold.
//
// Within a group every freshness point is τ_j = T_last + ⌈t*(Θ_j)⌉ ≥ A_k
// after the fresh heartbeat k that set it, so each gap between fresh
// heartbeats holds at most one mistake per threshold, from τ_j to the next
// fresh arrival (stale heartbeats in between neither move τ nor end it),
// and the thresholds suspecting in a gap are a prefix of the group's: the
// gap costs one crossing unless it is a mistake. TD_k per threshold is
// rebuilt from the stored forms and summarized by the replay's own tdStats.
//
// It returns errNotLinear (Sweep then replays each point) when a value is
// not a valid threshold, when no heartbeat is evaluated or the stream is
// out of order (the replays report these errors), or when a crossing or an
// arrival leaves the range where the pass is exact (maxExactCrossing).
//
// The pass keeps forms per heartbeat (16 bytes per group and evaluated
// heartbeat, 9 bytes per fresh one): on a Source that is not a slice it
// reads the stream as it goes and returns errNotLinear too once these take
// more than groupBudget bytes, so that memory stays bounded whatever the
// stream's length.
func sweepAkka(acfg phi.AkkaConfig, values []float64, src Source, cfg Config) ([]*Point, error) {
	p, pointOf, err := newAkkaPass(acfg, values, cfg)
	if err != nil {
		return nil, err
	}
	res, err := p.run(src)
	if err != nil {
		return nil, err
	}
	pts := make([]*Point, len(values))
	for i, v := range values {
		pts[i] = &Point{Value: v, Result: res[pointOf[i]]}
	}
	return pts, nil
}

// newAkkaPass prepares the pass: the distinct y(Θ) of values in increasing
// order (pointOf maps each value to its point) and one group holding all.
func newAkkaPass(acfg phi.AkkaConfig, values []float64, cfg Config) (p *akkaPass, pointOf []int, err error) {
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	pointOf = make([]int, len(values))
	type yv struct {
		y, v float64
		i    int
	}
	order := make([]yv, len(values))
	for i, v := range values {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, nil, errNotLinear
		}
		order[i] = yv{phi.AkkaYOfLevel(v), v, i}
		if math.IsNaN(order[i].y) || math.IsInf(order[i].y, 0) {
			return nil, nil, errNotLinear
		}
	}
	slices.SortStableFunc(order, func(a, b yv) int { return cmp.Compare(a.y, b.y) }) // no NaN: checked above
	p = &akkaPass{cfg: cfg, lastNoSent: -1, lastImplaus: -1, sampleSize: 16384}
	for _, o := range order {
		if len(p.ys) == 0 || o.y != p.ys[len(p.ys)-1] {
			p.ys = append(p.ys, o.y)
			p.thr = append(p.thr, o.v)
		}
		pointOf[o.i] = len(p.ys) - 1
	}
	P := len(p.ys)
	c := acfg
	c.Threshold = p.thr[0]
	det, err := phi.NewAkka(c)
	if err != nil {
		return nil, nil, errNotLinear
	}
	p.grps = []*akkaGroup{{det: det, lo: 0, hi: P}}
	p.mistakes = make([]int, P)
	p.suspected = make([]time.Duration, P)
	if cfg.RecordMistakes {
		p.intervals = make([][]Interval, P)
	}
	if cfg.Intervals {
		p.cells = make([]*cellSeries, P)
	}
	return p, pointOf, nil
}

// groupBudget bounds the bytes the grouped pass keeps per heartbeat on a
// Source that is not a slice (a spooled stream): past it the sweep falls
// back to one replay per point.
var groupBudget = 48 << 20

// run makes the pass over src and returns each point's Result.
func (p *akkaPass) run(src Source) ([]Result, error) {
	_, isSlice := src.(sliceSource)
	p.delay = make([]int64, 0, min(src.Len(), bigStream))
	if p.cells != nil {
		g := newCellGrid(src)
		for j := range p.cells {
			p.cells[j] = newCellSeries(g)
		}
		p.spans = newSpanMemo(src)
		p.freshCell = make([]uint8, 0, min(src.Len(), bigStream))
	}
	seq, done := src.Pass()
	var err error
	for hb := range seq {
		if err = p.step(hb); err != nil {
			break
		}
		if !isSlice && p.kept() > groupBudget {
			err = errNotLinear
			break
		}
	}
	if e := done(); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	return p.finish()
}

// kept returns the bytes the pass keeps per heartbeat so far.
func (p *akkaPass) kept() int {
	n := 9 * len(p.delay)
	for _, g := range p.grps {
		if g.node != nil {
			n += 16 * len(g.node.m)
		}
	}
	return n + p.closed
}

func (p *akkaPass) step(hb detector.Heartbeat) error {
	if p.havePrev && hb.Arrival < p.prevA {
		return errNotLinear // the replays report it
	}
	p.records++
	stale := hb.HasSeq && p.hasSeq && hb.Seq <= p.lastSeq
	p.prevA, p.havePrev = hb.Arrival, true
	if stale {
		// Neither the detectors nor the freshness points move; a mistake
		// the stale arrival falls in continues to the next fresh one.
		p.stale++
		if p.cells != nil {
			p.staleA = append(p.staleA, hb.Arrival)
		}
		return nil
	}
	if hb.HasSeq {
		p.lastSeq, p.hasSeq = hb.Seq, true
	}
	for _, g := range p.grps {
		if g.pending {
			p.closeGap(g, hb.Arrival, true)
		}
	}
	p.staleA = p.staleA[:0]
	if p.seen {
		// The interval the detectors will judge (as phi's arrivals does).
		iv := time.Duration(min(uint64(hb.Arrival)-uint64(p.lastFresh), math.MaxInt64))
		if err := p.split(float64(iv)); err != nil {
			return err
		}
	}
	p.seen, p.lastFresh = true, hb.Arrival

	fi := len(p.delay) // index of this fresh heartbeat
	var d int64
	if hb.HasSent {
		d = int64(hb.Arrival - hb.Sent)
		if d < 0 || d > int64(MaxPlausibleDelay) {
			p.lastImplaus = fi
		}
	} else {
		p.lastNoSent = fi
	}
	p.delay = append(p.delay, d)
	if p.cells != nil {
		p.freshCell = append(p.freshCell, uint8(p.cells[0].grid.cell(hb.Arrival)))
	}
	if hb.Arrival > math.MaxInt64-maxExactCrossing {
		return errNotLinear
	}
	for _, g := range p.grps {
		g.det.Observe(hb)
		last, mean, sd, ok := g.det.Form()
		if !ok || last != hb.Arrival {
			return fmt.Errorf("qos: internal error: akka group did not take heartbeat at %v", hb.Arrival)
		}
		g.last, g.mean, g.sd = last, mean, sd
		if !(phi.AkkaCrossing(mean, sd, p.ys[g.hi-1]) < maxExactCrossing) {
			return errNotLinear
		}
		if tau, _ := g.det.FreshnessPoint(); tau != g.last+p.ceilCrossing(g, g.lo) {
			return fmt.Errorf("qos: internal error: akka freshness point %v, form gives %v", tau, g.last+p.ceilCrossing(g, g.lo))
		}
		ready := !g.det.WarmingUp()
		if !g.evaluating {
			if !ready || fi+1 <= p.cfg.WarmUp {
				g.warmUp++
				continue
			}
			g.evaluating, g.start, g.startFresh = true, hb.Arrival, fi
			p.newNode(g, fi)
		} else if !ready {
			return errNotLinear // Akka never goes back into warm-up
		}
		g.pending = true
		g.node.m = append(g.node.m, g.mean)
		g.node.s = append(g.node.s, g.sd)
	}
	return nil
}

// ceilCrossing returns ⌈t*⌉ of point j in group g's form (below
// maxExactCrossing, checked when the form was taken).
func (p *akkaPass) ceilCrossing(g *akkaGroup, j int) time.Duration {
	return time.Duration(math.Ceil(phi.AkkaCrossing(g.mean, g.sd, p.ys[j])))
}

// closeGap accounts the gap from g's last fresh heartbeat to the fresh
// arrival (fresh) or the end of the stream at end: each threshold whose τ
// lies before end suspects from τ to end, one mistake. τ is non-decreasing
// in the point, so those thresholds are a prefix of the group's.
func (p *akkaPass) closeGap(g *akkaGroup, end time.Duration, fresh bool) {
	for j := g.lo; j < g.hi; j++ {
		tau := g.last + p.ceilCrossing(g, j)
		if end <= tau {
			return
		}
		p.mistakes[j]++
		p.suspected[j] += end - tau
		if p.intervals != nil {
			p.intervals[j] = append(p.intervals[j], Interval{Start: tau, End: end})
		}
		if p.cells != nil {
			p.cellGap(p.cells[j], g.last, tau, end, fresh)
		}
	}
}

// cellGap puts a mistake from τ to end into cells as the replayer does:
// the gaps between consecutive arrivals from the fresh one at last through
// the stale ones (p.staleA) to end (fresh: the fresh arrival at end; else
// end is the last stale arrival) each give the part of the suspected time
// they hold to the cell where they start, and the mistake counts in the
// cell of the gap where it starts.
func (p *akkaPass) cellGap(cs *cellSeries, last, tau, end time.Duration, fresh bool) {
	prev, started := last, false
	add := func(a time.Duration) {
		if a > tau {
			c := cs.grid.cell(prev)
			if !started {
				cs.mist[c]++
				started = true
			}
			cs.susp[c] += float64(a - max(tau, prev))
		}
		prev = a
	}
	for _, a := range p.staleA {
		add(a)
	}
	if fresh {
		add(end)
	}
}

// split divides every group whose thresholds disagree on recording the
// interval iv (ns): the thresholds with t*(Θ) > iv record it and continue
// on a fork of the state before the arrival.
func (p *akkaPass) split(iv float64) error {
	for gi := 0; gi < len(p.grps); gi++ {
		g := p.grps[gi]
		recLo := iv < phi.AkkaCrossing(g.mean, g.sd, p.ys[g.lo])
		recHi := iv < phi.AkkaCrossing(g.mean, g.sd, p.ys[g.hi-1])
		if recLo == recHi {
			continue
		}
		if recLo {
			return fmt.Errorf("qos: internal error: akka crossing decreases with the threshold")
		}
		// The first point that records: recHi holds at hi−1.
		s := g.lo + 1
		for iv >= phi.AkkaCrossing(g.mean, g.sd, p.ys[s]) {
			s++
		}
		det, err := g.det.Fork(p.thr[s])
		if err != nil {
			return err
		}
		up := *g
		up.det, up.lo = det, s
		g.hi = s
		if g.evaluating {
			// Both parts go on with nodes of their own from this heartbeat.
			p.newNode(g, len(p.delay))
			p.newNode(&up, len(p.delay))
		}
		p.grps = slices.Insert(p.grps, gi+1, &up)
		gi++
	}
	return nil
}

func (p *akkaPass) newNode(g *akkaGroup, from int) {
	if g.node != nil {
		p.closed += 16 * len(g.node.m)
	}
	g.node = &akkaNode{lo: g.lo, hi: g.hi, from: from}
	p.all = append(p.all, g.node)
}

// finish builds each point's Result as the replay's finish would.
func (p *akkaPass) finish() ([]Result, error) {
	out := make([]Result, len(p.ys))
	fresh := len(p.delay)
	bMin, bMax := int64(p.cfg.DelayOffset), int64(p.cfg.DelayOffset)
	for _, d := range p.delay {
		bMin, bMax = min(bMin, d), max(bMax, d)
	}
	var buf []int64
	for _, g := range p.grps {
		if !g.evaluating {
			return nil, errNotLinear // ErrNoEvaluation: the replays report it
		}
		if g.pending {
			p.closeGap(g, p.prevA, false)
		}
		allSent, plaus := g.startFresh > p.lastNoSent, g.startFresh > p.lastImplaus
		sync := allSent && plaus
		switch p.cfg.Clock {
		case ClockSynchronized:
			sync = allSent
		case ClockUnsynchronized:
			sync = false
		}
		// The group's points have always been together: they share its
		// nodes, which cover the evaluated heartbeats in order.
		var nodes []*akkaNode
		at := g.startFresh
		for _, nd := range p.all {
			if g.lo < nd.lo || g.lo >= nd.hi {
				continue
			}
			if nd.from != at || g.hi > nd.hi {
				return nil, fmt.Errorf("qos: internal error: akka node of heartbeat %d follows %d", nd.from, at)
			}
			nodes = append(nodes, nd)
			at += len(nd.m)
		}
		if at != fresh {
			return nil, fmt.Errorf("qos: internal error: %d akka TD samples for %d evaluated heartbeats", at-g.startFresh, fresh-g.startFresh)
		}
		td := tdBatch{p: p, nodes: nodes, sync: sync, n: fresh - g.startFresh, bMin: bMin, bMax: bMax}
		for j := g.lo; j < g.hi; j += tdBatchSize {
			ys := p.ys[j:min(j+tdBatchSize, g.hi)]
			var st [tdBatchSize]TDStats
			var last [tdBatchSize]int64
			buf = td.summarize(ys, st[:len(ys)], last[:len(ys)], buf)
			for c := range ys {
				res := Result{Records: p.records, Stale: p.stale, WarmUp: g.warmUp, Evaluated: fresh - g.startFresh,
					Start: g.start, End: p.prevA, Mistakes: p.mistakes[j+c], Suspected: p.suspected[j+c],
					ClockSync: sync, TD: st[c], LastTD: time.Duration(last[c])}
				res.Span = res.End - res.Start
				if p.intervals != nil {
					res.MistakeIntervals = p.intervals[j+c]
				}
				if sync {
					res.TDBasis = TDSend
				} else {
					res.TDBasis = TDArrival
					res.DelayOffset = p.cfg.DelayOffset
				}
				res.setRates()
				if p.cells != nil {
					if err := p.setCells(&res, &td, j+c, g.start); err != nil {
						return nil, err
					}
				}
				out[j+c] = res
			}
		}
	}
	return out, nil
}

// setCells fills point j's per-cell breakdown (its mistakes and suspected
// time are in already; the span and TD_k as the replayer's finish adds
// them, in the same order) and its intervals.
func (p *akkaPass) setCells(res *Result, td *tdBatch, j int, start time.Duration) error {
	cs := p.cells[j]
	if err := p.spans.fill(cs, start); err != nil {
		return err
	}
	clear(cs.tdSum)
	clear(cs.tdN)
	y := p.ys[j]
	for _, nd := range td.nodes {
		for k := range nd.m {
			c := p.freshCell[nd.from+k]
			cs.tdSum[c] += float64(td.value(nd, k, y))
			cs.tdN[c]++
		}
	}
	res.setCI(cs)
	return nil
}

// tdBatchSize thresholds are summarized per read of a group's forms.
const tdBatchSize = 4

// tdBatch summarizes the TD_k of a group's thresholds: TD_k =
// ⌈AkkaCrossing(m'_k, s'_k, y(Θ))⌉ + base_k over the n heartbeats of nodes,
// base_k being A_k − σ_k when sync and d̄ otherwise, all bases in
// [bMin, bMax].
type tdBatch struct {
	p          *akkaPass
	nodes      []*akkaNode
	sync       bool
	n          int
	bMin, bMax int64
}

func (t *tdBatch) value(nd *akkaNode, k int, y float64) int64 {
	b := int64(t.p.cfg.DelayOffset)
	if t.sync {
		b = t.p.delay[nd.from+k]
	}
	return int64(math.Ceil(phi.AkkaCrossing(nd.m[k], nd.s[k], y))) + b
}

// stored returns what tdStats returns for threshold y, and the last TD_k,
// from all values stored in buf (returned for reuse).
func (t *tdBatch) stored(y float64, buf []int64) (TDStats, int64, []int64) {
	td := buf[:0]
	for _, nd := range t.nodes {
		for k := range nd.m {
			td = append(td, t.value(nd, k, y))
		}
	}
	last := td[len(td)-1]
	return tdStats(td), last, td
}

// summarize sets st[c] to what tdStats returns for the TD_k of threshold
// ys[c] (at most tdBatchSize), and last[c] to the last TD_k. For a long
// stream the values are not stored: as in rankValuesInt, a sample of them
// gives a window per rank, and one pass over the forms computes every
// threshold's values, adds them up, counts those below each window and keeps
// those inside (one read of the forms for the whole batch). A window that
// misses its rank, or bases so far apart that differences could overflow,
// make that threshold store its values and call tdStats; so does a sum that
// the float64 sum of tdStats would not give exactly. buf is scratch space,
// returned for reuse.
func (t *tdBatch) summarize(ys []float64, st []TDStats, last []int64, buf []int64) []int64 {
	n, B := t.n, len(ys)
	m := t.p.sampleSize
	const lim = 1 << 60
	if n < 8*m || t.bMin < -lim || t.bMax > lim {
		for c, y := range ys {
			st[c], last[c], buf = t.stored(y, buf)
		}
		return buf
	}
	starts := make([]int, len(t.nodes))
	for i, at := 0, 0; i < len(t.nodes); i++ {
		starts[i], at = at, at+len(t.nodes[i].m)
	}
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	// Window sides per threshold; beyond the sample they are the bounds of
	// every value, base ≤ TD_k < base + maxExactCrossing.
	var lo0, hi0, lo1, hi1 [tdBatchSize]int64
	sample := make([]int64, m)
	for c, y := range ys {
		for jj, k := range sampleIndices(n, m) {
			i, found := slices.BinarySearch(starts, k)
			if !found {
				i--
			}
			sample[jj] = t.value(t.nodes[i], k-starts[i], y)
		}
		val, has := sampleBounds(sample, ranks, n)
		lo0[c], hi0[c], lo1[c], hi1[c] = t.bMin, t.bMax+maxExactCrossing, t.bMin, t.bMax+maxExactCrossing
		if has[0] {
			lo0[c] = val[0]
		}
		if has[1] {
			hi0[c] = val[1]
		}
		if has[2] {
			lo1[c] = val[2]
		}
		if has[3] {
			hi1[c] = val[3]
		}
	}
	var sum [tdBatchSize]int64 // exact; equal to tdStats's float sum when checked below
	var mx [tdBatchSize]int64
	var b0, b1 [tdBatchSize]int
	var in0, in1 [tdBatchSize][]int64
	for c := range B {
		mx[c] = math.MinInt64
		in0[c], in1[c] = make([]int64, 0, 1024), make([]int64, 0, 1024)
	}
	var yv [tdBatchSize]float64
	copy(yv[:], ys)
	const block = 4096
	for _, nd := range t.nodes {
		for a := 0; a < len(nd.m); a += block {
			e := min(a+block, len(nd.m))
			ms := nd.m[a:e]
			ss := nd.s[a:e]
			ss = ss[:len(ms)]
			bs := t.p.delay[nd.from+a : nd.from+e]
			bs = bs[:len(ms)]
			for c := range B {
				y := yv[c]
				l0, h0, l1, h1 := lo0[c], hi0[c], lo1[c], hi1[c]
				s, x, c0, c1 := sum[c], mx[c], b0[c], b1[c]
				i0, i1 := slices.Grow(in0[c], len(ms)), slices.Grow(in1[c], len(ms))
				n0, n1 := len(i0), len(i1)
				w0, w1 := i0[:cap(i0)], i1[:cap(i1)]
				b := int64(t.p.cfg.DelayOffset)
				for k, mk := range ms {
					if t.sync {
						b = bs[k]
					}
					v := int64(math.Ceil(phi.AkkaCrossing(mk, ss[k], y))) + b
					s += v
					x = max(x, v)
					// Branch-free: the sign bit of v − lo is 1 iff v < lo.
					d0, d1 := uint64(v-l0), uint64(v-l1)
					c0 += int(d0 >> 63)
					c1 += int(d1 >> 63)
					w0[n0] = v
					n0 += int(((d0 | uint64(h0-v)) >> 63) ^ 1)
					w1[n1] = v
					n1 += int(((d1 | uint64(h1-v)) >> 63) ^ 1)
				}
				sum[c], mx[c], b0[c], b1[c] = s, x, c0, c1
				in0[c], in1[c] = w0[:n0], w1[:n1]
			}
		}
	}
	lastNode := t.nodes[len(t.nodes)-1]
	for c, y := range ys {
		r0, r1 := ranks[0]-b0[c], ranks[1]-b1[c]
		// tdStats adds float64(TD_k) in order: while every partial sum is
		// an integer of at most 2^53 (values ≥ 0, n·max ≤ 2^53) that sum is
		// exact and equals sum[c].
		exactSum := t.bMin >= 0 && mx[c] <= (1<<53)/int64(n)
		if r0 < 0 || r0 >= len(in0[c]) || r1 < 0 || r1 >= len(in1[c]) || !exactSum {
			st[c], last[c], buf = t.stored(y, buf)
			continue
		}
		st[c] = TDStats{
			Mean: time.Duration(math.Round(float64(sum[c]) / float64(n))),
			P50:  time.Duration(selectRank(in0[c], r0)),
			P99:  time.Duration(selectRank(in1[c], r1)),
			Max:  time.Duration(mx[c]),
		}
		last[c] = t.value(lastNode, len(lastNode.m)-1, y)
	}
	return buf
}
