package qos

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Verdict is the answer for one stream to "which detector, at which
// setting, for these targets, and is it better than the others beyond
// chance?" (Decide). Families are compared at their operating points (see
// the comment at the top of operating.go), not at sweep grid points, so
// the answer does not depend on the grid; String writes it as the text
// that fdreplay prints and its report shows.
type Verdict struct {
	Stream  string  `json:"stream"`
	Targets Targets `json:"targets"`
	// Span is the observed time of the stream.
	Span time.Duration `json:"span_ns"`
	// Ops holds each family's operating point, in the order given.
	Ops []OperatingPoint `json:"operating_points"`
	// Best indexes Ops: the family that meets the targets with the
	// smallest mean TD at its operating point; −1 when none does.
	Best int `json:"best"`
	// Rivals are the other families that meet the targets, fastest first,
	// each compared with Best.
	Rivals []Rival `json:"rivals,omitempty"`
	// Equivalence is the practical threshold: a TD difference smaller
	// than it is reported as equivalent whatever its interval
	// (DecideConfig.Equivalence times Best's mean TD).
	Equivalence time.Duration `json:"equivalence_ns"`
	// ExpectedMistakes is MR target × Span. Below minExpectedMistakes the
	// trace cannot confirm the MR target (Confirmable false: even a
	// setting without a mistake has a 95 % upper bound 3/Span above the
	// target), NeededSpan is the observed time that could (0 when no
	// finite trace can: the target MR = 0), and no difference is called
	// significant.
	ExpectedMistakes float64       `json:"expected_mistakes"`
	Confirmable      bool          `json:"confirmable"`
	NeededSpan       time.Duration `json:"needed_span_ns"`
	// Holdout is the share of the stream's time, at its end, that the
	// out-of-sample figures (OperatingPoint.Holdout) are reported on after
	// tuning on the rest; 0 when they were not computed.
	Holdout float64 `json:"holdout"`
	// HoldoutSkipped says why the out-of-sample figures asked for were not
	// computed (a part of the stream too short to tune or report on), ""
	// when they were or were not asked for.
	HoldoutSkipped string `json:"holdout_skipped,omitempty"`
	// NotCompared names the detectors of the run that were not swept
	// (set by the caller: Decide sees only the families it is given), so
	// that the text does not call the compared ones all there is.
	NotCompared []string `json:"not_compared,omitempty"`
	// Replicates is the number of bootstrap resamples.
	Replicates int `json:"replicates"`
	// Err, when set, says why no verdict could be reached (Decide's
	// error, kept by callers that go on with other streams).
	Err string `json:"error,omitempty"`
}

// OperatingPoint is one family's setting at the targets.
type OperatingPoint struct {
	Family string `json:"family"`
	Param  string `json:"param"`
	Unit   string `json:"unit"`
	// Found: a setting meets every target. Point is its QoS over the
	// whole stream (with Result.CI); when not Found, the setting nearest
	// to the targets: the smallest that meets the accuracy targets (TD is
	// then too long), or the largest swept value (none is accurate
	// enough).
	Found bool  `json:"found"`
	Point Point `json:"point"`
	// Edge says whether the setting lies at an end of the family's swept
	// range, and Widen names the --range that would widen it.
	Edge  Edge   `json:"edge,omitempty"`
	Widen string `json:"widen,omitempty"`
	// AtMin: at the lower edge, the smallest swept value is (within 4
	// significant digits) the smallest the family allows (Family.Min), so
	// no range makes it faster; Widen is then empty.
	AtMin bool `json:"at_min,omitempty"`
	// TDCI is the 95 % interval of the mean TD at the operating point
	// with the setting solved again in every bootstrap resample, so that
	// it includes the uncertainty of the MR (and QAP) estimate that the
	// setting was chosen by. MetShare is the share of resamples in which
	// a setting in the solver's bracket met the targets. In JSON TDCI is
	// null when not Found, and an unbounded end null (DurationCI).
	TDCI     DurationCI `json:"td_ci_ns"`
	MetShare float64    `json:"met_share"`
	// Holdout: the family tuned on the early part of the stream only and
	// its figures on that part (in sample) and on the rest (held out).
	Holdout *HoldoutFigures `json:"holdout,omitempty"`
	Err     string          `json:"error,omitempty"`

	// local holds the bracket of settings the bootstrap re-solves over
	// (ascending, with cells), r the cells compared.
	local []Point
}

// HoldoutFigures compares a setting tuned on the early part of a stream
// with the rest of it.
type HoldoutFigures struct {
	// Found: some setting meets the targets on the early part; Value is
	// the smallest one that does.
	Found    bool          `json:"found"`
	Value    float64       `json:"value"`
	InSample SplitFigures  `json:"in_sample"`
	HeldOut  SplitFigures  `json:"held_out"`
	Split    time.Duration `json:"split_ns"` // where the held-out part starts, from the stream's first arrival
	// MeetsHeldOut: the setting meets the targets on the held-out part.
	MeetsHeldOut bool `json:"meets_held_out"`
}

// SplitFigures are the QoS of a setting over part of a stream.
type SplitFigures struct {
	Span        time.Duration `json:"span_ns"`
	Mistakes    int           `json:"mistakes"`
	MRPerSecond float64       `json:"mr_per_second"`
	QAP         float64       `json:"qap"`
	TDMean      time.Duration `json:"td_mean_ns"`
}

// Rival is a family that meets the targets, compared with the Best, by
// both readings of Chen et al.'s curves.
type Rival struct {
	Op int `json:"op"`
	// TDDiff is Best's mean TD minus the rival's, both at their operating
	// points (negative: Best detects faster), with the 95 % percentile
	// interval of the paired, re-solved bootstrap; P is its two-sided
	// bootstrap p-value.
	TDDiff   time.Duration `json:"td_diff_ns"`
	TDDiffCI DurationCI    `json:"td_diff_ci_ns"`
	P        float64       `json:"p"`
	// Significant: the difference is non-zero at the 5 % level after
	// Holm's correction over all rivals of the stream (Holm, Scand. J.
	// Statist. 6(2), 1979), and the trace can confirm the targets.
	// Equivalent: |TDDiff| is below Verdict.Equivalence; it is then not
	// Significant, whatever its interval.
	Significant bool `json:"significant"`
	Equivalent  bool `json:"equivalent"`
	// AtTD is the rival at the setting whose mean TD is closest to Best's
	// from below (the second reading: MR at a given TD), MRDiff Best's MR
	// minus the rival's there with its paired 95 % interval; AtTDOK is
	// false when no swept setting of the rival is that fast.
	AtTD     Point      `json:"at_td"`
	AtTDOK   bool       `json:"at_td_ok"`
	MRDiff   float64    `json:"mr_diff"`
	MRDiffCI [2]float64 `json:"mr_diff_ci"`
}

// DecideConfig configures Decide.
type DecideConfig struct {
	// Sweep configures the replays the solver runs (Config.Intervals is
	// always on).
	Sweep SweepConfig
	// Equivalence is the practical threshold as a share of the best
	// family's mean TD: a smaller TD difference is reported equivalent.
	// 0 means DefaultEquivalence; a negative value turns it off.
	Equivalence float64
	// Holdout is the share of the stream's time, at its end, held out
	// from tuning for the out-of-sample figures. 0 means DefaultHoldout; a
	// negative value turns them off.
	Holdout float64
}

const (
	// DefaultEquivalence: a 1 % difference in mean TD is below what a
	// deployment notices (it is within the run-to-run spread of the
	// network delay on the traces in docs/experiments.md) and below the
	// resolution a sweep grid of the default size gives.
	DefaultEquivalence = 0.01
	// DefaultHoldout: tune on the first half, check on the second. Half
	// keeps as many expected mistakes in each part, so that the held-out
	// MR is as precise as the in-sample one; the verdict itself uses the
	// whole stream, where the MR target is best checked.
	DefaultHoldout = 0.5
	// minExpectedMistakes: a trace over which the MR target allows fewer
	// mistakes than this cannot confirm it (rule of three: with none
	// observed, the 95 % upper bound of MR is 3/T_obs).
	minExpectedMistakes = 3
	// bracketFactor: the bootstrap re-solves each setting between the
	// settings that meet the accuracy targets made bracketFactor times
	// looser and tighter.
	bracketFactor = 4
	// bracketPoints settings are swept across that bracket,
	// bracketPointsCostly for a family whose every point costs a replay.
	bracketPoints       = 64
	bracketPointsCostly = 32
	// holmLevel is the family-wise error rate of the comparisons.
	holmLevel = 0.05
)

// Decide solves every family of fams for its operating point on s at t,
// compares them (see Verdict) and returns the verdict. curves, when not
// nil, are the families' curves on s from a Sweep with Config.Intervals
// (matched by family name): their points start the solver without a
// replay. It fails only for invalid targets or when s cannot be replayed;
// a family that cannot be solved has OperatingPoint.Err set.
func Decide(s Stream, fams []Family, curves []Curve, t Targets, opt DecideConfig) (Verdict, error) {
	if err := t.Validate(); err != nil {
		return Verdict{}, err
	}
	eq, hold, err := opt.shares()
	if err != nil {
		return Verdict{}, err
	}
	if len(fams) == 0 {
		return Verdict{}, fmt.Errorf("qos: stream %s: no family to decide between", s.Name)
	}
	v := Verdict{Stream: s.Name, Targets: t, Best: -1, Replicates: bootstrapReps}
	svs, r := v.startSolvers(s, fams, curves, opt.Sweep)
	if r.lo < 0 && len(v.Ops) > 0 && v.Ops[0].Err != "" {
		return v, fmt.Errorf("qos: stream %s: %s", s.Name, strings.TrimPrefix(v.Ops[0].Err, "qos: "))
	}
	if r.lo < 0 || r.hi-r.lo < minCells {
		return v, fmt.Errorf("qos: stream %s: too little observed time to decide (fewer than %d time cells)", s.Name, minCells)
	}
	v.solveOps(svs, r, t)
	v.setConfirmable()
	v.Best = -1
	if found := v.ranked(); len(found) > 0 {
		v.compare(svs, found, r, eq)
		v.holm()
	}
	v.holdout(svs, r, hold, t)
	return v, nil
}

// shares returns the equivalence and hold-out shares, defaults applied, or
// an error for a hold-out share of 1 or more or a NaN.
func (o DecideConfig) shares() (eq, hold float64, err error) {
	eq, hold = cmp.Or(o.Equivalence, DefaultEquivalence), cmp.Or(o.Holdout, DefaultHoldout)
	if hold >= 1 || math.IsNaN(hold) || math.IsNaN(eq) {
		return 0, 0, fmt.Errorf("qos: hold-out share %g and equivalence %g: want a share below 1 and a number", hold, eq)
	}
	return eq, hold, nil
}

// startSolvers appends one operating point per family to v.Ops and starts
// its solver on s (nil, with the error in the operating point, when it
// cannot start). It returns the solvers and the range of time cells where
// any of them observed the stream (lo < 0: none).
func (v *Verdict) startSolvers(s Stream, fams []Family, curves []Curve, sweep SweepConfig) ([]*solver, cellRange) {
	svs := make([]*solver, len(fams))
	r := cellRange{lo: -1}
	for i, f := range fams {
		op := OperatingPoint{Family: f.Name, Param: f.Param, Unit: f.Unit}
		sv, err := newSolver(s, f, curveOf(curves, f.Name, s.Name), sweep)
		if err != nil {
			op.Err = err.Error()
		} else {
			svs[i] = sv
			r = sv.widen(r)
		}
		v.Ops = append(v.Ops, op)
	}
	return svs, r
}

// curveOf returns the curve of family on stream among curves, or nil.
func curveOf(curves []Curve, family, stream string) *Curve {
	for k := range curves {
		if curves[k].Family == family && curves[k].Stream == stream {
			return &curves[k]
		}
	}
	return nil
}

// widen returns r widened to the time cells where a point of sv observed
// the stream.
func (sv *solver) widen(r cellRange) cellRange {
	for _, p := range sv.grid {
		lo, hi := p.cells.active()
		if hi > lo {
			r = cellRange{lo: minRange(r.lo, lo), hi: max(r.hi, hi)}
		}
	}
	return r
}

// solveOps solves the operating point of every started solver over the
// cells r and sets Span, the time the verdict covers.
func (v *Verdict) solveOps(svs []*solver, r cellRange, t Targets) {
	var grid cellGrid
	for _, sv := range svs {
		if sv != nil {
			grid = sv.grid[0].cells.grid
			break
		}
	}
	v.Span = time.Duration(math.Round(float64(grid.width) * float64(r.hi-r.lo)))
	for i, sv := range svs {
		if sv == nil {
			continue
		}
		if err := sv.solveOp(&v.Ops[i], r, t); err != nil {
			v.Ops[i].Err = err.Error()
		}
	}
	for _, p := range v.Ops {
		if p.Found && p.Point.cells != nil {
			q := p.Point.cells.sums(r.lo, r.hi)
			v.Span = time.Duration(math.Round(q.span))
			break
		}
	}
}

// ranked returns the indices of the operating points found without error,
// the smallest mean TD first (then the smallest MR; ties keep fams' order).
func (v *Verdict) ranked() []int {
	var found []int
	for i, p := range v.Ops {
		if p.Found && p.Err == "" {
			found = append(found, i)
		}
	}
	slices.SortStableFunc(found, func(a, b int) int {
		pa, pb := v.Ops[a].Point, v.Ops[b].Point
		return cmp.Or(cmp.Compare(pa.TD.Mean, pb.TD.Mean), cmp.Compare(pa.MRPerSecond, pb.MRPerSecond))
	})
	return found
}

// compare makes found[0] the best family and compares every other found
// family with it (Rivals), a TD difference below the share eq of the
// best's mean TD counting as equivalent.
func (v *Verdict) compare(svs []*solver, found []int, r cellRange, eq float64) {
	v.Best = found[0]
	if eq > 0 {
		v.Equivalence = time.Duration(eq * float64(v.Ops[v.Best].Point.TD.Mean))
	}
	reps, halves := v.resolve(found, r)
	best := v.Ops[v.Best]
	for _, i := range found[1:] {
		rv := Rival{Op: i, TDDiff: best.Point.TD.Mean - v.Ops[i].Point.TD.Mean}
		d := make([]float64, len(reps[v.Best]))
		tie := make([]float64, len(d))
		for k := range d {
			d[k] = reps[v.Best][k] - reps[i][k]
			tie[k] = halves[v.Best][k] + halves[i][k]
		}
		rv.P = bootstrapP(d, tie)
		ci := percentiles(d)
		rv.TDDiffCI = [2]time.Duration{roundDur(ci[0]), roundDur(ci[1])}
		rv.Equivalent = v.Equivalence > 0 && absDur(rv.TDDiff) < v.Equivalence
		svs[i].atTD(&rv, best.Point, v.Ops[i].Point, r)
		v.Rivals = append(v.Rivals, rv)
	}
}

func minRange(a, b int) int {
	if a < 0 {
		return b
	}
	return min(a, b)
}

// roundDur rounds x ns to a Duration, clamped to its range (NaN: 0).
func roundDur(x float64) time.Duration {
	if math.IsNaN(x) {
		return 0
	}
	if math.IsInf(x, 1) || x > math.MaxInt64 {
		return math.MaxInt64
	}
	if math.IsInf(x, -1) || x < math.MinInt64 {
		return math.MinInt64
	}
	return time.Duration(math.Round(x))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// setConfirmable sets ExpectedMistakes, Confirmable and NeededSpan.
func (v *Verdict) setConfirmable() {
	t := v.Targets
	v.Confirmable = true
	switch {
	case t.NoMistakes:
		v.Confirmable = false
	case t.MaxMRPerSecond > 0:
		v.ExpectedMistakes = t.MaxMRPerSecond * v.Span.Seconds()
		if v.ExpectedMistakes < minExpectedMistakes {
			v.Confirmable = false
			v.NeededSpan = time.Duration(math.Ceil(minExpectedMistakes / t.MaxMRPerSecond * 1e9))
		}
	}
}

// bootstrapP is the two-sided bootstrap p-value of "the mean of the
// differences d is 0": twice the smaller share of resamples on either
// side of 0, counted as (k + 1)/(n + 1) (Davison and Hinkley, Bootstrap
// Methods, 1997, §4.4); NaN differences are dropped. A difference within
// tie[k] of 0 (nil: 0) counts on both sides, as 0 does: each resample's
// TD is known only to the bracket's resolution (resolve's half-widths,
// summed over the pair), so a difference below it is no evidence of a
// side. Without this, two settings that are one detector (Chen's α and a
// fixed timeout at n = 1), solved on brackets a few nanoseconds apart,
// differed by up to 2 µs of one sign in every resample and got p = 0.036
// for a TD difference of 0.0 ms.
func bootstrapP(d, tie []float64) float64 {
	var le, ge, n int
	for k, x := range d {
		if math.IsNaN(x) {
			continue
		}
		w := 0.0
		if tie != nil {
			w = tie[k]
		}
		n++
		if x <= w {
			le++
		}
		if x >= -w {
			ge++
		}
	}
	if n == 0 {
		return 1
	}
	return min(1, 2*float64(min(le, ge)+1)/float64(n+1))
}

// holm sets Rival.Significant by Holm's step-down procedure at
// holmLevel: the k-th smallest p-value of m is compared with
// holmLevel/(m − k + 1) until one is not below it. Equivalent rivals and
// a trace that cannot confirm the targets claim no significance.
func (v *Verdict) holm() {
	idx := make([]int, len(v.Rivals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v.Rivals[a].P, v.Rivals[b].P) })
	m := len(idx)
	for k, i := range idx {
		if !(v.Rivals[i].P <= holmLevel/float64(m-k)) {
			break
		}
		v.Rivals[i].Significant = true
	}
	for i := range v.Rivals {
		if v.Rivals[i].Equivalent || !v.Confirmable {
			v.Rivals[i].Significant = false
		}
	}
}
