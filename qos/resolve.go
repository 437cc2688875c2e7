package qos

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// resolve runs the bootstrap that re-solves each found family's setting in
// every resample: the resamples are circular block resamples of the time
// cells r (the same block starts for every family, hence paired; the
// block length the largest the rule of Politis and White gives for any of
// the families' operating points, see blockLength), and in each the
// family's setting is the smallest of its bracket (OperatingPoint.local)
// that meets the targets on the resampled cells. Its mean TD there, taken
// halfway to the bracket's next smaller setting (the step of MR lies
// between them), shifted by the difference between the solved setting's
// TD and the same rule applied to the stream itself, is the resample's
// value. A resample in which no setting of
// the bracket meets the targets counts +Inf (the family does no better
// than its slowest bracketed setting). It returns, indexed like v.Ops, the
// values per resample (nil for the families not in found) and each
// value's half-width: half the TD between the two settings the step of
// MR lies between, the most the value can be off the TD a finer bracket
// would solve (0 when the bracket's first setting meets the targets, or
// none does). It sets TDCI and MetShare.
func (v *Verdict) resolve(found []int, r cellRange) (vals, halves [][]float64) {
	n := r.hi - r.lo
	blk := 1
	for _, i := range found {
		cs := v.Ops[i].Point.cells
		for _, z := range cs.linearized(r.lo, r.hi, cs.sums(r.lo, r.hi)) {
			blk = max(blk, blockLength(z))
		}
	}
	starts := resampleStarts(n, blk)
	blocks := (n + blk - 1) / blk
	vals, halves = make([][]float64, len(v.Ops)), make([][]float64, len(v.Ops))
	t := v.Targets
	for _, i := range found {
		op := &v.Ops[i]
		pre := make([]resampler, len(op.local))
		for k := range op.local {
			pre[k] = newResampler(op.local[k].cells, r.lo, n, blk, starts)
			defer pre[k].release()
		}
		// solveAt is the setting's TD on the bracket for cell sums q(k),
		// and its half-width.
		solveAt := func(q func(k int) qosSums) (td, half float64) {
			prevTD := math.NaN()
			for k := range op.local {
				f := figuresOf(q(k))
				if !t.accurate(f) {
					prevTD = f.TD
					continue
				}
				if !t.fast(f) {
					break
				}
				if !math.IsNaN(prevTD) {
					return (f.TD + prevTD) / 2, math.Abs(f.TD-prevTD) / 2
				}
				return f.TD, 0
			}
			return math.Inf(1), 0
		}
		// The bracket's value on the stream itself differs from the solved
		// setting's TD by the bracket's spacing: every resample is shifted
		// by that difference, so that the interval is centred as the
		// solved value is and does not depend on the spacing.
		shift := 0.0
		if td0, _ := solveAt(func(k int) qosSums { return op.local[k].cells.sums(r.lo, r.hi) }); !math.IsInf(td0, 1) {
			shift = float64(op.Point.TD.Mean) - td0
		}
		tds, hs := make([]float64, bootstrapReps), make([]float64, bootstrapReps)
		met := 0
		for rep := range bootstrapReps {
			tds[rep], hs[rep] = solveAt(func(k int) qosSums { return pre[k].sum2(rep, rep, starts, blocks)[0] })
			tds[rep] += shift
			if !math.IsInf(tds[rep], 1) {
				met++
			}
		}
		vals[i], halves[i] = tds, hs
		ci := percentiles(append([]float64(nil), tds...))
		op.TDCI = [2]time.Duration{roundDur(ci[0]), roundDur(ci[1])}
		op.MetShare = float64(met) / bootstrapReps
	}
	return vals, halves
}

// atTD sets rv's second reading: the rival at its setting whose mean TD is
// closest to best's from below, and the paired difference of MR there. A
// rival whose own operating point own is within the solver's TD
// tolerance of best's is read at own: the refinement would otherwise
// stop a step below it for a few nanoseconds (user48 F31: the same
// detector on two grids, 60 ns apart, read at MR 0.1/s against its own
// 0.0918/s at the same TD).
func (sv *solver) atTD(rv *Rival, best, own Point, r cellRange) {
	target := float64(best.TD.Mean)
	below, hasBelow := own, true
	if d := best.TD.Mean - own.TD.Mean; d < -solveTDTolerance || d > solveTDTolerance {
		var err error
		below, _, hasBelow, _, err = sv.refine(r, func(f figures) bool { return !(f.TD <= target) })
		if err != nil {
			return
		}
	}
	if !hasBelow {
		return
	}
	rv.AtTD, rv.AtTDOK = below, true
	rv.MRDiff = best.MRPerSecond - below.MRPerSecond
	if d, err := Compare(best.Result, below.Result); err == nil {
		rv.MRDiffCI = d.MRCI
	}
}

// holdout sets each family's out-of-sample figures: tuned on the first
// 1 − share of the cells r, reported on the rest.
func (v *Verdict) holdout(svs []*solver, r cellRange, share float64, t Targets) {
	if share <= 0 {
		return
	}
	n, least := r.hi-r.lo, minCells/2
	split := r.lo + int(math.Round((1-share)*float64(n)))
	if split-r.lo < least || r.hi-split < least {
		v.HoldoutSkipped = holdoutSkipped(share, split-r.lo, r.hi-split, n, least)
		return
	}
	v.Holdout = share
	early, late := cellRange{r.lo, split}, cellRange{split, r.hi}
	for i, sv := range svs {
		if sv == nil || v.Ops[i].Err != "" {
			continue
		}
		h := &HoldoutFigures{}
		var at Point
		if sv.fam.Param == "" || len(sv.grid) == 1 {
			at, h.Found = sv.grid[0], true
		} else {
			var err error
			if _, at, _, h.Found, err = sv.refine(early, t.accurate); err != nil {
				continue
			}
		}
		if h.Found {
			h.Value = at.Value
			in, _ := rangeSums(&at, early)
			out, _ := rangeSums(&at, late)
			fin, fout := figuresOf(in), figuresOf(out)
			h.Found = t.fast(fin)
			h.InSample, h.HeldOut = splitFigures(in), splitFigures(out)
			h.MeetsHeldOut = t.accurate(fout) && t.fast(fout)
			g := at.cells.grid
			h.Split = time.Duration(split) * g.width
		}
		v.Ops[i].Holdout = h
	}
}

// holdoutSkipped says why a holdout of share cannot be computed: tuning
// on early cells and reporting on late ones, of n, needs least of each;
// it names the shares that would do, if any.
func holdoutSkipped(share float64, early, late, n, least int) string {
	why := fmt.Sprintf("a holdout of %s%% leaves %d of the stream's %d time cells to tune on and %d to report on, where each part needs %d",
		strconv.FormatFloat(100*share, 'g', 3, 64), early, n, late, least)
	if n < 2*least+1 {
		return why + ": the stream is too short for any holdout"
	}
	lo, hi := float64(least)/float64(n), 1-float64(least)/float64(n)
	return fmt.Sprintf("%s: give a share between %s and %s", why, strconv.FormatFloat(math.Ceil(lo*100)/100, 'g', 3, 64), strconv.FormatFloat(math.Floor(hi*100)/100, 'g', 3, 64))
}

func splitFigures(q qosSums) SplitFigures {
	f := figuresOf(q)
	return SplitFigures{Span: roundDur(q.span), Mistakes: int(math.Round(q.mist)), MRPerSecond: f.MR, QAP: f.QAP, TDMean: roundDur(f.TD)}
}
