package qos

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// String writes the verdict as fdreplay prints it and its report shows
// it: a first line naming the recommendation, then one indented line per
// caveat and per rival.
func (v Verdict) String() string {
	var b strings.Builder
	name := v.Stream
	if name == "" {
		name = "stream"
	}
	if v.Err != "" {
		return fmt.Sprintf("sender %s: no verdict: %s", name, v.Err)
	}
	if v.Best < 0 {
		fmt.Fprintf(&b, "sender %s: no detector meets the targets (%s) at any swept setting", name, v.Targets.String())
		v.notComparedLine(&b)
		v.edgeLines(&b)
		return b.String()
	}
	best := v.Ops[v.Best]
	r := best.Point.Result
	fmt.Fprintf(&b, "sender %s: best %s %s for %s: mean TD %s ms (95 %% CI %s–%s ms, the setting solved again in each resample), MR %s/s, QAP %s",
		name, best.Family, best.Setting(best.Point.Value), v.Targets.String(), fmtMS(r.TD.Mean), fmtMS(best.TDCI[0]), fmtMS(best.TDCI[1]),
		fmtG(r.MRPerSecond), strconv.FormatFloat(r.QAP, 'f', 6, 64))
	if note := marginNote(r, v.Targets); note != "" {
		b.WriteString("\n  " + note)
	}
	if !v.Confirmable {
		b.WriteString("\n  " + v.cannotAnswer())
	}
	if len(v.Rivals) == 0 && len(v.NotCompared) == 0 {
		b.WriteString("\n  No other detector meets the targets.")
	}
	if len(v.Rivals) == 0 && len(v.NotCompared) > 0 {
		b.WriteString("\n  No other swept detector meets the targets.")
	}
	for _, rv := range v.Rivals {
		b.WriteString("\n  " + v.rivalLine(rv))
	}
	v.notComparedLine(&b)
	v.edgeLines(&b)
	if h := best.Holdout; h != nil {
		b.WriteString("\n  " + v.holdoutLine(best))
	}
	return b.String()
}

// notComparedLine names the detectors that were not swept, hence not
// compared.
func (v Verdict) notComparedLine(b *strings.Builder) {
	if len(v.NotCompared) > 0 {
		b.WriteString("\n  Not compared (in the table at one setting, not swept): " + strings.Join(v.NotCompared, ", ") + "; --sweep sweeps every entry.")
	}
}

// rivalLine compares one rival with the best.
func (v Verdict) rivalLine(rv Rival) string {
	op := v.Ops[rv.Op]
	s := fmt.Sprintf("vs %s %s: TD difference %s ms (95 %% CI [%s, %s], p = %s) at the targets",
		op.Family, op.Setting(op.Point.Value), fmtMS(rv.TDDiff), fmtMS(rv.TDDiffCI[0]), fmtMS(rv.TDDiffCI[1]), strconv.FormatFloat(rv.P, 'g', 2, 64))
	switch {
	case rv.Equivalent:
		s += fmt.Sprintf(": equivalent (below the practical threshold of %s ms)", fmtMS(v.Equivalence))
	case !v.Confirmable:
		s += ": no significance claimed (the trace cannot confirm the targets)"
	case rv.Significant && rv.TDDiff < 0:
		s += ": the best detects faster beyond chance (Holm-corrected over the rivals)"
	case rv.Significant:
		s += ": differs beyond chance (Holm-corrected over the rivals)"
	default:
		s += ": not distinguishable beyond chance (Holm-corrected over the rivals)"
	}
	if rv.AtTDOK {
		s += fmt.Sprintf("; at TD %s ms its MR is %s/s (best − it: %s/s, 95 %% CI [%s, %s])",
			fmtMS(rv.AtTD.TD.Mean), fmtG(rv.AtTD.MRPerSecond), fmtG(rv.MRDiff), fmtG(rv.MRDiffCI[0]), fmtG(rv.MRDiffCI[1]))
	} else {
		s += "; no swept setting of it is as fast as the best"
	}
	if e, be := op.Point.Result.Evaluated, v.Ops[v.Best].Point.Result.Evaluated; e != be {
		s += fmt.Sprintf("; judged on %d heartbeats against the best's %d (a longer warm-up, or one again after a sender restart, left some out of one of them: the two were not measured on the same heartbeats)", e, be)
	}
	return s
}

// cannotAnswer says that the trace is too short for the MR target.
func (v Verdict) cannotAnswer() string {
	if v.Targets.NoMistakes {
		return "No trace can confirm MR = 0: a setting without mistakes over T has a 95 % upper bound of 3/T. No difference is claimed significant."
	}
	return fmt.Sprintf("The trace cannot answer: over its %s the MR target allows %s mistakes, fewer than %d, so it cannot confirm the target even for a setting without mistakes; that takes at least %s of trace (longer to tell settings near the target apart). No difference is claimed significant.",
		fmtSpan(v.Span), strconv.FormatFloat(v.ExpectedMistakes, 'f', 1, 64), minExpectedMistakes, fmtSpan(v.NeededSpan))
}

// edgeLines flags the families whose setting lies at an end of the swept
// range.
func (v Verdict) edgeLines(b *strings.Builder) {
	for _, op := range v.Ops {
		switch {
		case op.Err != "":
			fmt.Fprintf(b, "\n  %s: %s", op.Family, op.Err)
		case op.Edge == LowerEdge && op.AtMin:
			fmt.Fprintf(b, "\n  %s: the setting %s is the smallest swept and the smallest %s allows; no range makes it faster", op.Family, op.Setting(op.Point.Value), op.Family)
		case op.Edge == LowerEdge:
			fmt.Fprintf(b, "\n  %s: the setting %s is the smallest swept; a smaller one may meet the targets faster", op.Family, op.Setting(op.Point.Value))
		case op.Edge == UpperEdge:
			fmt.Fprintf(b, "\n  %s: no swept setting up to %s meets the targets", op.Family, op.Setting(op.Point.Value))
		default:
			continue
		}
		if op.Widen != "" {
			b.WriteString(": widen the range, e.g. " + op.Widen)
		}
	}
}

// holdoutLine gives the best family's out-of-sample figures.
func (v Verdict) holdoutLine(op OperatingPoint) string {
	h := op.Holdout
	pct := strconv.FormatFloat(100*(1-v.Holdout), 'g', 3, 64)
	if !h.Found {
		return fmt.Sprintf("Out of sample: on the first %s %% of the trace no setting of %s meets the targets.", pct, op.Family)
	}
	verdict := "meets the targets"
	if !h.MeetsHeldOut {
		verdict = "misses the targets"
	}
	return fmt.Sprintf("Out of sample: tuned on the first %s %% of the trace, %s %s gives TD %s ms, MR %s/s, QAP %s there; on the rest (held out) TD %s ms, MR %s/s, QAP %s: it %s.",
		pct, op.Family, op.Setting(h.Value),
		fmtMS(h.InSample.TDMean), fmtG(h.InSample.MRPerSecond), strconv.FormatFloat(h.InSample.QAP, 'f', 6, 64),
		fmtMS(h.HeldOut.TDMean), fmtG(h.HeldOut.MRPerSecond), strconv.FormatFloat(h.HeldOut.QAP, 'f', 6, 64), verdict)
}

// Setting writes a value of op's parameter as "alpha=326.4ms" (four
// significant digits), or "(single point)" for a family without one.
func (op OperatingPoint) Setting(x float64) string {
	if op.Param == "" {
		return "(single point)"
	}
	return op.Param + "=" + strconv.FormatFloat(x, 'g', 4, 64) + op.Unit
}

// String writes t as "TD ≤ 1s, MR ≤ 0.01667/s, QAP ≥ 0.999" ("MR = 0 (no
// mistake)" for NoMistakes, "none" without targets).
func (t Targets) String() string {
	var parts []string
	if t.MaxTD > 0 {
		parts = append(parts, "TD ≤ "+t.MaxTD.String())
	}
	if t.MaxMRPerSecond > 0 {
		parts = append(parts, "MR ≤ "+strconv.FormatFloat(t.MaxMRPerSecond, 'g', 4, 64)+"/s")
	}
	if t.NoMistakes {
		parts = append(parts, "MR = 0 (no mistake)")
	}
	if t.MinQAP > 0 {
		parts = append(parts, "QAP ≥ "+strconv.FormatFloat(t.MinQAP, 'g', -1, 64))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// marginNote says whether r meets t even at the unfavourable ends of its
// 95 % intervals, or which target its interval crosses ("" without
// intervals).
func marginNote(r Result, t Targets) string {
	ci := r.CI
	if ci == nil {
		return ""
	}
	var cross []string
	if t.MaxTD > 0 && ci.TDMean[1] > t.MaxTD {
		cross = append(cross, "TD")
	}
	if (t.MaxMRPerSecond > 0 && ci.MRPerSecond[1] > t.MaxMRPerSecond) || (t.NoMistakes && ci.MRPerSecond[1] > 0) {
		cross = append(cross, "MR")
	}
	if t.MinQAP > 0 && ci.QAP[0] < t.MinQAP {
		cross = append(cross, "QAP")
	}
	if len(cross) == 0 {
		return "It meets the targets even at the unfavourable ends of its 95 % intervals."
	}
	return "Its 95 % interval of " + strings.Join(cross, " and ") + " crosses the target: the trace cannot rule out that it misses it (a setting solved for the target sits at its edge; a larger one leaves a margin)."
}

// fmtMS writes d in milliseconds with one decimal ("∞" for the clamp of
// an infinite bound).
func fmtMS(d time.Duration) string {
	if d == math.MaxInt64 {
		return "∞"
	}
	if d == math.MinInt64 {
		return "−∞"
	}
	ms := math.Round(float64(d)/1e5) / 10
	if ms == 0 {
		ms = 0 // no "-0.0"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64)
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

// fmtSpan writes a trace length rounded to the second, or to the minute
// above an hour ("2h30m").
func fmtSpan(d time.Duration) string {
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

// HoldoutHeader names the columns of HoldoutRows.
var HoldoutHeader = []string{"detector", "setting tuned on the early part", "TD ms in sample", "MR 1/s in sample", "QAP in sample", "TD ms held out", "MR 1/s held out", "QAP held out", "held out"}

// HoldoutRows gives, per family with out-of-sample figures, its setting
// tuned on the early part of the stream and its figures there and on the
// held-out rest, side by side (columns: HoldoutHeader); nil when they
// were not computed.
func (v Verdict) HoldoutRows() [][]string {
	var rows [][]string
	for _, op := range v.Ops {
		h := op.Holdout
		if h == nil {
			continue
		}
		if !h.Found {
			rows = append(rows, []string{op.Family, "none meets the targets", "–", "–", "–", "–", "–", "–", "–"})
			continue
		}
		status := "meets the targets"
		if !h.MeetsHeldOut {
			status = "misses the targets"
		}
		q := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
		rows = append(rows, []string{op.Family, op.Setting(h.Value),
			fmtMS(h.InSample.TDMean), fmtG(h.InSample.MRPerSecond), q(h.InSample.QAP),
			fmtMS(h.HeldOut.TDMean), fmtG(h.HeldOut.MRPerSecond), q(h.HeldOut.QAP), status})
	}
	return rows
}

// Choices returns the operating points as Choices (one per family, in
// order; Shortfall from Targets.Shortfall), for displays of Tune's
// answers.
func (v Verdict) Choices() []Choice {
	out := make([]Choice, 0, len(v.Ops))
	for _, op := range v.Ops {
		sh := math.Inf(1)
		if op.Err == "" {
			sh = v.Targets.Shortfall(op.Point.Result)
		}
		out = append(out, Choice{Stream: v.Stream, Family: op.Family, Param: op.Param, Unit: op.Unit,
			Found: op.Found, Point: op.Point, Shortfall: sh})
	}
	return out
}
