package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/spec"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

func newTable(w io.Writer, header []string, rightFrom int) *tablewriter.Table {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignLeft
		if i >= rightFrom {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(header)
	return t
}

func fmtMS(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func fmtMR(x float64) string {
	if x == 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func fmtQAP(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }

func printStreamHeader(w io.Writer, in *input, s settings, cfg qos.Config, o options) {
	st := in.stats
	fmt.Fprintf(w, "sender %s (%s): %d heartbeats over %v, Δ = %v", displaySender(in), in.file, in.len(), st.Span.Round(time.Millisecond), in.interval)
	if st.HasSeq {
		fmt.Fprintf(w, ", loss %.2f%%", 100*st.LossRate)
	}
	if in.left > 0 {
		// Received, so not in the loss (user48's F18: 5 records left out
		// read as loss 0.08% on a trace without loss).
		fmt.Fprintf(w, ", %d left out by the input check", in.left)
	}
	// Stale heartbeats are shown to the detectors but evaluated by none:
	// without this the evaluated count does not add up.
	if n := st.Duplicates + st.Reordered; st.HasSeq && n > 0 {
		fmt.Fprintf(w, ", %d stale (%d reordered, %d duplicates)", n, st.Reordered, st.Duplicates)
	}
	fmt.Fprintf(w, ", warm-up %d heartbeats", s.warmUp)
	if s.windowShrunk {
		fmt.Fprintf(w, ", window n = %d (stream shorter than 2×%d)", s.window, o.window)
	}
	fmt.Fprintln(w)
	for _, f := range namedFamilies(o.detectors) {
		if f.UsesTargets {
			fmt.Fprintf(w, "%s targets:%s\n", f.Name, describeTargets(s.targets))
		}
	}
	switch {
	case o.clock == "unsync" || (o.clock == "auto" && !s.sync):
		fmt.Fprintf(w, "clocks not synchronized: TD = τ − A + d̄ with d̄ = %v (arrival-based; add the mean one-way delay to compare with send-based TDs)\n", o.delayOffset)
	default:
		fmt.Fprintf(w, "clocks synchronized: TD = τ − σ (from the send time)\n")
	}
	printDefaultsNote(w, s, o.detectors)
	if n := restartNote(in, o.detectors); n != "" {
		fmt.Fprintln(w, n)
	}
}

// restartNote says, for a stream with heartbeats that arrived more than
// the restart rule's default jump below the highest number before them,
// that the entries of dets replaying them with the rule off (a family
// with restart-jump, not given it: spec.Stream.Incarnation) took them as
// late heartbeats, where the live setting of the same text would reset;
// "" when there is no such heartbeat or entry. The setting texts stay the
// live ones (docs/fdreplay.md, "Late heartbeats and the restart rule").
func restartNote(in *input, dets []string) string {
	if in.farBehind == 0 {
		return ""
	}
	var off []string
	for _, e := range dets {
		if restartRuleOff(e) {
			off = append(off, e)
		}
	}
	if len(off) == 0 {
		return ""
	}
	hb, them := "heartbeats", "them"
	if in.farBehind == 1 {
		hb, them = "heartbeat", "it"
	}
	names := strings.Join(off, ", ")
	if n := len(off); n > 1 {
		names = strings.Join(off[:n-1], ", ") + " and " + off[n-1]
	}
	return fmt.Sprintf("restart rule off: %d %s arrived more than %d below the highest number before %s, replayed as late by %s (the input check splits a sender's restarts into streams); live, at the default restart-jump=%d, each is taken for a sender restart (docs/fdreplay.md says what each detector then does): give restart-jump above the reorder window there",
		in.farBehind, hb, detector.DefaultRestartJump, them, names, detector.DefaultRestartJump)
}

// restartRuleOff reports whether the entry e replays with the restart rule
// off: its family has restart-jump and e does not give it (a sweep of
// restart-jump gives it at every point, and its table row runs at the
// live default: resolve).
func restartRuleOff(e string) bool {
	f, ok := spec.Lookup(entryFamily(e))
	if !ok {
		return false
	}
	if _, has := f.Param(spec.RestartJump); !has {
		return false
	}
	if !isSpecEntry(e) {
		return true
	}
	var s spec.Spec
	if strings.Contains(e, "..") {
		w, err := spec.ParseSweep(e)
		if err != nil || w.Param == spec.RestartJump {
			return false
		}
		s = w.Spec
	} else {
		var err error
		if s, err = spec.Parse(e); err != nil {
			return false
		}
	}
	return !s.IsSet(spec.RestartJump)
}

// printDefaultsNote says which rules (spec.OutageRule) keep the φ models
// from learning an outage, and which defaults fdreplay scaled by Δ.
func printDefaultsNote(w io.Writer, s settings, dets []string) {
	used := map[spec.OutageRule]bool{}
	for _, e := range dets {
		if f, ok := spec.Lookup(entryFamily(e)); ok {
			used[f.Outages] = true
		}
	}
	if used[spec.SkipSuspected] {
		fmt.Fprintf(w, "outages not learnt: %s skip an interval that ends after τ (Akka's rule: the first heartbeat after a suspicion is left out of the history)", familiesWith(spec.SkipSuspected))
		if used[spec.SkipAboveMax] {
			fmt.Fprintf(w, "; %s skips intervals above its max-interval (Cassandra's fd_max_interval_ms)", familiesWith(spec.SkipAboveMax))
		}
		fmt.Fprintf(w, "; %[1]d skipped with fewer than %[1]d recorded in a row between two are a rate change and are learnt (relearn-after)", phi.DefaultRelearnAfter)
		fmt.Fprintln(w)
	}
	for _, n := range scaledNotes(s, dets) {
		fmt.Fprintln(w, n)
	}
}

// namedFamilies returns the families that --detectors names bare (by
// their registry name, without parameters), each once, in the order given.
func namedFamilies(dets []string) []*spec.Algorithm {
	var out []*spec.Algorithm
	for _, e := range dets {
		if f, ok := spec.Lookup(e); ok && !isSpecEntry(e) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// familiesWith returns the names of the registered families with outage
// rule r, joined with "and".
func familiesWith(r spec.OutageRule) string {
	var names []string
	for _, f := range spec.Algorithms() {
		if f.Outages == r {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, " and ")
}

// displaySender is the stream's sender as the terminal shows it (shown),
// with its incarnation when the sender restarted.
func displaySender(in *input) string {
	switch {
	case in.sender == "":
		return shown(in.name)
	case in.epochs > 1: // one incarnation of a restarted sender
		return fmt.Sprintf("%s@%d", shown(in.sender), in.epoch)
	}
	return shown(in.sender)
}

// shown is a sender id or a stream name as fdreplay prints it: as it is
// when it is valid UTF-8 of printable characters and spaces
// (strconv.IsPrint), else quoted with Go's escapes (strconv.Quote), so
// that the control and format characters of a hostile trace's ids (an
// escape sequence repainting the terminal, a right-to-left override)
// never reach the terminal or a log raw (user48's F7).
func shown(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) && r != ' ' }) {
		return s
	}
	return strconv.Quote(s)
}

// printTable prints one row per detector (single-point curves).
func printTable(w io.Writer, rows []qos.Curve, descs []string) error {
	t := newTable(w, []string{"detector", "setting", "evaluated", "mistakes", "MR (1/s)", "QAP", "E[TM] ms", "E[TMR] s", "TD mean ms", "TD p99 ms", "TD max ms"}, 2)
	for i, c := range rows {
		if len(c.Points) == 0 {
			msg := "no result"
			if c.Err != nil {
				msg = c.Err.Error()
			}
			if err := t.Append([]string{c.Family, descs[i], "–", "–", "–", "–", "–", "–", "–", "–", shorten(msg, 40)}); err != nil {
				return err
			}
			continue
		}
		r := c.Points[0].Result
		tm, tmr := "–", "–"
		if r.Mistakes > 0 {
			tm = fmtMS(r.MeanTM)
			tmr = strconv.FormatFloat(r.MeanTMR.Seconds(), 'f', 1, 64)
		}
		mr, qap := mrCell(r), qapCell(r)
		if r.Span == 0 {
			// One evaluated heartbeat: no time observed, so no rate and no
			// accuracy (qos reports MR 0 and QAP 1 by convention).
			mr, qap = "–", "–"
		}
		if err := t.Append([]string{c.Family, descs[i], strconv.Itoa(r.Evaluated), strconv.Itoa(r.Mistakes),
			mr, qap, tm, tmr, tdCell(r), fmtMS(r.TD.P99), fmtMS(r.TD.Max)}); err != nil {
			return err
		}
	}
	return t.Render()
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func describeTargets(t qos.Targets) string {
	s := ""
	if t.MaxTD > 0 {
		s += fmt.Sprintf(" TD ≤ %v", t.MaxTD)
	}
	if t.MaxMRPerSecond > 0 {
		s += fmt.Sprintf(" MR ≤ %.4g/s", t.MaxMRPerSecond)
	}
	if t.NoMistakes {
		s += " MR = 0 (no mistake)"
	}
	if t.MinQAP > 0 {
		s += fmt.Sprintf(" QAP ≥ %g", t.MinQAP)
	}
	return s
}
