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
// pass handles itself: below 2^53 ns (104 days) ⌈t*⌉ is exact in a
// float64 and T_last + ⌈t*⌉ cannot saturate; beyond it the sweep falls back
// to one replay per point.
const maxExactCrossing = 1 << 53

// thresholdGroup is a set of thresholds (points lo..hi−1 in increasing y(Θ))
// whose replays have recorded the same intervals so far, so that one
// detector stands for all of them. Its fields mirror the replayer's state,
// which the thresholds of a group share.
type thresholdGroup struct {
	det    groupDetector // threshold of point lo
	lo, hi int

	evaluating bool
	warmUp     int
	start      time.Duration
	startFresh int  // index, among fresh heartbeats, of the first evaluated one
	pending    bool // a freshness point is in force over the current gap
	last       time.Duration
	mean, sd   float64 // the form in force (Akka's m', s'; μ, σ_eff)
	node       *groupNode

	rec   bool // whether the group recorded the latest interval judged
	agree int  // intervals judged alike by this group and the next one since they last differed
}

// groupNode holds, for the evaluated fresh heartbeats from..from+len(m)−1
// during which its points lo..hi−1 formed one group, the form (m, s)
// after each: TD_k(Θ) = ⌈crossing(m, s, y(Θ))⌉ + base_k.
type groupNode struct {
	lo, hi int
	from   int
	n      int // heartbeats
	// In memory, the forms in chunks of groupBlockLen (the last one
	// filling), so that a node growing with the stream is never copied.
	m, s [][]float64
	file *spillFile // or in a file (groupPass.spill)
}

// groupPass is the grouped one-pass sweep of the thresholds of a φ model
// whose history depends on Θ.
type groupPass struct {
	cfg  Config
	mdl  groupModel
	ys   []float64 // y(Θ) per point, increasing
	thr  []float64 // a threshold per point
	grps []*thresholdGroup
	all  []*groupNode

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
	delay          []int64       // A − σ per fresh heartbeat (0 without σ), in memory
	nFresh         int           // fresh heartbeats
	lastDelay      int64         // A − σ of the last fresh heartbeat
	bMin, bMax     int64         // least and greatest TD base (delays and d̄)
	freshSpill     *spillFile    // delays and cells once spilled (spill)
	lastNoSent     int           // last fresh index without a send time, −1
	lastImplaus    int           // last fresh index with a delay outside [0, MaxPlausibleDelay], −1

	sampleSize int // of tdSummary's rank windows (0: tdSampleSize; tests make it small)
	maxGroups  int // groups past which the pass gives up (0: no bound)
	peak       int // the most groups after any heartbeat

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

// groupDetector is a φ detector the grouped pass runs for a group of
// thresholds (phi.Akka, phi.Normal): its freshness point is τ = T_last +
// ⌈crossing(mean, sd, y(Θ))⌉ with the Form it reports.
type groupDetector interface {
	detector.Detector
	Form() (last time.Duration, mean, sd float64, ok bool)
}

// groupModel is what the grouped pass needs of a φ model whose history
// depends on Θ through a skip rule.
type groupModel struct {
	// y maps a valid threshold to the coefficient y(Θ) of its crossing;
	// valid reports whether a value is one (a value New accepts).
	y     func(threshold float64) float64
	valid func(v float64) bool
	// build returns the detector of a threshold, fork a copy of a
	// detector's state with another threshold.
	build func(threshold float64) (groupDetector, error)
	fork  func(d groupDetector, threshold float64) (groupDetector, error)
	// share, when positive, is the largest share of the points that may
	// be in groups of their own: past share·P groups the pass gives up
	// (errNotLinear: Sweep then replays each point), since a group costs
	// about what a replay of its own costs.
	share float64
	// same, when not nil, reports whether two detectors of the model
	// differ at most in their threshold (phi.Normal.SameHistory): two
	// neighbouring groups whose detectors are the same then join. The
	// pass compares two groups once they have judged every (the window
	// size) intervals in a row alike, the fewest after which the interval
	// they parted on can have left the window.
	same  func(a, b groupDetector) bool
	every int
	// records reports whether a detector whose crossing is c (ns)
	// records the interval iv (ns) ending at a fresh arrival, as far as
	// the threshold decides it. It must be non-decreasing in c; a model
	// may say false where other rules record anyway (the split is then
	// needless but exact).
	records func(iv, c float64) bool
}

// crossing is the crossing time t* = max(0, m + s·y) of both φ models'
// forms (phi.AkkaCrossing, phi.NormalCrossing, which is the same form);
// the pass checks each group's freshness point against its detector's.
func crossing(mean, sd, y float64) float64 { return phi.AkkaCrossing(mean, sd, y) }

// sweepGroups computes the points of a threshold sweep of model m (values)
// from one pass over src, exactly as one replay per threshold would
// (docs/algorithms.md, “φ accrual: Akka's variant”, “φ accrual: normal
// model” and “Replaying a trace”).
//
// A threshold's history depends on Θ only through the skip rule: the
// interval I ending at a fresh arrival is recorded or left out by a rule
// on I and t*(Θ) = max(0, m + s·y(Θ)) (m.records), non-decreasing in
// y(Θ): Akka records iff float64(I) < t*, the normal model with
// skip-suspected leaves I out iff I > ⌈t*⌉ (the arrival is after τ).
// Thresholds whose replays have recorded the same intervals share one
// detector state, so the pass keeps groups of consecutive thresholds (in
// increasing y), one detector each. At an arrival on which a group's
// lowest and highest threshold decide differently the group splits: the
// thresholds that record the interval continue on a fork (m.fork) of the
// state before the arrival, the others on the group's detector. Two
// neighbouring groups whose detectors have come to the same state again
// (m.same: the interval they parted on has left both windows, whose
// statistics depend on their samples only) join, on the lower group's
// detector, when the pass's own state for them agrees too. Splits need an
// arrival after a threshold's freshness point (a mistake), so groups stay
// few in practice; at worst there is one per threshold.
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
// out of order (the replays report these errors), when a crossing or an
// arrival leaves the range where the pass is exact (maxExactCrossing), or
// when the groups outnumber m.share of the points.
//
// The pass keeps forms per heartbeat (16 bytes per group and evaluated
// heartbeat, 9 bytes per fresh one): it reads the stream as it goes and,
// once these take more than Config.Spill.GroupBytes bytes, moves them to
// files where it goes on appending them (groupPass.spill), so that memory
// stays bounded whatever the stream's length, on a stream held in memory
// as on any other Source.
func sweepGroups(m groupModel, values []float64, src Source, cfg Config) ([]*Point, error) {
	p, pointOf, err := newGroupPass(m, values, cfg)
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

// newGroupPass prepares the pass: the distinct y(Θ) of values in increasing
// order (pointOf maps each value to its point) and one group holding all.
func newGroupPass(m groupModel, values []float64, cfg Config) (p *groupPass, pointOf []int, err error) {
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
		if !m.valid(v) {
			return nil, nil, errNotLinear
		}
		order[i] = yv{m.y(v), v, i}
		if math.IsNaN(order[i].y) || math.IsInf(order[i].y, 0) {
			return nil, nil, errNotLinear
		}
	}
	slices.SortStableFunc(order, func(a, b yv) int { return cmp.Compare(a.y, b.y) }) // no NaN: checked above
	p = &groupPass{cfg: cfg, mdl: m, lastNoSent: -1, lastImplaus: -1}
	for _, o := range order {
		if len(p.ys) == 0 || o.y != p.ys[len(p.ys)-1] {
			p.ys = append(p.ys, o.y)
			p.thr = append(p.thr, o.v)
		}
		pointOf[o.i] = len(p.ys) - 1
	}
	if len(p.ys) == 0 {
		return nil, nil, errNotLinear
	}
	P := len(p.ys)
	if m.share > 0 {
		p.maxGroups = max(1, int(m.share*float64(P)))
	}
	det, err := m.build(p.thr[0])
	if err != nil {
		return nil, nil, errNotLinear
	}
	p.grps = []*thresholdGroup{{det: det, lo: 0, hi: P}}
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
func (p *groupPass) run(src Source) ([]Result, error) {
	p.delay = make([]int64, 0, min(src.Len(), p.cfg.Spill.inMemory()))
	p.bMin, p.bMax = int64(p.cfg.DelayOffset), int64(p.cfg.DelayOffset)
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
	defer p.closeFiles()
	for hb := range seq {
		if err = p.step(hb); err != nil {
			break
		}
		p.peak = max(p.peak, len(p.grps))
		if p.maxGroups > 0 && len(p.grps) > p.maxGroups {
			err = errNotLinear
			break
		}
		if p.freshSpill == nil && p.kept() > p.cfg.Spill.groupBytes() {
			// In files each node's forms take a file of their own, read
			// back for each run of points that have always been together:
			// a pass whose groups have parted and joined more often than
			// it has points gives up rather than spill.
			if len(p.all) > len(p.ys) {
				err = errNotLinear
				break
			}
			if err = p.spill(); err != nil {
				break
			}
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
func (p *groupPass) kept() int {
	n := freshRecord * len(p.delay)
	for _, g := range p.grps {
		if g.node != nil {
			n += formRecord * g.node.n
		}
	}
	return n + p.closed
}

func (p *groupPass) step(hb detector.Heartbeat) error {
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

	fi := p.nFresh // index of this fresh heartbeat
	d, sent, plausible := oneWayDelay(hb)
	if !plausible {
		p.lastImplaus = fi
	}
	if !sent {
		p.lastNoSent = fi
	}
	var c uint8
	if p.cells != nil {
		c = uint8(p.cells[0].grid.cell(hb.Arrival))
	}
	p.addFresh(d, c)
	if hb.Arrival > math.MaxInt64-maxExactCrossing {
		return errNotLinear
	}
	for _, g := range p.grps {
		g.det.Observe(hb)
		last, mean, sd, ok := g.det.Form()
		if !ok || last != hb.Arrival {
			return fmt.Errorf("qos: internal error: φ group did not take heartbeat at %v", hb.Arrival)
		}
		g.last, g.mean, g.sd = last, mean, sd
		if !(crossing(mean, sd, p.ys[g.hi-1]) < maxExactCrossing) {
			return errNotLinear
		}
		if tau, _ := g.det.FreshnessPoint(); tau != g.last+p.ceilCrossing(g, g.lo) {
			return fmt.Errorf("qos: internal error: φ freshness point %v, form gives %v", tau, g.last+p.ceilCrossing(g, g.lo))
		}
		ready := !g.det.WarmingUp()
		if !g.evaluating {
			if !ready || fi+1 <= p.cfg.WarmUp {
				g.warmUp++
				continue
			}
			g.evaluating, g.start, g.startFresh = true, hb.Arrival, fi
			if err := p.newNode(g, fi); err != nil {
				return err
			}
		} else if !ready {
			return errNotLinear // neither model goes back into warm-up
		}
		g.pending = true
		p.addForm(g.node, g.mean, g.sd)
	}
	return p.join()
}

// join merges each group into the one below it when their detectors are
// the same but for the threshold (m.same) and the pass's state for them
// (warm-up, start of evaluation) is the same: the upper group's points go
// on with the lower group's detector, on a node of their own from the next
// heartbeat. A comparison that fails after the groups have judged alike
// long enough is repeated every m.every/8 intervals: most fail at once
// (the means differ), a few compare whole windows.
func (p *groupPass) join() error {
	if p.mdl.same == nil {
		return nil
	}
	for i := 0; i+1 < len(p.grps); i++ {
		g, u := p.grps[i], p.grps[i+1]
		if g.agree < p.mdl.every {
			continue
		}
		if g.evaluating != u.evaluating || g.warmUp != u.warmUp || g.start != u.start ||
			g.startFresh != u.startFresh || g.pending != u.pending || !p.mdl.same(g.det, u.det) {
			g.agree = p.mdl.every - max(1, p.mdl.every/8)
			continue
		}
		g.hi, g.agree = u.hi, u.agree
		if g.evaluating {
			p.closed += formRecord * u.node.n
			if err := p.newNode(g, p.nFresh); err != nil {
				return err
			}
		}
		p.grps = slices.Delete(p.grps, i+1, i+2)
		i-- // g may join the next group too
	}
	return nil
}

// ceilCrossing returns ⌈t*⌉ of point j in group g's form (below
// maxExactCrossing, checked when the form was taken).
func (p *groupPass) ceilCrossing(g *thresholdGroup, j int) time.Duration {
	return time.Duration(math.Ceil(crossing(g.mean, g.sd, p.ys[j])))
}

// closeGap accounts the gap from g's last fresh heartbeat to the fresh
// arrival (fresh) or the end of the stream at end: each threshold whose τ
// lies before end suspects from τ to end, one mistake. τ is non-decreasing
// in the point, so those thresholds are a prefix of the group's.
func (p *groupPass) closeGap(g *thresholdGroup, end time.Duration, fresh bool) {
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
func (p *groupPass) cellGap(cs *cellSeries, last, tau, end time.Duration, fresh bool) {
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
// interval iv (ns): those that record it (the upper part, m.records being
// non-decreasing in the crossing) continue on a fork of the state before
// the arrival.
func (p *groupPass) split(iv float64) error {
	rec := func(g *thresholdGroup, j int) bool { return p.mdl.records(iv, crossing(g.mean, g.sd, p.ys[j])) }
	for gi := 0; gi < len(p.grps); gi++ {
		g := p.grps[gi]
		recLo, recHi := rec(g, g.lo), rec(g, g.hi-1)
		g.rec = recLo
		if recLo == recHi {
			continue
		}
		if recLo {
			return fmt.Errorf("qos: internal error: φ group records an interval at Θ = %g, not at Θ = %g", p.thr[g.lo], p.thr[g.hi-1])
		}
		// The first point that records: recHi holds at hi−1.
		s := g.lo + 1
		for !rec(g, s) {
			s++
		}
		det, err := p.mdl.fork(g.det, p.thr[s])
		if err != nil {
			return err
		}
		up := *g
		up.det, up.lo, up.rec = det, s, true
		g.hi = s
		if g.evaluating {
			// Both parts go on with nodes of their own from this heartbeat.
			if err := p.newNode(g, p.nFresh); err != nil {
				return err
			}
			if err := p.newNode(&up, p.nFresh); err != nil {
				return err
			}
		}
		p.grps = slices.Insert(p.grps, gi+1, &up)
		gi++
	}
	for i, g := range p.grps[:len(p.grps)-1] {
		if g.rec == p.grps[i+1].rec {
			g.agree++
		} else {
			g.agree = 0
		}
	}
	return nil
}

func (p *groupPass) newNode(g *thresholdGroup, from int) error {
	if g.node != nil {
		p.closed += formRecord * g.node.n
	}
	g.node = &groupNode{lo: g.lo, hi: g.hi, from: from}
	p.all = append(p.all, g.node)
	if p.freshSpill != nil {
		f, err := newSpillFile(p.cfg.Spill.Dir)
		if err != nil {
			return err
		}
		g.node.file = &f
	}
	return nil
}
