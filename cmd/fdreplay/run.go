// A run: with the flags validated, open the outputs and the inputs, replay
// the default table and the sweeps, decide, and write the results.

package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/report"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/traces"
)

// input is one stream ready for replay.
type input struct {
	name     string // stream name used in tables, files and curves
	file     string
	line     int // the line of the stream's first record in file
	sender   string
	hbs      []detector.Heartbeat // in memory; nil when spooled
	spool    *trace.Spool         // the heartbeats on disk when not in memory
	stats    trace.Stats
	interval time.Duration
	hdr      time.Duration // Δ from the file header, 0 if none
	epoch    int           // the sender's incarnation within the file (1, 2, ... after restarts)
	epochs   int           // how many incarnations the sender has in the file
	left     int           // records of this incarnation left out by the sanity check (received: not in stats.Lost)
	warnings []string      // the input check's findings about this sender, for the report
	// farBehind counts the heartbeats that arrived more than
	// detector.DefaultRestartJump below the highest number before them:
	// late, which the restart rule at its live default takes for restarts
	// (restartNote).
	farBehind int
	// clocksSync is qos.ClocksLookSynchronized of the stream and summary
	// its report.Summary (nil without a report), both taken in newInput's read.
	clocksSync bool
	summary    *report.Summary
	// unreplayable says why the stream cannot be replayed ("" when it
	// can); loadInputs leaves such streams out with a warning.
	unreplayable string
}

// streamRun is one stream of the run with its detector settings and the
// descriptions of its table's rows.
type streamRun struct {
	in    *input
	set   settings
	descs []string
	table []qos.Family // the table's families, one per detector
}

// resources are what a run opens once its flags are validated: the --out
// directory being staged and the inputs, whose streams may be spooled to
// temporary files. close releases them all, so that a run ending in an
// error leaves no partial result and no temporary file.
type resources struct {
	out    *outDir // nil without --out
	inputs []input
}

// openResources prepares --out, checks --report and loads the inputs. On
// an error it has released what it opened.
func openResources(o options, files []string, stderr io.Writer) (*resources, error) {
	res := &resources{}
	if err := res.open(o, files, stderr); err != nil {
		res.close()
		return nil, err
	}
	return res, nil
}

func (res *resources) open(o options, files []string, stderr io.Writer) error {
	var err error
	inputs := files
	if o.config != "" {
		inputs = append(slices.Clip(files), o.config)
	}
	if o.out != "" {
		// Fail before the replay, not after it, when results cannot be
		// written, would mix with an earlier run's or replace an input.
		if err := checkTempDir("--out"); err != nil {
			return err
		}
		if res.out, err = prepareOut(o.out, o.force, inputs); err != nil {
			return err
		}
	}
	if o.report != "" {
		if err := checkReportPath(o.report, o.out, o.force, inputs); err != nil {
			return err
		}
	}
	if res.inputs, err = loadInputs(o, files, stderr); err != nil {
		return err
	}
	if len(res.inputs) == 0 {
		return noStreamErr(o.senders, files)
	}
	return nil
}

// noStreamErr says why no stream is left to replay: the files hold no
// heartbeat, or none of the senders --sender names.
func noStreamErr(senders, files []string) error {
	in := strings.Join(files, ", ")
	if len(files) == 0 {
		in = "traces/" + traces.Default
	}
	if len(senders) == 0 {
		return fmt.Errorf("%s: no heartbeat in the input to replay", in)
	}
	return fmt.Errorf("%s: no heartbeat of --sender %s in the input (without --sender every sender is replayed)%s", in, strings.Join(quoteAll(senders), ", "), incarnationHint(senders))
}

// incarnationHint says, when a --sender value looks like the name of one
// incarnation of a restarted sender (p@2), that --sender takes the
// sender's id and replays every incarnation (user48's F24: the output
// names the streams p@1, p@2, and --sender p@2 found nothing).
func incarnationHint(senders []string) string {
	for _, s := range senders {
		id, n, ok := strings.Cut(s, "@")
		if !ok || id == "" || strings.Contains(n, "@") || strings.Trim(n, "0123456789") != "" || n == "" {
			continue
		}
		return fmt.Sprintf("; %q names an incarnation of a restarted sender, which --sender does not select: give the sender's id, %q, and every incarnation of it is replayed, each as its own stream", s, id)
	}
	return ""
}

// close removes the spools and, unless committed, the staged results,
// and frees --out's lock.
func (r *resources) close() {
	closeInputs(r.inputs)
	if r.out != nil {
		r.out.release()
	}
}

func runErr(p process, args []string, stdout, stderr io.Writer) error {
	o, files, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	o.process = p
	clock := newPhaseClock(p.timings)
	res, err := openResources(o, files, stderr)
	if err != nil {
		return err
	}
	clock.mark("load")
	for _, n := range clockNotes(o, res.inputs) {
		fmt.Fprintln(stderr, n)
	}
	defer res.close()
	cfg := replayConfig(o)
	progress := p.progress
	if progress == nil {
		progress = newProgress(stderr, o.noProgress)
	}
	all, err := tableRuns(o, res.inputs, stderr)
	if err != nil {
		return err
	}
	runs, table, sw, err := replayRuns(p, o, all, cfg, progress, clock, stdout, stderr)
	if err != nil {
		return err
	}
	// The verdict answers the user's targets (solving operating points
	// costs several times the sweep: without targets there is none).
	var verdicts []qos.Verdict
	if o.tune {
		if verdicts, err = decideRuns(stdout, o, sw, cfg); err != nil {
			return err
		}
		clock.mark("decide")
	}
	if err := writeResults(stdout, stderr, o, args, res.out, runs, table, sw.curves, verdicts, cfg); err != nil {
		return err
	}
	clock.mark("write")
	return nil
}

// replayRuns replays the table of runs and, with --out or --sweep, their
// sweep, printing the table; it returns the streams kept, their table and
// their sweep. The table and the sweep are replayed together
// (planTogether), the table printed once both are done; a sweep that
// cannot be planned (planSweep) is reported after the table is printed.
func replayRuns(p process, o options, all []streamRun, cfg qos.Config, progress func(done, total int), clock phaseClock, stdout, stderr io.Writer) ([]streamRun, []qos.Curve, sweep, error) {
	var sw sweep
	if o.sweep {
		if plan, total, err := planSweep(o, all); err == nil {
			if p.limitMemory != nil {
				p.limitMemory(memoryLimit(o, all, true))
			}
			runs, table, sw, err := replayTogether(o, all, planTogether(o, all, plan), cfg, progress, stderr)
			if err != nil {
				return nil, nil, sw, err
			}
			progress(-1, total)
			notes := saturation(runs, table, sw.curves)
			clock.mark("table")
			if err := printTables(stdout, o, runs, table, cfg); err != nil {
				return nil, nil, sw, err
			}
			sweepWarnings(stderr, notes, sw.curves)
			clock.mark("sweep")
			return runs, table, sw, nil
		}
	}
	if p.limitMemory != nil {
		p.limitMemory(memoryLimit(o, all, false))
	}
	runs, table, err := replayTable(o, all, cfg, stderr)
	if err != nil {
		return nil, nil, sw, err
	}
	notes := saturation(runs, table, nil)
	clock.mark("table")
	if err := printTables(stdout, o, runs, table, cfg); err != nil {
		return nil, nil, sw, err
	}
	sweepWarnings(stderr, notes, nil)
	if o.sweep {
		if sw, err = sweepRuns(o, runs, cfg, progress, stderr); err != nil {
			return nil, nil, sw, err
		}
		clock.mark("sweep")
	}
	return runs, table, sw, nil
}

// sweepConfig is the configuration of every qos sweep of the run: cfg,
// progress (may be nil) and, with --method per-point, a full replay per
// setting instead of the shared methods.
func sweepConfig(o options, cfg qos.Config, progress func(done, total int)) qos.SweepConfig {
	return qos.SweepConfig{Config: cfg, Progress: progress, PerPointOnly: o.method == "per-point"}
}

// replayConfig is the replay's configuration from the flags. Intervals:
// 95 % confidence intervals for MR, QAP and the mean TD (± in the tables,
// columns in the CSV and JSON outputs, error bars in the plots). Warm-up
// is per stream (settings.warmUp, applied through the families), since
// short streams get a smaller window. Spooled streams of at most
// process.memHeartbeats heartbeats (never fewer than qos's default) are
// swept in memory (Spill.InMemory).
func replayConfig(o options) qos.Config {
	cfg := qos.Config{DelayOffset: o.delayOffset, Intervals: true}
	cfg.Spill.InMemory = max(o.memHeartbeats, qos.DefaultSpillInMemory)
	switch o.clock {
	case "sync":
		cfg.Clock = qos.ClockSynchronized
	case "unsync":
		cfg.Clock = qos.ClockUnsynchronized
	}
	return cfg
}

// tableRuns returns every stream of inputs with its detector settings and
// its table's families, settled in parallel (streamSettings reads no
// stream: newInput took the clock rule's answer). Two entries that are one
// detector on every stream are refused (sameDetector's error, for the
// first stream); on some streams only (their Δ differ), each such stream
// gets a warning on stderr and both entries run, as two equal rows there.
func tableRuns(o options, inputs []input, stderr io.Writer) ([]streamRun, error) {
	runs := make([]streamRun, len(inputs))
	dups := make([]error, len(inputs))
	jobs := make([]func() error, len(inputs))
	for i := range inputs {
		jobs[i] = func() error {
			in := &inputs[i]
			s := streamSettings(o, in)
			dups[i] = sameDetector(s, o.detectors, in)
			f, descs, err := tableFamilies(s, o.detectors)
			runs[i] = streamRun{in: in, set: s, descs: descs, table: f}
			return err
		}
	}
	if err := inParallel(jobs); err != nil {
		return nil, err
	}
	if len(dups) > 0 && !slices.Contains(dups, nil) {
		return nil, dups[0]
	}
	for _, err := range dups {
		if err != nil {
			fmt.Fprintf(stderr, "fdreplay: warning: %v; other streams tell them apart, so both run (two equal rows on this stream)\n", strings.TrimSuffix(strings.TrimPrefix(err.Error(), errUsage.Error()+": "), "; name each detector once"))
		}
	}
	return runs, nil
}

// replayTable replays every detector at its default setting, all streams
// in one parallel run, and returns the streams kept with their table
// (len(o.detectors) curves per stream, in stream order). A stream on which
// no detector evaluated a single heartbeat (shorter than the warm-up, or
// one heartbeat) has nothing to show: it is dropped with a warning, and
// when no stream is left that is the error.
func replayTable(o options, runs []streamRun, cfg qos.Config, stderr io.Writer) ([]streamRun, []qos.Curve, error) {
	streams := make([]qos.Stream, len(runs))
	fams := make([][]qos.Family, len(runs))
	for i, r := range runs {
		streams[i], fams[i] = r.in.stream(), r.table
	}
	table, err := qos.SweepEach(streams, fams, sweepConfig(o, cfg, nil))
	if err != nil {
		return nil, nil, err
	}
	return keepEvaluated(o, runs, table, stderr)
}

// keepEvaluated returns the streams of runs that have a table row with a
// result, and their rows (table holds len(o.detectors) rows per stream of
// runs); it warns of the others, and when none is left that is the error.
func keepEvaluated(o options, runs []streamRun, table []qos.Curve, stderr io.Writer) ([]streamRun, []qos.Curve, error) {
	nd := len(o.detectors)
	var keptRuns []streamRun
	var keptTable []qos.Curve
	var dropped []string
	for i, r := range runs {
		rows := table[i*nd : (i+1)*nd]
		if slices.ContainsFunc(rows, func(c qos.Curve) bool { return len(c.Points) > 0 }) {
			keptRuns = append(keptRuns, r)
			keptTable = append(keptTable, rows...)
			continue
		}
		dropped = append(dropped, droppedText(r, rows[0], o.detectors))
	}
	if len(keptRuns) == 0 {
		if len(dropped) == 1 {
			return nil, nil, errors.New(dropped[0])
		}
		return nil, nil, fmt.Errorf("no stream could be evaluated (%d streams; first: %s)", len(dropped), dropped[0])
	}
	for _, d := range dropped {
		fmt.Fprintf(stderr, "fdreplay: warning: skipped %s\n", d)
	}
	return keptRuns, keptTable, nil
}

// droppedText says why r's stream was dropped, given its first table row:
// no heartbeat past warm-up, or the replay's own error. entries are the
// --detectors entries (o.detectors), for a window set in a spec.
func droppedText(r streamRun, first qos.Curve, entries []string) string {
	if e := first.Err; e != nil && !errors.Is(e, qos.ErrNoEvaluation) {
		return fmt.Sprintf("%s: sender %s: %s", r.in.where(), displaySender(r.in), e) // not a warm-up problem: say what it is
	}
	return notEvaluated(r.in, r.set, entries)
}

// printTables prints each stream's header and default table.
func printTables(w io.Writer, o options, runs []streamRun, table []qos.Curve, cfg qos.Config) error {
	nd := len(o.detectors)
	for i, r := range runs {
		printStreamHeader(w, r.in, r.set, cfg, o)
		if err := printTable(w, table[i*nd:(i+1)*nd], r.descs); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// sweep is the swept part of a run: per stream its families (streams have
// their own Δ, hence their own families) and all streams' curves.
type sweep struct {
	streams []qos.Stream
	fams    [][]qos.Family
	curves  []qos.Curve
}

// sweepRuns sweeps every swept detector on every stream, refusing first a
// sweep whose results would take more than --max-sweep-memory.
func sweepRuns(o options, runs []streamRun, cfg qos.Config, progress func(done, total int), stderr io.Writer) (sweep, error) {
	sw, total, err := planSweep(o, runs)
	if err != nil {
		return sw, err
	}
	if sw.curves, err = qos.SweepEach(sw.streams, sw.fams, sweepConfig(o, cfg, progress)); err != nil {
		return sw, err
	}
	progress(-1, total)
	notes := saturation(runs, nil, sw.curves)
	sweepWarnings(stderr, notes, sw.curves)
	return sw, nil
}

// planSweep returns the streams and families of the sweep of runs, and
// how many settings they have in all, or the error of a sweep whose
// results would take more than --max-sweep-memory.
func planSweep(o options, runs []streamRun) (sweep, int, error) {
	var sw sweep
	total := 0
	for _, r := range runs {
		fams, err := sweepFamilies(r.set, sweptDetectors(o), o.points, o.ranges)
		if err != nil {
			return sw, 0, usageErr("%v", err)
		}
		sw.streams = append(sw.streams, r.in.stream())
		sw.fams = append(sw.fams, fams)
		for _, f := range fams {
			total += len(f.Values)
		}
	}
	if need := int64(total) * sweepBytesPerPoint; need > int64(o.sweepMiB)<<20 {
		return sw, 0, fmt.Errorf("the sweep of %d streams would keep %d settings' results, about %d MiB (%d KiB each: confidence-interval cells, the result and the collector's headroom), above --max-sweep-memory %d: replay fewer streams (--sender), fewer settings (--points, -d), or raise --max-sweep-memory",
			len(sw.streams), total, need>>20, sweepBytesPerPoint>>10, o.sweepMiB)
	}
	return sw, total, nil
}

// sweepWarnings prints notes (curves that lost some points) and the
// curves that failed.
func sweepWarnings(stderr io.Writer, notes []string, curves []qos.Curve) {
	for _, n := range notes {
		fmt.Fprintln(stderr, n)
	}
	for _, c := range curves {
		if c.Err != nil {
			fmt.Fprintf(stderr, "fdreplay: warning: %s %s: %s\n", shown(c.Stream), c.Family, c.Err)
		}
	}
}

// decideRuns solves each stream's operating points for the targets and
// prints them.
func decideRuns(w io.Writer, o options, sw sweep, cfg qos.Config) ([]qos.Verdict, error) {
	opt := o.decide
	opt.Sweep = qos.SweepConfig{Config: cfg} // not --method: solving operating points is not the claim it checks
	verdicts, err := decideAll(sw.streams, sw.fams, sw.curves, o.targets, opt, unsweptDetectors(o))
	if err != nil {
		return nil, err
	}
	if err := printOperatingPoints(w, verdicts, o.targets); err != nil {
		return nil, err
	}
	return verdicts, nil
}
