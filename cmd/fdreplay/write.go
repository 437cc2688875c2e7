// The end of a run: the report, the curves and the --out files, written
// on every core.

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fdkit/fdkit/internal/outfile"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/figure"
	"github.com/fdkit/fdkit/qos/report"
)

// writeResults writes the HTML report to --report, the curves on stdout
// when nothing else shows them, and the --out files (the report as
// index.html, the tables, the curves, the plots and the verdicts), which
// it then moves into --out. The files are written in parallel (inParallel),
// each by one goroutine, and what the run prints comes in a fixed order
// afterwards: the files and the messages do not depend on the number of
// cores.
func writeResults(stdout, stderr io.Writer, o options, args []string, out *outDir, runs []streamRun, table, curves []qos.Curve, verdicts []qos.Verdict, cfg qos.Config) error {
	var jobs, outJobs, pdfJobs []func() error
	var plots []*plotJob
	inOut := reportIsOutIndex(o) // --report is --out's index.html, written with it
	if o.report != "" || o.out != "" {
		rep, err := buildReport(o, args, reportRuns(runs, verdicts), table, curves, cfg)
		if err != nil {
			return err
		}
		if o.report != "" && !inOut {
			jobs = append(jobs, func() error { return writeReportFile(o.report, o.force, rep) })
		}
		if o.out != "" {
			outJobs = append(outJobs, func() error {
				return out.staging.Write(indexName, func(w io.Writer) error { return report.Write(w, rep) })
			})
		}
	}
	if o.out != "" {
		plots = plotJobs(out.staging, runs, curves)
		for _, p := range plots {
			outJobs = append(outJobs, p.draw)
			pdfJobs = append(pdfJobs, p.drawPDF)
		}
		outJobs = append(outJobs, outputJobs(out.staging, table, curves, verdicts)...)
	}
	inOutDir := func(job func() error) func() error {
		return func() error {
			if err := job(); err != nil {
				return fmt.Errorf("--out %s: %w", o.out, err)
			}
			return nil
		}
	}
	for _, job := range outJobs {
		jobs = append(jobs, inOutDir(job))
	}
	err := inParallel(jobs)
	if err == nil && len(pdfJobs) > 0 {
		for i, job := range pdfJobs {
			pdfJobs[i] = inOutDir(job)
		}
		err = writePDFs(o.out, out.staging.Dir(), pdfJobs)
	}
	for _, p := range plots {
		if p.note != "" {
			fmt.Fprintln(stderr, p.note)
		}
	}
	if err != nil {
		return err
	}
	if o.report != "" && !inOut {
		fmt.Fprintf(stdout, "wrote the report to %s\n", o.report)
	}
	if o.sweep && o.out == "" && !o.tune && o.report == "" {
		fmt.Fprintln(stdout, "curves (CSV; durations in ms, MR per second):")
		if err := qos.WriteCSV(stdout, curves); err != nil {
			return err
		}
	}
	if o.out != "" {
		if err := commitOut(stdout, out); err != nil {
			return err
		}
		if inOut {
			// Only now is the report in place.
			fmt.Fprintf(stdout, "wrote the report to %s\n", o.report)
		}
	}
	return nil
}

// reportRuns pairs each stream with its verdict, when there are verdicts.
func reportRuns(runs []streamRun, verdicts []qos.Verdict) []reportRun {
	rruns := make([]reportRun, len(runs))
	for i, r := range runs {
		rruns[i] = reportRun{streamRun: r}
		if i < len(verdicts) {
			rruns[i].verdict = &verdicts[i]
		}
	}
	return rruns
}

// outputJobs stage the tables, the curves and the verdicts.
func outputJobs(st *outfile.Staging, table, curves []qos.Curve, verdicts []qos.Verdict) []func() error {
	var jobs []func() error
	for _, w := range []struct {
		name string
		fn   func(io.Writer) error
	}{
		{curvesJSONName, func(w io.Writer) error { return qos.WriteJSON(w, curves) }},
		{curvesCSVName, func(w io.Writer) error { return qos.WriteCSV(w, curves) }},
		{tableJSONName, func(w io.Writer) error { return qos.WriteJSON(w, table) }},
		{tableCSVName, func(w io.Writer) error { return qos.WriteCSV(w, table) }},
	} {
		jobs = append(jobs, func() error { return st.Write(w.name, w.fn) })
	}
	return append(jobs, func() error { return writeVerdicts(st, verdicts) })
}

// plotJob is one figure of one stream's curves, drawn (figure.New) and
// written by draw in every format but PDF, and in PDF by drawPDF, which
// runs after every draw has ended (writePDFs); note, set by draw, is what
// to tell the user when it had nothing to draw.
type plotJob struct {
	st           *outfile.Staging
	curves       []qos.Curve
	kind         figure.Kind
	stream, safe string // the stream's name, and as it names files
	title        string
	fig          *figure.Figure // nil when there is nothing to draw
	note         string
}

// plotJobs returns the figures of every stream, stream by stream, each
// stream's files under a name of its own.
func plotJobs(st *outfile.Staging, runs []streamRun, curves []qos.Curve) []*plotJob {
	titles := map[string]string{}
	for _, r := range runs {
		titles[r.in.name] = plotTitle(r.in)
	}
	var jobs []*plotJob
	used := map[string]bool{}
	for start := 0; start < len(curves); {
		end := start
		for end < len(curves) && curves[end].Stream == curves[start].Stream {
			end++
		}
		name := curves[start].Stream
		safe := plotBase(name)
		// Distinct streams may map to one name ("a/b", "a_b"): the later
		// ones are numbered, in stream order, rather than overwrite it.
		for i, base := 2, safe; used[safe]; i++ {
			safe = fmt.Sprintf("%s~%d", base, i)
		}
		used[safe] = true
		title := titles[name]
		if title == "" {
			title = "sender " + name
		}
		for _, k := range figure.Kinds() {
			jobs = append(jobs, &plotJob{st: st, curves: curves[start:end], kind: k, stream: name, safe: safe, title: title})
		}
		start = end
	}
	return jobs
}

// maxPlotBase bounds, in bytes, the part of a plot file's name that the
// stream's name gives (plotBase), so that the names stay well under the
// 255 bytes a file name has on common file systems (143 on eCryptfs)
// whatever the sender id: user48's F6, a 300-byte id, failed the run at
// the very end, after the whole replay.
const maxPlotBase = 80

// plotBase is the stream's name as it begins its plot files' names:
// path separators, the other characters Windows refuses in a name
// (:<>"|?*), spaces, control and format characters and any other rune
// strconv.IsPrint refuses become '_' (invalid UTF-8 becomes U+FFFD), as
// does a leading '.', which would hide the plots (user48's F7); a name
// longer than maxPlotBase bytes keeps its first bytes (whole runes) and
// ends with '~' and 8 hexadecimal digits of the SHA-256 of the whole
// name, so that streams whose names share a long beginning keep names of
// their own.
// plotJobs numbers the names that still clash.
func plotBase(name string) string {
	safe := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:<>"|?* `, r) || !strconv.IsPrint(r) {
			return '_'
		}
		return r
	}, name)
	if strings.HasPrefix(safe, ".") {
		safe = "_" + safe[1:]
	}
	if len(safe) <= maxPlotBase {
		return safe
	}
	sum := sha256.Sum256([]byte(name))
	cut := maxPlotBase - 9
	for cut > 0 && !utf8.RuneStart(safe[cut]) {
		cut--
	}
	return safe[:cut] + "~" + hex.EncodeToString(sum[:4])
}

// pdfExt is the format drawPDF writes and draw leaves to it.
const pdfExt = ".pdf"

// draw draws the figure and stages it in every format but PDF, as
// figure.SaveKind would.
func (p *plotJob) draw() error {
	f, err := figure.New(p.curves, p.kind, p.title)
	if err != nil {
		// figure.SaveKind skips a figure with nothing to draw; say so
		// rather than leave the user looking for the file. The MR
		// figure shows points without mistakes at their 3/T bound.
		if p.kind == figure.QAP {
			p.note = fmt.Sprintf("fdreplay: note: no 1 − QAP plot for sender %s: no swept point ever suspected (0 has no place on a log scale)", shown(p.stream))
		}
		return nil
	}
	p.fig = f
	return p.write(func(ext string) bool { return ext != pdfExt })
}

// drawPDF stages the figure draw drew as PDF.
func (p *plotJob) drawPDF() error {
	if p.fig == nil {
		return nil
	}
	return p.write(func(ext string) bool { return ext == pdfExt })
}

// write stages the figure in each format that keep accepts.
func (p *plotJob) write(keep func(ext string) bool) error {
	for _, ff := range figure.Formats() {
		if !keep(ff.Ext) {
			continue
		}
		name := figure.FileName(p.safe+plotPrefixSep, p.kind, ff.Ext)
		err := p.st.Write(name, func(w io.Writer) error {
			return p.fig.Write(w, strings.TrimPrefix(ff.Ext, "."), ff.Size)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// commitOut moves the staged files into --out and says so.
func commitOut(stdout io.Writer, out *outDir) error {
	files, err := out.commit()
	if err != nil {
		return fmt.Errorf("--out %s: %w", out.dir, err)
	}
	fmt.Fprintf(stdout, "wrote %d files to %s (index.html, curves.csv, curves.json, table.csv, table.json, verdict.json, plots)\n", len(files), out.dir)
	if len(out.stale) > 0 {
		fmt.Fprintf(stdout, "removed %d files of an earlier run from %s (--force)\n", len(out.stale), out.dir)
	}
	return nil
}
