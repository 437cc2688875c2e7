package qos

import (
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
}

// sweepAkka computes the points of an Akka φ threshold sweep (values, with
// the other settings from acfg) from one pass over hbs, exactly as one
// replay per threshold would (ALGORITHMS.md §5.2, §9.3).
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
func sweepAkka(acfg phi.AkkaConfig, values []float64, hbs []detector.Heartbeat, cfg Config) ([]*Point, error) {
	p, pointOf, err := newAkkaPass(acfg, values, cfg)
	if err != nil {
		return nil, err
	}
	res, err := p.run(hbs)
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
	slices.SortStableFunc(order, func(a, b yv) int {
		switch {
		case a.y < b.y:
			return -1
		case a.y > b.y:
			return 1
		}
		return 0
	})
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
	return p, pointOf, nil
}

// run makes the pass over hbs and returns each point's Result.
func (p *akkaPass) run(hbs []detector.Heartbeat) ([]Result, error) {
	p.delay = make([]int64, 0, len(hbs))
	for _, hb := range hbs {
		if err := p.step(hb); err != nil {
			return nil, err
		}
	}
	return p.finish()
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
		return nil
	}
	if hb.HasSeq {
		p.lastSeq, p.hasSeq = hb.Seq, true
	}
	for _, g := range p.grps {
		if g.pending {
			p.closeGap(g, hb.Arrival)
		}
	}
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
// arrival (or the end of the stream) at end: each threshold whose τ lies
// before end suspects from τ to end, one mistake. τ is non-decreasing in
// the point, so those thresholds are a prefix of the group's.
func (p *akkaPass) closeGap(g *akkaGroup, end time.Duration) {
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
	g.node = &akkaNode{lo: g.lo, hi: g.hi, from: from}
	p.all = append(p.all, g.node)
}

// finish builds each point's Result as the replay's finish would.
func (p *akkaPass) finish() ([]Result, error) {
	out := make([]Result, len(p.ys))
	fresh := len(p.delay)
	var td []int64
	for _, g := range p.grps {
		if !g.evaluating {
			return nil, errNotLinear // ErrNoEvaluation: the replays report it
		}
		if g.pending {
			p.closeGap(g, p.prevA)
		}
		for j := g.lo; j < g.hi; j++ {
			res := Result{Records: p.records, Stale: p.stale, WarmUp: g.warmUp, Evaluated: fresh - g.startFresh,
				Start: g.start, End: p.prevA, Mistakes: p.mistakes[j], Suspected: p.suspected[j]}
			res.Span = res.End - res.Start
			if p.intervals != nil {
				res.MistakeIntervals = p.intervals[j]
			}
			allSent, plaus := g.startFresh > p.lastNoSent, g.startFresh > p.lastImplaus
			sync := allSent && plaus
			switch p.cfg.Clock {
			case ClockSynchronized:
				sync = allSent
			case ClockUnsynchronized:
				sync = false
			}
			res.ClockSync = sync
			if sync {
				res.TDBasis = TDSend
			} else {
				res.TDBasis = TDArrival
				res.DelayOffset = p.cfg.DelayOffset
			}
			var nodes []*akkaNode
			at := g.startFresh
			for _, nd := range p.all {
				if j < nd.lo || j >= nd.hi {
					continue
				}
				if nd.from != at {
					return nil, fmt.Errorf("qos: internal error: akka node of heartbeat %d follows %d", nd.from, at)
				}
				nodes = append(nodes, nd)
				at += len(nd.m)
			}
			if at-g.startFresh != res.Evaluated {
				return nil, fmt.Errorf("qos: internal error: %d akka TD samples for %d evaluated heartbeats", at-g.startFresh, res.Evaluated)
			}
			var last int64
			res.TD, last, td = p.tdSummary(nodes, p.ys[j], sync, res.Evaluated, td)
			res.LastTD = time.Duration(last)
			res.setRates()
			out[j] = res
		}
	}
	return out, nil
}

// tdSummary returns what tdStats returns for the TD_k of one threshold,
// y = y(Θ), over the heartbeats of nodes (n in all), and the last TD_k.
// TD_k = ⌈AkkaCrossing(m'_k, s'_k, y)⌉ + base_k, base_k being A_k − σ_k when
// sync and d̄ otherwise. For a long stream the values are not stored: as in
// rankValuesInt, a sample of them gives a window per rank, and one pass
// computes each value, adds it to the mean's sum (in order, as tdStats
// does), counts those below each window and keeps those inside. A window
// that misses its rank, or bases so far apart that differences could
// overflow, make it store the values and call tdStats. buf is scratch space,
// returned for reuse.
func (p *akkaPass) tdSummary(nodes []*akkaNode, y float64, sync bool, n int, buf []int64) (TDStats, int64, []int64) {
	if n == 0 {
		return TDStats{}, 0, buf
	}
	base := func(f int) int64 {
		if sync {
			return p.delay[f]
		}
		return int64(p.cfg.DelayOffset)
	}
	value := func(nd *akkaNode, k int) int64 {
		return int64(math.Ceil(phi.AkkaCrossing(nd.m[k], nd.s[k], y))) + base(nd.from+k)
	}
	stored := func() (TDStats, int64, []int64) {
		td := buf[:0]
		for _, nd := range nodes {
			for k := range nd.m {
				td = append(td, value(nd, k))
			}
		}
		last := td[len(td)-1]
		return tdStats(td), last, td
	}
	m := p.sampleSize
	if n < 8*m {
		return stored()
	}
	// Bounds of every value: base ≤ TD_k < base + maxExactCrossing.
	bMin, bMax := int64(p.cfg.DelayOffset), int64(p.cfg.DelayOffset)
	if sync {
		bMin, bMax = math.MaxInt64, math.MinInt64
		for _, nd := range nodes {
			for _, b := range p.delay[nd.from : nd.from+len(nd.m)] {
				bMin, bMax = min(bMin, b), max(bMax, b)
			}
		}
	}
	const lim = 1 << 60
	if bMin < -lim || bMax > lim {
		return stored()
	}
	starts := make([]int, len(nodes))
	for i, at := 0, 0; i < len(nodes); i++ {
		starts[i], at = at, at+len(nodes[i].m)
	}
	sample := make([]int64, m)
	for jj, k := range sampleIndices(n, m) {
		i, found := slices.BinarySearch(starts, k)
		if !found {
			i--
		}
		sample[jj] = value(nodes[i], k-starts[i])
	}
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	val, has := sampleBounds(sample, ranks, n)
	lo0, hi0, lo1, hi1 := bMin, bMax+maxExactCrossing, bMin, bMax+maxExactCrossing
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
	var sum float64
	var b0, b1 int
	mx := int64(math.MinInt64)
	var last int64
	in0 := make([]int64, 0, 1024)
	in1 := make([]int64, 0, 1024)
	const block = 4096
	for _, nd := range nodes {
		for a := 0; a < len(nd.m); a += block {
			e := min(a+block, len(nd.m))
			ms, ss := nd.m[a:e], nd.s[a:e]
			ss = ss[:len(ms)]
			in0, in1 = slices.Grow(in0, len(ms)), slices.Grow(in1, len(ms))
			n0, n1 := len(in0), len(in1)
			w0, w1 := in0[:cap(in0)], in1[:cap(in1)]
			bs := p.delay[nd.from+a : nd.from+e]
			bs = bs[:len(ms)]
			b := int64(p.cfg.DelayOffset)
			for k, mk := range ms {
				if sync {
					b = bs[k]
				}
				v := int64(math.Ceil(phi.AkkaCrossing(mk, ss[k], y))) + b
				sum += float64(v)
				mx = max(mx, v)
				// Branch-free: the sign bit of v − lo is 1 iff v < lo.
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
		last = int64(math.Ceil(phi.AkkaCrossing(nd.m[len(nd.m)-1], nd.s[len(nd.m)-1], y))) + base(nd.from+len(nd.m)-1)
	}
	r0, r1 := ranks[0]-b0, ranks[1]-b1
	if r0 < 0 || r0 >= len(in0) || r1 < 0 || r1 >= len(in1) {
		return stored()
	}
	return TDStats{
		Mean: time.Duration(math.Round(sum / float64(n))),
		P50:  time.Duration(selectRank(in0, r0)),
		P99:  time.Duration(selectRank(in1, r1)),
		Max:  time.Duration(mx),
	}, last, buf
}
