package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fdkit/fdkit/internal/outfile"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/report"
)

// reportRun is one replayed stream as the HTML report needs it.
type reportRun struct {
	streamRun
	// verdict is Decide's answer for the stream (nil without targets).
	verdict *qos.Verdict
}

// buildReport assembles the HTML report of a run: per stream the trace,
// its warnings, the default table (table, len(runs)·nd curves in stream
// order), the swept curves and the tuner's choices for the user's targets,
// or, without targets, for the defaults SFD is given (TD ≤ 10Δ, one
// mistake a minute, QAP ≥ 0.999).
func buildReport(o options, args []string, runs []reportRun, table, curves []qos.Curve, cfg qos.Config) (report.Page, error) {
	rep := report.Page{Title: "fdreplay report", Command: commandLine(args)}
	if len(runs) == 1 {
		rep.Title = "fdreplay report: " + plotTitle(runs[0].in)
	}
	nd := len(o.detectors)
	files := map[string]bool{}
	for _, r := range runs {
		files[r.in.file] = true
	}
	for i, r := range runs {
		in := r.in
		label := ""
		if len(files) == 1 {
			// One input: its name in every label would only repeat the
			// title (user48's F34).
			label = "sender " + displaySender(in)
		}
		rs := report.Stream{Name: in.name, Title: plotTitle(in), Label: label, Input: in.file, Heartbeats: in.hbs, Source: in.source(), Summary: in.summary, Stats: in.stats, Interval: in.interval,
			LeftOut: in.left, Table: table[i*nd : (i+1)*nd], Settings: r.descs}
		for _, c := range curves {
			if c.Stream == in.name {
				rs.Curves = append(rs.Curves, c)
			}
		}
		rs.Notes = append(rs.Notes, fmt.Sprintf("Warm-up: the first %d heartbeats are not evaluated; adaptive detectors use windows of n = %d.", r.set.warmUp, r.set.window))
		if r.set.windowShrunk {
			rs.Notes = append(rs.Notes, fmt.Sprintf("The stream is shorter than 2×%d heartbeats, so the window was shrunk to a quarter of it.", o.window))
		}
		if o.clock == "unsync" || (o.clock == "auto" && !r.set.sync) {
			rs.Notes = append(rs.Notes, fmt.Sprintf("Clocks not synchronized: TD = τ − A + d̄ with d̄ = %v (arrival-based: add the mean one-way delay to compare with send-based TDs).", cfg.DelayOffset))
		} else {
			rs.Notes = append(rs.Notes, "Clocks synchronized: TD = τ − σ, from the send time.")
		}
		if n := restartNote(in, o.detectors); n != "" {
			rs.Notes = append(rs.Notes, strings.ToUpper(n[:1])+n[1:]+" (docs/fdreplay.md).")
		}
		if in.epochs > 1 {
			rs.Warnings = append(rs.Warnings, fmt.Sprintf("The sender restarted: this is incarnation %d of %d, replayed with fresh detectors.", in.epoch, in.epochs))
		}
		if in.left > 0 {
			rs.Warnings = append(rs.Warnings, fmt.Sprintf("The input check left out %d record(s) of this stream that cannot be right (--strict makes this an error); they are not counted as loss.", in.left))
		}
		rs.Warnings = append(rs.Warnings, in.warnings...)
		for _, c := range rs.Curves {
			if c.Err != nil {
				rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: %s", c.Family, c.Err))
			}
		}
		rs.Targets = o.targets
		if !o.tune {
			// Beside "No verdict: give targets", these must not read as
			// targets someone gave (user44's D2).
			rs.Targets = r.set.targets
			rs.TargetsLabel = "No targets given; the tuner below uses SFD’s default targets (docs/fdreplay.md)"
		}
		if len(rs.Curves) > 0 {
			ch, err := qos.Tune(rs.Curves, rs.Targets)
			if err != nil {
				return rep, err
			}
			rs.Choices = ch
			rs.Verdict = r.verdict
			if v := r.verdict; v != nil && v.Err == "" {
				// The operating points, as the command line prints them,
				// rather than the grid points nearest the targets.
				rs.Choices = v.Choices()
			}
		}
		rep.Streams = append(rep.Streams, rs)
	}
	return rep, nil
}

// commandLine writes the command as typed, quoting arguments the shell
// would split.
func commandLine(args []string) string {
	parts := []string{"fdreplay"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$\\`;&|<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// checkReportPath fails, before the replay, for a --report path that
// cannot be written as a file: an existing directory or other file that is
// not a regular one (a FIFO, a device), or one whose parent directory is
// missing or not a directory. A path in the --out directory
// out (compared as directories, so that links count) named like a file
// --out writes or --force removes is refused: one of the two would be
// lost (index.html excepted: it is written once, see reportIsOutIndex).
// Like --out, it replaces no
// file unless force (--force) is given, and then no write-protected one
// (no write permission bit, or none for this process: the report is
// renamed onto its name, which the file's own mode does not stop); a
// path that is one of the inputs (a trace or --config, compared as
// files, so another name or a link to it counts) is refused even with
// force.
func checkReportPath(path, out string, force bool, inputs []string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--report %s: is a directory; give a file name such as %s", path, filepath.Join(path, "report.html"))
	}
	if outfile.IsStagingName(filepath.Base(path)) {
		// Refused here, not when the report is staged after the replay.
		return fmt.Errorf("--report %s: names beginning with .partial- are kept for unfinished output (staging directories, removed by later runs); name another file", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--report %s: directory %s: %w", path, dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("--report %s: %s is not a directory", path, dir)
	}
	if base := filepath.Base(path); base != indexName && (isResultName(base) || base == lockName) && inOutDir(path, out) {
		return fmt.Errorf("--report %s: --out %s writes or removes a file of that name, which would replace the report; name another file (--out writes the report itself as %s)", path, out, indexName)
	}
	if in := sameAsInput(path, inputs); in != "" {
		return fmt.Errorf("--report %s: is the input %s; name another file for the report", path, in)
	}
	if _, err := os.Lstat(path); err != nil {
		return nil
	}
	if err := outfile.CheckReplaceable(path); err != nil {
		// Refused before the replay, with or without --force (user48's
		// F13: with --force a FIFO was refused after the replay, offering
		// "-", which --report refuses).
		return fmt.Errorf("--report %s: %w", path, err)
	}
	if !force {
		return fmt.Errorf("--report %s: %s", path, reportExists)
	}
	if fi, err := os.Stat(path); err == nil && (fi.Mode().Perm()&0o222 == 0 || !writable(path)) {
		return fmt.Errorf("--report %s: the file is write-protected (mode %v): --force replaces no file that could not be written in place; remove it or name a new one", path, fi.Mode().Perm())
	}
	return nil
}

// reportExists says why --report refuses an existing file.
const reportExists = "the file exists: remove it, name a new one, or give --force to replace it"

// sameAsInput returns the input among inputs that path is (the file
// itself, or the file a link at path points to), or "" if none. "-"
// (standard input) is no file.
func sameAsInput(path string, inputs []string) string {
	var at []os.FileInfo
	if st, err := os.Lstat(path); err == nil {
		at = append(at, st)
	}
	if st, err := os.Stat(path); err == nil {
		at = append(at, st)
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		ist, err := os.Stat(in)
		if err != nil {
			continue
		}
		for _, st := range at {
			if os.SameFile(st, ist) {
				return in
			}
		}
	}
	return ""
}

// reportIsOutIndex reports whether --report names the index.html that --out
// writes (the same directory, by os.SameFile, so that links count): the
// report is then written once, with the --out files.
func reportIsOutIndex(o options) bool {
	return o.report != "" && filepath.Base(o.report) == indexName && inOutDir(o.report, o.out)
}

// inOutDir reports whether the file path is in the --out directory out
// (its directory is out, by os.SameFile, so that links count).
func inOutDir(path, out string) bool {
	if out == "" {
		return false
	}
	a, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return false
	}
	b, err := os.Stat(out)
	return err == nil && os.SameFile(a, b)
}

// writeReportFile writes rep to path under a temporary name in the same
// directory, moved into place when complete (package outfile), so an
// interrupted run leaves no half report. Without force, a file created at
// path during the run is not replaced.
func writeReportFile(path string, force bool, rep report.Page) error {
	st, err := outfile.New(filepath.Dir(path), "fdreplay")
	if err != nil {
		return fmt.Errorf("--report %s: %w", path, unwrapPath(err))
	}
	defer st.Abort()
	if err := st.Write(filepath.Base(path), func(w io.Writer) error { return report.Write(w, rep) }); err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil && !force {
		return fmt.Errorf("--report %s: %s", path, reportExists)
	}
	if _, err := st.Commit(nil); err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	return nil
}

// senderWarnings lists the findings of the input check about sender's
// incarnation epoch (the first few of the file, as printed on stderr) for
// the report: its records left out, and the restart that began it.
func (r *sanityReport) senderWarnings(sender string, epoch int) []string {
	var out []string
	for _, f := range r.listed {
		if f.Sender == sender && f.epoch == epoch {
			out = append(out, f.String())
		}
	}
	for _, f := range r.restarts {
		if f.Sender == sender && f.epoch == epoch {
			out = append(out, f.String())
		}
	}
	return out
}
