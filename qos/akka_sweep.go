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

	sampleSize int // of tdSummary's rank windows (0: tdSampleSize; tests make it small)

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
// more than Config.Spill.GroupBytes bytes, so that memory stays bounded whatever the
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
	p = &akkaPass{cfg: cfg, lastNoSent: -1, lastImplaus: -1}
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

// run makes the pass over src and returns each point's Result.
func (p *akkaPass) run(src Source) ([]Result, error) {
	_, isSlice := src.(sliceSource)
	p.delay = make([]int64, 0, min(src.Len(), p.cfg.Spill.inMemory()))
	if p.cells != nil {
		g := newCellGrid(src)
		for j := range p.cells {
			p.cells[j] = newCellSeries(g)
		}
		p.spans = newSpanMemo(src)
		p.freshCell = make([]uint8, 0, min(src.Len(), p.cfg.Spill.inMemory()))
	}
	seq, done := src.Pass()
	var err error
	for hb := range seq {
		if err = p.step(hb); err != nil {
			break
		}
		if !isSlice && p.kept() > p.cfg.Spill.groupBytes() {
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
	d, sent, plausible := oneWayDelay(hb)
	if !plausible {
		p.lastImplaus = fi
	}
	if !sent {
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
