package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/internal/outfile"
	"github.com/fdkit/fdkit/qos"
)

// parseShare parses a share given as a percentage ("1%") or a fraction
// ("0.01") for flag; "0" or "off" turns the feature off (−1, as
// qos.DecideConfig takes it). A share must lie in [0, 1).
func parseShare(flag, s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "off" {
		return -1, nil
	}
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSpace(strings.TrimSuffix(t, "%")), 0.01
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || !(x*scale >= 0) || x*scale >= 1 || math.IsInf(x, 0) {
		return 0, fmt.Errorf("--%s %q: want a share in [0, 1) as a fraction (0.01) or a percentage (1%%), or off", flag, s)
	}
	if x == 0 {
		return -1, nil
	}
	return x * scale, nil
}

// decideAll runs qos.Decide on every stream with its families and curves
// (curves in stream-major order, as SweepEach returns them); a stream it
// fails on gets a Verdict with Err set. notCompared names the entries
// that were not swept (Verdict.NotCompared).
func decideAll(streams []qos.Stream, fams [][]qos.Family, curves []qos.Curve, t qos.Targets, opt qos.DecideConfig, notCompared []string) ([]qos.Verdict, error) {
	var out []qos.Verdict
	k := 0
	for i, s := range streams {
		cs := curves[k : k+len(fams[i])]
		k += len(fams[i])
		v, err := qos.Decide(s, fams[i], cs, t, opt)
		if err != nil {
			// One stream without a verdict does not cost the others theirs.
			v = qos.Verdict{Stream: s.Name, Targets: t, Best: -1, Err: err.Error()}
		}
		v.NotCompared = notCompared
		out = append(out, v)
	}
	return out, nil
}

// printOperatingPoints prints each family's operating point (the setting
// solved for the targets, not a grid point), then the out-of-sample
// figures and the verdict text of each stream.
func printOperatingPoints(w io.Writer, vs []qos.Verdict, t qos.Targets) error {
	fmt.Fprintf(w, "operating points: the smallest setting that meets%s, solved on the parameter (TD interval: the setting solved again in each bootstrap resample)\n", describeTargets(t))
	tb := newTable(w, []string{"sender", "detector", "setting", "TD mean ms", "TD 95% CI ms", "MR (1/s)", "QAP", "note"}, 3)
	for _, v := range vs {
		for _, op := range v.Ops {
			r := op.Point.Result
			setting := op.Setting(op.Point.Value)
			ci, note := "–", ""
			if op.Found && op.MetShare > 0 {
				ci = fmt.Sprintf("[%s, %s]", fmtCIms(op.TDCI[0]), fmtCIms(op.TDCI[1]))
			}
			switch {
			case op.Err != "":
				setting, note = "–", op.Err
			case op.Found && op.Edge == qos.LowerEdge:
				note = "smallest swept setting"
			case op.Found:
			default:
				setting = nearestText(op, t)
			}
			if err := tb.Append([]string{shown(v.Stream), op.Family, setting, tdCell(r), ci, mrCell(r), qapCell(r), note}); err != nil {
				return err
			}
		}
	}
	if err := tb.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, v := range vs {
		if v.HoldoutSkipped != "" {
			fmt.Fprintf(w, "out of sample, sender %s: none: %s\n\n", v.Stream, v.HoldoutSkipped)
		}
		rows := v.HoldoutRows()
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "out of sample, sender %s: tuned on the first %s%% of the trace, reported there (in sample) and on the rest (held out)\n",
			shown(v.Stream), strconv.FormatFloat(100*(1-v.Holdout), 'g', 3, 64))
		tb := newTable(w, qos.HoldoutHeader, 2)
		for _, r := range rows {
			if err := tb.Append(r); err != nil {
				return err
			}
		}
		if err := tb.Render(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, v := range vs {
		fmt.Fprintln(w, v.String())
	}
	fmt.Fprintln(w)
	return nil
}

// fmtCIms writes an interval end in ms ("∞" for an unbounded one).
func fmtCIms(d time.Duration) string {
	if d == math.MaxInt64 {
		return "∞"
	}
	return fmtMS(d)
}

// nearestText describes a family that meets no target at any setting:
// its nearest setting (the most accurate swept one, or the smallest that
// is accurate enough when only the TD target is missed) and by how much
// it misses (qos.Targets.Shortfall).
func nearestText(op qos.OperatingPoint, t qos.Targets) string {
	setting := op.Setting(op.Point.Value)
	r := op.Point.Result
	sh := t.Shortfall(r)
	switch {
	case r.Records == 0:
		return "none meets the targets"
	case math.IsInf(sh, 1) && r.Span <= 0:
		return "none meets: no observed time (one heartbeat) to judge MR or QAP by"
	case math.IsInf(sh, 1) && t.MinQAP == 1:
		// Every setting that suspects at all misses QAP ≥ 1 by +Inf.
		return fmt.Sprintf("none meets; nearest %s still makes mistakes (QAP ≥ 1 allows none)", setting)
	case math.IsInf(sh, 1) && t.NoMistakes:
		return fmt.Sprintf("none meets; nearest %s still makes mistakes (MR = 0 allows none)", setting)
	}
	return fmt.Sprintf("none meets; nearest %s misses by %s×", setting, strconv.FormatFloat(sh, 'g', 3, 64))
}

// writeVerdicts writes the verdicts as verdict.json (a JSON array, one
// qos.Verdict per stream).
func writeVerdicts(st *outfile.Staging, vs []qos.Verdict) error {
	if vs == nil {
		vs = []qos.Verdict{}
	}
	return st.Write(verdictJSONName, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(vs)
	})
}
