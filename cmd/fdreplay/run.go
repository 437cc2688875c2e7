package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fdkit/fdkit/internal/flagcheck"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/report"
	"github.com/fdkit/fdkit/spec"
	"github.com/fdkit/fdkit/trace"
	"github.com/spf13/pflag"
)

const examples = `Examples:
  fdreplay                                   # embedded default trace, all detectors
  fdreplay ../shared/traces/planetlab-lip6/recv_node1_excerpt.txt --out results
  fdreplay --sender 4 --detectors chen,phi --out results trace.txt
  fdreplay --td-max 500ms --mr-max 0.01 --qap-min 0.999 trace.txt.gz
  fdreplay --range chen=0:500ms --range phi=1:12 --points 60 --out results trace.txt
  fdreplay --format csv --columns host,seq,sent_ms,recv_ms --unit ms --interval 1s log.csv
  fdreplay --force --out results trace.txt   # replace the results of an earlier run

TD is the time from a crash right after a heartbeat to permanent suspicion
(τ_{k+1} − σ_k with synchronized clocks; τ_{k+1} − A_k + d̄ when the sender's
and monitor's clocks differ, as in the LIP6 traces: see --delay-offset;
when τ_{k+1} precedes the arrival A_k, the monitor suspects from A_k).
MR is false suspicions per second, QAP the fraction of time the monitor is
right. Smaller TD, smaller MR and larger QAP are better; sweeps show the
trade-off. Undefined metrics (E[TM], E[TMR] without a mistake) are empty in
CSV and null in JSON.

--out files appear only when complete. SIGINT or SIGTERM stops the run,
removes its partial files and exits 130 or 143. A flag value out of range
is an error, never replaced by a default. See docs/fdreplay.md.
`

// options are the parsed flags.
type options struct {
	detectors   []string
	senders     []string
	warmUp      int
	window      int
	windowSet   bool
	interval    time.Duration
	timeout     time.Duration
	delayOffset time.Duration
	clock       string
	format      string
	columns     string
	unit        string
	lenient     bool
	strict      bool
	maxDecomp   int64
	maxRatio    float64
	out         string
	force       bool
	sweep       bool
	sweepFlag   bool // --sweep given: sweep every entry, not only the sweep entries
	points      int
	sweepMiB    int
	ranges      map[string]span
	targets     qos.Targets
	tune        bool
	decide      qos.DecideOptions
	noProgress  bool
	report      string
}

// maxInterval bounds Δ: the detector settings and sweep ranges are
// multiples of Δ up to 30Δ and must not overflow time.Duration (a huge
// --interval made the fixed timeout 10Δ negative).
const maxInterval = time.Duration(math.MaxInt64 / 100)

// maxWindow bounds --window: every detector, and every swept setting of it,
// keeps n samples, so --window 100000000 took gigabytes before failing.
// 100000 is a hundred times the papers' and Akka's 1000.
const maxWindow = 100_000

// sweepBytesPerPoint estimates what a sweep keeps for one setting of one
// stream until the outputs are written: the per-time-cell table of the
// confidence intervals (128 cells × 5 float64, 5 KiB) and the result,
// about 6 KiB, doubled for the garbage collector's headroom (a run of 300
// streams × 401 settings estimated at 6 KiB each peaked at 1.9 times the
// estimate). Memory therefore grows with streams × settings, not with
// records, and --max-sweep-memory bounds it.
const sweepBytesPerPoint = 12 << 10

// maxPoints bounds --points: each swept point is a detector state per stream.
const maxPoints = 10_000

// errUsage marks errors in the command line (exit code 2).
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) int {
	err := runErr(args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "fdreplay: %v (see fdreplay -h)\n", strings.TrimPrefix(err.Error(), "usage: "))
		return 2
	default:
		fmt.Fprintf(stderr, "fdreplay: %v\n", err)
		return 1
	}
}

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

func parseFlags(args []string, stdout io.Writer) (options, []string, error) {
	fs := pflag.NewFlagSet("fdreplay", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	var o options
	dets := fs.StringArrayP("detectors", "d", []string{"all"}, "detectors to run (repeatable, or comma-separated): all; a family at fdreplay's defaults for the trace's Δ and --window: "+strings.Join(detectorNames, ", ")+" (aliases: phi, timeout, 2wfd, κ); a family with parameters in the textual form of docs/detectors.md, e.g. 'phi-normal(threshold=8, min-std=0)' (φ's σ floor min-std defaults to μ/100; 0 turns it off) or 'phi-akka(threshold=10, pause=0)'; a preset with its system's documented defaults, unscaled: akka, cassandra, scylla, hazelcast (e.g. 'akka(threshold=12)'); or a sweep: 'chen(window=1000) alpha=10ms..1s[:log]'. Parameters not given take fdreplay's defaults, and the header says which Akka/Cassandra defaults were scaled by Δ")
	configFile := fs.String("config", "", "YAML file of detectors and sweeps in the textual form (see docs/detectors.md), run in addition to --detectors (which then defaults to none)")
	fs.StringSliceVarP(&o.senders, "sender", "s", nil, "replay only these senders (ids as in the trace)")
	flagcheck.Var(fs, &o.warmUp, "warmup", "", -1, -1, math.MaxInt32, "-1 (the window size) or a count ≥ 0", "heartbeats excluded at the start of each stream (-1: the window size, so every detector is evaluated on the same heartbeats with full windows)")
	flagcheck.Var(fs, &o.window, "window", "", 1000, 1, maxWindow, fmt.Sprintf("a size from 1 to %d (each detector and swept setting keeps n samples)", maxWindow), "window size n of the adaptive detectors (chen, bertier, sfd, φ, 2w-fd's long window, satzger, kappa); streams shorter than 2n heartbeats get n = length/4 unless set")
	flagcheck.Var(fs, &o.interval, "interval", "", 0, 1, maxInterval, fmt.Sprintf("a positive duration up to %v (omit the flag to take Δ from the trace)", maxInterval), "nominal heartbeat interval Δ (default: from the trace header, else estimated from send times or arrivals)")
	flagcheck.Var(fs, &o.timeout, "timeout", "", 0, 1, 10*maxInterval, fmt.Sprintf("a positive duration up to %v (omit the flag for 10Δ)", 10*maxInterval), "fixed timeout T for the table (default 10Δ, i.e. 1s for Δ = 100ms)")
	flagcheck.Var(fs, &o.delayOffset, "delay-offset", "", 0, 0, maxInterval, fmt.Sprintf("a duration from 0 to %v", maxInterval), "d̄ added to the arrival-based TD when clocks are not synchronized (e.g. RTT/2)")
	fs.StringVar(&o.clock, "clock", "auto", "sender/monitor clocks: auto, sync or unsync (auto: synchronized iff every 0 ≤ A−σ ≤ 1m)")
	fs.StringVarP(&o.format, "format", "f", "auto", "input format when it cannot be detected: auto, lip6, lip6-emission, csv, fdkit")
	fs.StringVar(&o.columns, "columns", "", "CSV columns as sender,seq,sent,arrival header names (empty name: no such column); implies --format csv")
	fs.StringVar(&o.unit, "unit", "ns", "time unit of CSV send and arrival columns: ns, us, ms or s")
	fs.BoolVar(&o.lenient, "lenient", false, "skip malformed lines (they are counted and reported) instead of failing")
	fs.BoolVar(&o.strict, "strict", false, "fail on the first record that cannot be right (an outlying arrival, send time, delay or sequence number, a sequence restart, a truncated last line) instead of leaving it out with a warning; see docs/fdreplay.md")
	maxDecomp := fs.String("max-decompressed", "0", "refuse a gzip or xz trace that decompresses to more than this size (e.g. 20GiB; 0: no bound)")
	fs.Float64Var(&o.maxRatio, "max-ratio", 200, "refuse a gzip or xz trace that decompresses to more than this many times its compressed size, past the first 64 MiB (a decompression bomb; recorded traces inflate 3-30 times; 0: no bound)")
	fs.StringVarP(&o.out, "out", "o", "", "directory for results: index.html (the HTML report), table.csv/json, curves.csv/json, <sender>-mr-td and -qap-td plots (PNG, SVG), all written under temporary names and moved in when complete; implies --sweep")
	fs.BoolVar(&o.force, "force", false, "let --out replace the results of an earlier run (without it a directory holding them is refused); files of the earlier run that this one does not write are removed")
	fs.BoolVar(&o.sweep, "sweep", false, "sweep each detector's parameter (implied by --out, --range and tuner targets); without --out the curves are printed as CSV")
	flagcheck.Var(fs, &o.points, "points", "p", 40, 1, maxPoints, fmt.Sprintf("a count from 1 to %d", maxPoints), "points per swept curve")
	flagcheck.Var(fs, &o.sweepMiB, "max-sweep-memory", "", 1024, 1, 1<<20, "a size in MiB from 1 to 1048576", "MiB the sweep's results may take (about 12 KiB per stream and setting, kept until the outputs are written); a larger sweep is refused before it starts")
	rangeArgs := fs.StringArray("range", nil, "sweep range NAME=LO:HI[:log|lin], durations with a unit or in ms (repeatable; defaults: fixed Δ..30Δ log, chen, sfd and 2w-fd Δ/100..20Δ log, φ 0.5..16, cassandra 0.25..16 log, jacobson K 0.5..64 log, satzger θ 0.5..1, kappa K 0.5..16 log)")
	flagcheck.Var(fs, &o.targets.MaxTD, "td-max", "", 0, 1, math.MaxInt64, "a positive duration (omit the flag for no TD target)", "tuner target: mean TD at most this")
	flagcheck.Var(fs, &o.targets.MaxMRPerSecond, "mr-max", "", 0, 0, math.MaxFloat64, "a finite rate per second ≥ 0 (0: only settings that made no mistake; omit the flag for no MR target)", "tuner target: mistakes per second at most this, in [0, ∞) (1 per minute is 0.0167; 0: only settings that made no mistake over the trace)")
	flagcheck.Var(fs, &o.targets.MinQAP, "qap-min", "", 0, math.SmallestNonzeroFloat64, 1, "a probability in (0, 1] (omit the flag for no QAP target)", "tuner target: QAP at least this (e.g. 0.999)")
	equivalence := fs.String("equivalence", "1%", "practical threshold of the verdict: a difference in mean TD smaller than this share of the best detector's is reported as equivalent, whatever its interval (a percentage or a fraction; off: none)")
	holdout := fs.String("holdout", "50%", "share of the trace's time, at its end, held out for the out-of-sample figures: each detector is tuned on the rest and reported on both (off: none)")
	fs.BoolVar(&o.noProgress, "no-progress", false, "no progress bar (it is shown only when stderr is a terminal)")
	fs.StringVar(&o.report, "report", "", "write a self-contained HTML report to this file (trace statistics, tables, plots, the tuner's choice and a verdict with confidence intervals; implies --sweep); --out also writes one as index.html")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return o, nil, usageErr("%v", err)
	}
	o.windowSet = fs.Changed("window")
	o.sweepFlag = fs.Changed("sweep")
	// --mr-max 0 is a target of its own (MR = 0), not "no target".
	o.targets.NoMistakes = fs.Changed("mr-max") && o.targets.MaxMRPerSecond == 0
	var err error
	if o.decide.Equivalence, err = parseShare("equivalence", *equivalence); err != nil {
		return o, nil, usageErr("%v", err)
	}
	if o.decide.Holdout, err = parseShare("holdout", *holdout); err != nil {
		return o, nil, usageErr("%v", err)
	}
	if o.maxDecomp, err = parseSize(*maxDecomp); err != nil {
		return o, nil, usageErr("--max-decompressed %q: %v", *maxDecomp, err)
	}
	if !(o.maxRatio >= 0) || math.IsInf(o.maxRatio, 0) {
		return o, nil, usageErr("--max-ratio %v: want a finite number ≥ 0 (0: no bound)", o.maxRatio)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: fdreplay [flags] [TRACE...]\n\nReplays heartbeat traces through fdkit's failure detectors and reports TD, MR and QAP.\nWith no TRACE, replays the embedded default trace.\n\nFlags:\n%s\n%s", fs.FlagUsages(), examples)
		return o, nil, pflag.ErrHelp
	}
	entries := *dets
	if *configFile != "" {
		f, err := spec.LoadFile(*configFile)
		if err != nil {
			return o, nil, usageErr("--config: %v", err)
		}
		if !fs.Changed("detectors") {
			entries = nil
		}
		for _, s := range f.Detectors {
			entries = append(entries, s.String())
		}
		for _, w := range f.Sweeps {
			entries = append(entries, w.String())
			o.sweep = true
		}
	}
	sel, err := selectDetectors(entries)
	if err != nil {
		return o, nil, err
	}
	if slices.ContainsFunc(sel, func(e string) bool { return strings.Contains(e, "..") }) {
		o.sweep = true // a sweep entry asks for its curve
	}
	o.detectors = sel
	o.ranges = map[string]span{}
	for _, a := range *rangeArgs {
		name, sp, err := parseRange(a)
		if err != nil {
			return o, nil, usageErr("%v", err)
		}
		if _, err := qos.Range(sp.lo, sp.hi, 2, sp.log); err != nil {
			return o, nil, usageErr("--range %q: %v", a, strings.TrimPrefix(err.Error(), "qos: "))
		}
		if err := checkDomain(name, sp); err != nil {
			return o, nil, usageErr("--range %q: %v", a, err)
		}
		if _, dup := o.ranges[name]; dup {
			return o, nil, usageErr("--range %q: %s has a range already (give one --range per detector)", a, name)
		}
		o.ranges[name] = sp
		o.sweep = true
	}
	if err := o.targets.Validate(); err != nil {
		return o, nil, usageErr("%v", strings.TrimPrefix(err.Error(), "qos: "))
	}
	o.tune = o.targets != (qos.Targets{})
	if o.out != "" || o.tune || o.report != "" {
		o.sweep = true
	}
	switch o.clock {
	case "auto", "sync", "unsync":
	default:
		return o, nil, usageErr("--clock %q: want auto, sync or unsync", o.clock)
	}
	if err := checkCSVFlags(o, fs.Changed("unit")); err != nil {
		return o, nil, err
	}
	return o, fs.Args(), nil
}

// checkCSVFlags refuses CSV settings that cannot work, naming the flags
// rather than the trace.Columns fields they fill in.
func checkCSVFlags(o options, unitSet bool) error {
	const want = "the CSV header names of sender,seq,sent,arrival (leave a name empty when absent)"
	if o.columns == "" {
		switch {
		case strings.EqualFold(o.format, "csv"):
			return usageErr("--format csv needs --columns: %s", want)
		case unitSet:
			return usageErr("--unit %s applies to CSV input only: give --columns too", o.unit)
		}
		return nil
	}
	parts := strings.Split(o.columns, ",")
	switch {
	case len(parts) != 4:
		return usageErr("--columns %q: want four comma-separated names, %s", o.columns, want)
	case strings.TrimSpace(parts[2]) == "" && strings.TrimSpace(parts[3]) == "":
		return usageErr("--columns %q: name the sent or the arrival column (or both); replay needs times", o.columns)
	}
	if _, err := trace.ParseUnit(o.unit); err != nil {
		return usageErr("--unit %q: want ns, us, ms or s", o.unit)
	}
	return nil
}

func selectDetectors(list []string) ([]string, error) {
	want := map[string]bool{}
	var texts, canons []string // entries in the textual form, in the order given
	for _, arg := range list {
		for _, d := range splitTop(arg) {
			d = strings.TrimSpace(d)
			if d == "" {
				continue
			}
			low := strings.ToLower(d)
			if low == "all" {
				for _, n := range detectorNames {
					want[n] = true
				}
				continue
			}
			if c, ok := detectorAliases[low]; ok {
				want[c] = true
				continue
			}
			canon, err := parseSpecEntry(d)
			if err != nil {
				return nil, usageErr("--detectors: %v (known families: %s; see docs/detectors.md)", err, strings.Join(detectorNames, ", "))
			}
			if !slices.Contains(canons, canon) { // the same detector twice runs once
				canons = append(canons, canon)
				texts = append(texts, d) // shown as given: "akka", not its expansion
			}
		}
	}
	var out []string
	for _, n := range detectorNames {
		if want[n] {
			out = append(out, n)
		}
	}
	out = append(out, texts...)
	if len(out) == 0 {
		return nil, usageErr("no detector selected")
	}
	return out, nil
}

// input is one stream ready for replay.
type input struct {
	name     string // stream name used in tables, files and curves
	file     string
	sender   string
	hbs      []detector.Heartbeat // in memory; nil when spooled
	spool    *trace.Spool         // the heartbeats on disk when not in memory
	stats    trace.Stats
	interval time.Duration
	hdr      time.Duration // Δ from the file header, 0 if none
	epoch    int           // the sender's incarnation within the file (1, 2, ... after restarts)
	epochs   int           // how many incarnations the sender has in the file
	left     int           // records of this sender left out by the sanity check
	warnings []string      // the input check's findings about this sender, for the report
}

func runErr(args []string, stdout, stderr io.Writer) error {
	o, files, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	var out *outDir
	if o.out != "" {
		// Fail before the replay, not after it, when results cannot be
		// written or would mix with an earlier run's.
		if out, err = prepareOut(o.out, o.force); err != nil {
			return err
		}
		defer out.staging.Abort() // after an error: no partial file
	}
	if o.report != "" {
		if err := checkReportPath(o.report); err != nil {
			return err
		}
	}
	inputs, err := loadInputs(o, files, stderr)
	if err != nil {
		return err
	}
	defer closeInputs(inputs)
	if len(inputs) == 0 {
		return fmt.Errorf("no stream to replay (sender filter %v matched nothing)", o.senders)
	}
	// Intervals: 95 % confidence intervals for MR, QAP and the mean TD (±
	// in the tables, columns in the CSV and JSON outputs, error bars in
	// the plots).
	cfg := qos.Config{DelayOffset: o.delayOffset, Intervals: true}
	switch o.clock {
	case "sync":
		cfg.Clock = qos.ClockSynchronized
	case "unsync":
		cfg.Clock = qos.ClockUnsynchronized
	}
	// Warm-up is per stream (settings.warmUp, applied through the
	// families), since short streams get a smaller window.
	progress := newProgress(stderr, o.noProgress)

	// The table: every detector at its default setting, all streams in one
	// parallel run.
	type streamRun struct {
		in    *input
		set   settings
		descs []string
	}
	var runs []streamRun
	var tableStreams []qos.Stream
	var tableFams [][]qos.Family
	for i := range inputs {
		in := &inputs[i]
		s := streamSettings(o, in)
		fams, descs, err := tableFamilies(s, o.detectors)
		if err != nil {
			return err
		}
		tableStreams = append(tableStreams, in.stream())
		tableFams = append(tableFams, fams)
		runs = append(runs, streamRun{in: in, set: s, descs: descs})
	}
	tableCurves, err := qos.SweepEach(tableStreams, tableFams, qos.SweepOptions{Config: cfg})
	if err != nil {
		return err
	}
	// A stream on which no detector evaluated a single heartbeat (shorter
	// than the warm-up, or one heartbeat) has nothing to show: it is dropped
	// with a warning, and when no stream is left that is the error.
	nd := len(o.detectors)
	var keptRuns []streamRun
	var keptTable []qos.Curve
	var dropped []string
	for i, r := range runs {
		rows := tableCurves[i*nd : (i+1)*nd]
		if slices.ContainsFunc(rows, func(c qos.Curve) bool { return len(c.Points) > 0 }) {
			keptRuns = append(keptRuns, r)
			keptTable = append(keptTable, rows...)
			continue
		}
		msg := notEvaluated(r.in, r.set)
		if e := rows[0].Err; e != "" && !strings.Contains(e, qos.ErrNoEvaluation.Error()[len("qos: "):]) {
			msg = fmt.Sprintf("%s: sender %s: %s", r.in.file, displaySender(r.in), e) // not a warm-up problem: say what it is
		}
		dropped = append(dropped, msg)
	}
	if len(keptRuns) == 0 {
		if len(dropped) == 1 {
			return errors.New(dropped[0])
		}
		return fmt.Errorf("no stream could be evaluated (%d streams; first: %s)", len(dropped), dropped[0])
	}
	for _, d := range dropped {
		fmt.Fprintf(stderr, "fdreplay: warning: skipped %s\n", d)
	}
	runs, tableCurves = keptRuns, keptTable
	for i, r := range runs {
		printStreamHeader(stdout, r.in, r.set, cfg, o)
		rows := tableCurves[i*len(o.detectors) : (i+1)*len(o.detectors)]
		if err := printTable(stdout, rows, r.descs); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}

	var curves []qos.Curve
	var streams []qos.Stream
	var allFams [][]qos.Family
	if o.sweep {
		total := 0
		for _, r := range runs {
			spans := defaultSpans(r.set.interval)
			for k, v := range o.ranges {
				spans[k] = v
			}
			fams, err := sweepFamilies(r.set, sweptDetectors(o), o.points, spans)
			if err != nil {
				return usageErr("%v", err)
			}
			streams = append(streams, r.in.stream())
			allFams = append(allFams, fams)
			for _, f := range fams {
				total += len(f.Values)
			}
		}
		if need := int64(total) * sweepBytesPerPoint; need > int64(o.sweepMiB)<<20 {
			return fmt.Errorf("the sweep of %d streams would keep %d settings' results, about %d MiB (%d KiB each: confidence-interval cells, the result and the collector's headroom), above --max-sweep-memory %d: replay fewer streams (--sender), fewer settings (--points, -d), or raise --max-sweep-memory",
				len(streams), total, need>>20, sweepBytesPerPoint>>10, o.sweepMiB)
		}
		// Streams have their own Δ, hence their own families.
		c, err := qos.SweepEach(streams, allFams, qos.SweepOptions{Config: cfg, Progress: progress})
		if err != nil {
			return err
		}
		curves = c
		progress(-1, total)
		for _, c := range curves {
			if c.Err != "" {
				fmt.Fprintf(stderr, "fdreplay: warning: %s %s: %s\n", c.Stream, c.Family, c.Err)
			}
		}
	}
	// The verdict answers the user's targets (solving operating points
	// costs several times the sweep: without targets there is none).
	var verdicts []qos.Verdict
	if o.tune {
		opt := o.decide
		opt.Sweep = qos.SweepOptions{Config: cfg}
		if verdicts, err = decideAll(streams, allFams, curves, o.targets, opt, unsweptDetectors(o)); err != nil {
			return err
		}
		if err := printOperatingPoints(stdout, verdicts, o.targets); err != nil {
			return err
		}
	}
	if o.report != "" || o.out != "" {
		rruns := make([]reportRun, len(runs))
		for i, r := range runs {
			rruns[i] = reportRun{in: r.in, set: r.set, descs: r.descs}
			if i < len(verdicts) {
				rruns[i].verdict = &verdicts[i]
			}
		}
		rep, err := buildReport(o, args, rruns, tableCurves, curves, cfg)
		if err != nil {
			return err
		}
		if o.report != "" {
			if err := writeReportFile(o.report, rep); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote the report to %s\n", o.report)
		}
		if o.out != "" {
			if err := out.staging.Write(indexName, func(w io.Writer) error { return report.Write(w, rep) }); err != nil {
				return fmt.Errorf("--out %s: %w", o.out, err)
			}
		}
	}
	if o.sweep && o.out == "" && !o.tune && o.report == "" {
		fmt.Fprintln(stdout, "curves (CSV; durations in ms, MR per second):")
		if err := qos.WriteCSV(stdout, curves); err != nil {
			return err
		}
	}
	if o.out != "" {
		titles := map[string]string{}
		for _, r := range runs {
			titles[r.in.name] = plotTitle(r.in)
		}
		if err := writeOutputs(out.staging, tableCurves, curves, titles, stderr); err != nil {
			return fmt.Errorf("--out %s: %w", o.out, err)
		}
		if err := writeVerdicts(out.staging, verdicts); err != nil {
			return fmt.Errorf("--out %s: %w", o.out, err)
		}
		files, err := out.commit()
		if err != nil {
			return fmt.Errorf("--out %s: %w", o.out, err)
		}
		fmt.Fprintf(stdout, "wrote %d files to %s (index.html, curves.csv, curves.json, table.csv, table.json, verdict.json, plots)\n", len(files), o.out)
		if len(out.stale) > 0 {
			fmt.Fprintf(stdout, "removed %d files of an earlier run from %s (--force)\n", len(out.stale), o.out)
		}
	}
	return nil
}
