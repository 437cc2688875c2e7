package qos

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// An operating point is the setting of a family at which it just meets a
// set of targets: the smallest parameter value whose MR and QAP meet them,
// and so (TD growing with the parameter) the smallest mean TD among the
// settings that do. Comparing families there, rather than at the points a
// sweep grid happens to hold, is the first reading of the TD–MR curves of
// Chen, Toueg and Aguilera (IEEE Trans. Computers 51(5), 2002, §5): TD at a
// given mistake rate. The solver assumes, as for every family in this
// package, that a larger parameter value means a later freshness point, so
// that MR falls and QAP and TD rise with it; it finds the value by
// refining the bracket in which the targets start to be met (K-section,
// each round one sweep of the family, one pass for the families with a
// one-pass method) until the mean TD at its two ends differs by at most
// solveTDTolerance.

const (
	// solveSplit is the number of interior values swept per refinement
	// round for a family whose points come from one pass (the bracket
	// shrinks by a factor of 9 per round), solveSplitCostly for one whose
	// every point costs a replay or an engine of its own (a factor of 3),
	// and solveRounds the most rounds.
	solveSplit       = 8
	solveSplitCostly = 2
	solveRounds      = 12
	// solveTDTolerance ends the refinement when the mean TD at the two
	// ends of the bracket differs by no more than this.
	solveTDTolerance = 10 * time.Microsecond
)

// cellRange is the range [lo, hi) of time cells a figure is computed over.
type cellRange struct{ lo, hi int }

// rangeSums returns the totals of p's cells over r; ok is false without
// per-cell data.
func rangeSums(p *Point, r cellRange) (q qosSums, ok bool) {
	if p.cells == nil {
		return q, false
	}
	return p.cells.sums(r.lo, r.hi), true
}

// figures are the QoS figures of totals q: MR per second, QAP, mean TD
// (NaN when undefined).
type figures struct {
	MR, QAP, TD float64
	Mistakes    float64
	Span        float64 // ns
}

func figuresOf(q qosSums) figures {
	return figures{MR: ratio(q.mist, q.span) * 1e9, QAP: 1 - ratio(q.susp, q.span), TD: ratio(q.tdSum, q.tdN), Mistakes: q.mist, Span: q.span}
}

// accurate reports whether f meets the accuracy targets of t (MR, QAP,
// no mistakes): the part of the targets that a larger parameter value
// helps to meet.
func (t Targets) accurate(f figures) bool {
	if t.needsTime() && !(f.Span > 0) {
		return false
	}
	if t.MaxMRPerSecond > 0 && f.MR > t.MaxMRPerSecond {
		return false
	}
	if t.NoMistakes && f.Mistakes > 0 {
		return false
	}
	if t.MinQAP > 0 && f.QAP < t.MinQAP {
		return false
	}
	return true
}

// fast reports whether f meets the TD target of t (NaN TD: no evaluated
// heartbeat, never fast).
func (t Targets) fast(f figures) bool {
	if t.MaxTD <= 0 {
		return true
	}
	return f.TD <= float64(t.MaxTD)
}

// scaled returns t with its MR bound and allowed unavailability 1 − QAP
// multiplied by k (the bracket of the bootstrap's re-solved settings). A
// bound that k·MR·span makes less than one mistake becomes NoMistakes.
func (t Targets) scaled(k, spanSec float64) Targets {
	s := t
	if t.MaxMRPerSecond > 0 {
		s.MaxMRPerSecond = t.MaxMRPerSecond * k
		if s.MaxMRPerSecond*spanSec < 1 {
			s.MaxMRPerSecond, s.NoMistakes = 0, true
		}
	}
	if t.MinQAP > 0 {
		s.MinQAP = max(0, 1-(1-t.MinQAP)*k)
	}
	return s
}

// solver finds settings of one family on one stream.
type solver struct {
	stream Stream
	fam    Family
	opt    SweepConfig
	grid   []Point // the family's own values, ascending, with cells
	// costly: each point costs about a replay (Curve.Method PerPoint or
	// SharedState), so the solver sweeps fewer points at a time.
	costly bool
	memo   map[float64]Point // every point swept so far, by value
}

// errNoCellData: the sweep kept no per-cell data (see Config.Intervals).
var errNoCellData = errors.New("qos: the sweep kept no per-time-cell data")

// newSolver sweeps f on s at its own values (or takes the points of c, a
// curve of f on s swept with Config.Intervals, when it has them).
func newSolver(s Stream, f Family, c *Curve, opt SweepConfig) (*solver, error) {
	opt.Config.Intervals = true
	opt.Progress = nil
	sv := &solver{stream: s, fam: f, opt: opt}
	var pts []Point
	if c != nil && len(c.Points) > 0 && c.Points[0].cells != nil {
		pts = slices.Clone(c.Points)
		sv.costly = c.Method == PerPoint || c.Method == SharedState
	} else {
		var err error
		if pts, err = sv.sweep(f.Values); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(pts, func(a, b Point) int { return cmpFloat(a.Value, b.Value) })
	if len(pts) == 0 {
		return nil, fmt.Errorf("qos: %s: no setting could be replayed", f.Name)
	}
	sv.grid = pts
	for _, p := range pts {
		sv.remember(p)
	}
	return sv, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sweep replays the family at vals and returns the points that replayed,
// in the order of vals. A value the solver has replayed before is not
// replayed again: a point carries the cells of the whole stream, so it
// serves every range, and the refinements of one solve (accuracy, the
// bootstrap's bracket, the held-out halves, MR at a given TD) start from
// the same brackets and split them alike.
func (sv *solver) sweep(vals []float64) ([]Point, error) {
	var missing []float64
	for _, v := range vals {
		if _, ok := sv.memo[v]; !ok {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		f := sv.fam
		f.Values = missing
		cs, err := Sweep([]Stream{sv.stream}, []Family{f}, sv.opt)
		if err != nil {
			return nil, err
		}
		if len(cs[0].Points) == 0 && cs[0].Err != nil && len(missing) == len(vals) {
			return nil, cs[0].Err
		}
		if len(missing) > 1 {
			sv.costly = cs[0].Method == PerPoint || cs[0].Method == SharedState
		}
		for _, p := range cs[0].Points {
			if p.cells == nil {
				return nil, errNoCellData
			}
			sv.remember(p)
		}
	}
	pts := make([]Point, 0, len(vals))
	for _, v := range vals {
		if p, ok := sv.memo[v]; ok {
			pts = append(pts, p)
		}
	}
	return pts, nil
}

// remember keeps p for later sweeps at its value.
func (sv *solver) remember(p Point) {
	if sv.memo == nil {
		sv.memo = make(map[float64]Point)
	}
	sv.memo[p.Value] = p
}

// firstTrue returns the index of the first point of pts at which pred
// holds on r, or len(pts).
func firstTrue(pts []Point, r cellRange, pred func(figures) bool) int {
	for i := range pts {
		q, _ := rangeSums(&pts[i], r)
		if pred(figuresOf(q)) {
			return i
		}
	}
	return len(pts)
}

// refine narrows the bracket (pts[i−1], pts[i]] in which pred, false at
// small values and true at large ones, starts to hold on r, and returns
// the points at its two ends (below is the zero Point, ok false, when pred
// holds at the family's smallest value; at is the zero Point, found false,
// when it holds at no value).
func (sv *solver) refine(r cellRange, pred func(figures) bool) (below, at Point, hasBelow, found bool, err error) {
	return sv.refineFrom(sv.grid, r, pred)
}

// refineFrom is refine starting from the points pts (ascending) rather
// than the family's own values.
func (sv *solver) refineFrom(pts []Point, r cellRange, pred func(figures) bool) (below, at Point, hasBelow, found bool, err error) {
	i := firstTrue(pts, r, pred)
	if i == len(pts) {
		return pts[len(pts)-1], Point{}, true, false, nil
	}
	if i == 0 {
		return Point{}, pts[0], false, true, nil
	}
	lo, hi := pts[i-1], pts[i]
	for range solveRounds {
		qlo, _ := rangeSums(&lo, r)
		qhi, _ := rangeSums(&hi, r)
		if figuresOf(qhi).TD-figuresOf(qlo).TD <= float64(solveTDTolerance) ||
			hi.Value-lo.Value <= 1e-9*math.Abs(hi.Value) {
			break
		}
		split := solveSplit
		if sv.costly {
			split = solveSplitCostly
		}
		vals := make([]float64, split)
		for k := range vals {
			vals[k] = lo.Value + (hi.Value-lo.Value)*float64(k+1)/float64(split+1)
		}
		mid, err := sv.sweep(vals)
		if err != nil {
			return Point{}, Point{}, false, false, err
		}
		all := append(append([]Point{lo}, mid...), hi)
		j := firstTrue(all, r, pred)
		if j == 0 || j == len(all) { // not monotone here: keep the bracket
			break
		}
		lo, hi = all[j-1], all[j]
	}
	return lo, hi, true, true, nil
}

// Edge says whether a chosen setting lies at an end of the swept range.
type Edge string

const (
	// NotAtEdge: the setting lies inside the swept range.
	NotAtEdge Edge = ""
	// LowerEdge: the family's smallest swept value already meets the
	// accuracy targets; a smaller one might too, with a shorter TD.
	LowerEdge Edge = "lower"
	// UpperEdge: no swept value meets the accuracy targets; a larger one
	// might.
	UpperEdge Edge = "upper"
)

// widenHint returns the --range a user could try for family f whose
// setting lies at edge e of the values lo..hi ("" when it cannot be
// widened that way, f.Max or f.Min being reached). A lower bound is
// rounded up to 4 significant digits, so that the range it prints is one
// the family accepts.
func widenHint(f *Family, e Edge, lo, hi float64) string {
	name := f.Name
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
	switch e {
	case LowerEdge:
		nlo := lo / 4
		if f.Min > 0 {
			if nlo = roundUp4(max(nlo, f.Min)); nlo >= lo {
				return ""
			}
		}
		return fmt.Sprintf("--range %s=%s:%s", name, num(nlo), num(hi))
	case UpperEdge:
		if f.Max > 0 && hi >= f.Max {
			return ""
		}
		nhi := hi * 4
		if f.Max > 0 {
			nhi = f.Max
		}
		return fmt.Sprintf("--range %s=%s:%s", name, num(lo), num(nhi))
	}
	return ""
}

// roundUp4 rounds x > 0 up to 4 significant digits (0.30103 to 0.3011).
func roundUp4(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x))-3)
	round := func(y float64) float64 {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(y, 'g', 4, 64), 64)
		return v
	}
	v := round(x) // the nearest, then one step up if it is below
	if v < x {
		v = round(v + p)
	}
	return v
}

// solveOp sets op to the family's operating point at t on the cells r,
// and the bracket of settings the bootstrap re-solves over.
func (sv *solver) solveOp(op *OperatingPoint, r cellRange, t Targets) error {
	g := sv.grid
	if sv.fam.Param == "" || len(g) == 1 { // a single setting: nothing to solve
		op.Point = g[0]
		q, _ := rangeSums(&g[0], r)
		f := figuresOf(q)
		op.Found = t.accurate(f) && t.fast(f)
		op.local = g[:1]
		return nil
	}
	_, at, hasBelow, found, err := sv.refine(r, t.accurate)
	if err != nil {
		return err
	}
	if !found {
		op.Point, op.Edge = g[len(g)-1], UpperEdge
		op.Widen = widenHint(&sv.fam, UpperEdge, g[0].Value, g[len(g)-1].Value)
		return nil
	}
	q, _ := rangeSums(&at, r)
	op.Point = at
	op.Found = t.fast(figuresOf(q))
	if !hasBelow {
		op.Edge = LowerEdge
		op.Widen = widenHint(&sv.fam, LowerEdge, g[0].Value, g[len(g)-1].Value)
		op.AtMin = op.Widen == "" && sv.fam.Min > 0
	}
	if !op.Found {
		return nil
	}
	span := q.span / 1e9
	lo, hi := at.Value, g[len(g)-1].Value
	loose, tight := t.scaled(bracketFactor, span).accurate, t.scaled(1.0/bracketFactor, span).accurate
	pts, err := sv.extend(r, loose, tight)
	if err != nil {
		return err
	}
	// A setting at the lower end of the range is reported there: the
	// resamples do not go below it either.
	if _, p, _, ok, err := sv.refineFrom(pts, r, loose); err != nil {
		return err
	} else if ok && op.Edge != LowerEdge {
		lo = p.Value
	}
	if _, p, _, ok, err := sv.refineFrom(pts, r, tight); err != nil {
		return err
	} else if ok {
		hi = p.Value
	}
	op.local = []Point{at}
	if hi > lo {
		n := bracketPoints
		if sv.costly {
			n = bracketPointsCostly
		}
		vals := make([]float64, n)
		for k := range vals {
			vals[k] = lo + (hi-lo)*float64(k)/float64(n-1)
		}
		pts, err := sv.sweep(vals)
		if err != nil {
			return err
		}
		op.local = append(pts, at)
		slices.SortStableFunc(op.local, func(a, b Point) int { return cmpFloat(a.Value, b.Value) })
		// Later solves (out of sample, MR at a given TD) start from the
		// denser set.
		sv.grid = slices.SortedStableFunc(slices.Values(append(slices.Clone(sv.grid), op.local...)),
			func(a, b Point) int { return cmpFloat(a.Value, b.Value) })
	}
	return nil
}

// extend returns the family's swept points with settings added beyond
// its range where the bootstrap's bracket needs them: below the smallest
// value when it already meets the looser targets, above the largest when
// it does not meet the tighter ones (by factors of 2 up to 16, within the
// parameter's ceiling). The bracket then does not depend on the range a
// user swept.
func (sv *solver) extend(r cellRange, loose, tight func(figures) bool) ([]Point, error) {
	g := sv.grid
	var vals []float64
	if v := g[0].Value; v > 0 && firstTrue(g[:1], r, loose) == 0 {
		for _, k := range []float64{16, 8, 4, 2} {
			if v/k >= sv.fam.Min {
				vals = append(vals, v/k)
			}
		}
	}
	if v := g[len(g)-1].Value; v > 0 && firstTrue(g[len(g)-1:], r, tight) == 1 {
		for _, k := range []float64{2, 4, 8, 16} {
			if c := sv.fam.Max; c > 0 && v*k > c {
				break
			}
			vals = append(vals, v*k)
		}
	}
	if len(vals) == 0 {
		return g, nil
	}
	ext, err := sv.sweep(vals)
	if err != nil {
		return g, nil // the family cannot go there: keep its own range
	}
	pts := append(slices.Clone(g), ext...)
	slices.SortStableFunc(pts, func(a, b Point) int { return cmpFloat(a.Value, b.Value) })
	return pts, nil
}
