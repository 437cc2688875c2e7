package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fdkit/fdkit/internal/flagcheck"
	"github.com/fdkit/fdkit/internal/outfile"

	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/spec"
	"github.com/fdkit/fdkit/trace"
	"github.com/spf13/pflag"
)

const examples = `Examples:
  fdreplay                                   # embedded default trace, all detectors
  fdreplay --out results recv_node1.txt       # a LIP6 trace (formats: docs/fdreplay.md)
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

--out files appear only when complete. SIGINT, SIGTERM or SIGHUP stops the
run, removes its partial files (and an --out directory it made) and exits
130, 143 or 129; SIGQUIT dumps the goroutines' stacks and leaves the partial
files for the next run to remove. A flag value out of range is an error,
never replaced by a default. See docs/fdreplay.md.
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
	decide      qos.DecideConfig
	noProgress  bool
	// method is --method: "auto" (the exact shared methods where they
	// apply) or "per-point" (qos.SweepConfig.PerPointOnly).
	method  string
	report  string
	config  string
	process // from the process, not the flags: set by run
}

// process is what a run takes from its process besides the command line.
type process struct {
	stdin io.Reader // read for the trace file name "-"
	// memHeartbeats is how many heartbeats of all inputs together are
	// kept in memory (defaultMemHeartbeats, 32 bytes each). Past it, every
	// stream of the input being read and of the inputs before it moves to
	// a trace.Spool (an unlinked temporary file, about 6 bytes per
	// heartbeat) and is replayed from there, so that memory grows neither
	// with an input nor with the number of inputs. The replays read a
	// spooled stream of at most this many heartbeats back into memory
	// (qos.Spill.InMemory), two streams at a time, and sweep it there; a
	// longer one is swept from its spool.
	memHeartbeats int
	// limitMemory, when not nil, sets the garbage collector's soft memory
	// limit (runtime/debug.SetMemoryLimit) to the run's bound
	// (memoryLimit), so that garbage does not take the heap past it.
	limitMemory func(bytes int64) int64
	// timings, when not nil, gets a line as each phase of the run ends
	// (phaseClock; main sets it to stderr when timingsEnv is 1).
	timings io.Writer
	// progress, when not nil, gets the sweep's progress (done and total
	// settings) in place of the bar drawn on a terminal's stderr.
	progress func(done, total int)
}

// heapBytes is the heap a run is given besides its results: two streams
// of up to defaultMemHeartbeats heartbeats read back from their spools
// (32 bytes a heartbeat, 64 MiB) and 16 MiB of room. The bound was set
// when a heartbeat took 40 bytes (80 MiB for the two streams) and kept
// when it shrank, so that the collector runs less often within the same
// bound (docs/experiments.md, "fdreplay's default run at 10^7: a 32-byte
// heartbeat, and the two clusters (issue 24, session 20)"). It is the
// collector's soft limit, not a cap: the threshold passes of the sweeps
// on those streams (at most 32 MiB each) take the heap past it at times,
// and the collector then runs more often (the runtime caps that at about
// half the CPU); nothing fails. Counting two passes (144 MiB) let a
// 10^7-heartbeat run reach 214 MB of RSS for the same CPU time
// (docs/experiments.md, "Past the spool").
const heapBytes = 80 << 20

// sweepTaskBytes is what one task of a sweep on a stream in memory may
// hold at once besides the stream: a threshold pass's TD values, which
// qos keeps within 32 MiB.
const sweepTaskBytes = 32 << 20

// memoryLimit is the run's memory bound once its streams are known:
// heapBytes and what each stream keeps until the outputs are written
// (streamBytes). When the table and the sweep are replayed together
// (together) on streams in memory, GOMAXPROCS tasks run at once, each
// holding up to sweepTaskBytes besides the streams: the bound counts
// them, since below the heap they hold the collector would run without
// pause, for nothing (docs/experiments.md, "The collector's limit with
// the sweep started early"). Spooled streams are read back two at a time
// (heapBytes) and their tasks' TD values are counted there.
func memoryLimit(o options, runs []streamRun, together bool) int64 {
	per, _ := streamBytes(o)
	limit := heapBytes + int64(len(runs))*per
	if together && !slices.ContainsFunc(runs, func(r streamRun) bool { return r.in.spool != nil }) {
		limit += int64(runtime.GOMAXPROCS(0)) * sweepTaskBytes
	}
	return limit
}

// streamBytes is what a run keeps per stream until its outputs are
// written, with the collector's headroom: tableBytesPerResult per
// detector of its table and, when the run sweeps, sweepBytesPerPoint per
// swept setting, of which there are settings. --max-sweep-memory bounds it
// over all streams, and the load refuses the first stream past the bound
// (maxStreams).
func streamBytes(o options) (bytes int64, settings int) {
	bytes = int64(len(o.detectors)) * tableBytesPerResult
	if o.sweep {
		settings = sweptSettings(o)
		bytes += int64(settings) * sweepBytesPerPoint
	}
	return bytes, settings
}

// sweptSettings is how many settings the sweep replays per stream: the
// values of the swept families (--points of each, one for a family without
// a parameter such as Bertier's), which depend on the flags and not on the
// stream's Δ or window; they are counted for a stream of Δ = 100 ms. When
// the families cannot be built (the sweep reports why later), each swept
// detector counts --points.
func sweptSettings(o options) int {
	s := settings{interval: 100 * time.Millisecond, window: o.window, warmUp: max(o.warmUp, 0), timeout: time.Second}
	fams, err := sweepFamilies(s, sweptDetectors(o), o.points, o.ranges)
	if err != nil {
		return len(sweptDetectors(o)) * o.points
	}
	n := 0
	for _, f := range fams {
		n += len(f.Values)
	}
	return n
}

// defaultMemHeartbeats is process.memHeartbeats for fdreplay's users.
const defaultMemHeartbeats = 1 << 20

// maxInterval bounds Δ: the detector settings and sweep ranges are
// multiples of Δ up to 30Δ and must not overflow time.Duration (the
// fixed timeout 10Δ must stay positive). It is the round number of hours
// below MaxInt64/100 (25620h28m40.37s), so that messages can name it
// exactly; maxTimeout, ten times it, is the largest default T = 10Δ.
const (
	maxInterval = 25620 * time.Hour
	maxTimeout  = 10 * maxInterval
)

// hours prints a bound of whole hours as "25620h" rather than
// time.Duration's "25620h0m0s".
func hours(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// maxWindow bounds --window: every detector, and every swept setting of it,
// keeps n samples, so a huge --window is refused before it takes
// gigabytes.
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

// run runs fdreplay and returns its exit code: 0, 1 for a failed run or a
// failed write to stdout, 2 for a wrong command line.
func run(p process, args []string, stdout, stderr io.Writer) int {
	out := &errWriter{w: stdout}
	err := runErr(p, args, out, stderr)
	if out.err != nil {
		// Said even when the run failed otherwise: what it printed is
		// lost. A run that failed only for it (the --sweep CSV's writer
		// returns it) says it in the same words as the table does
		// (user48's F8: "qos: writing CSV: write /dev/stdout: broken
		// pipe" for one, "writing to stdout: ..." for the other).
		fmt.Fprintf(stderr, "fdreplay: writing to stdout: %v\n", out.err)
		if errors.Is(err, out.err) {
			err = nil
		}
	}
	switch {
	case err == nil || errors.Is(err, pflag.ErrHelp):
		if out.err != nil {
			return 1
		}
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

// flagValues are the flags parsed further after pflag: their pflag
// values, read by parseFlags into options.
type flagValues struct {
	detectors   *[]string
	configFile  *string
	maxDecomp   *string
	ranges      *[]string
	equivalence *string
	holdout     *string
	help        *bool
	version     *bool
}

// newFlagSet declares fdreplay's flags, filling in o where a flag is
// stored as given and returning the others for parseFlags.
func newFlagSet(o *options) (*pflag.FlagSet, flagValues) {
	fs := pflag.NewFlagSet("fdreplay", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	var v flagValues
	v.detectors = fs.StringArrayP("detectors", "d", []string{"all"}, "detectors to run (repeatable, or comma-separated): all; a family at fdreplay's defaults for the trace's Δ and --window: "+strings.Join(detectorNames, ", ")+" (aliases: "+strings.Join(familyAliases(), ", ")+"); a family with parameters in the textual form of docs/detectors.md, e.g. 'phi-normal(threshold=8, min-std=0)' (φ's σ floor min-std defaults to μ/100; 0 turns it off) or 'phi-akka(threshold=10, pause=0)'; a preset with its system's documented defaults, unscaled: akka, cassandra, scylla, hazelcast (e.g. 'akka(threshold=12)'); or a sweep: 'chen(window=1000) alpha=10ms..1s[:log]'. Parameters not given take fdreplay's defaults, and the header says which Akka/Cassandra defaults were scaled by Δ")
	v.configFile = fs.String("config", "", "YAML file of detectors and sweeps in the textual form (see docs/detectors.md), run in addition to --detectors (which then defaults to none)")
	fs.StringSliceVarP(&o.senders, "sender", "s", nil, "replay only these senders (ids as in the trace)")
	flagcheck.Var(fs, &o.warmUp, "warmup", "", -1, -1, math.MaxInt32, "-1 (the window size) or a count ≥ 0", "heartbeats excluded at the start of each stream (-1: the window size, so every detector is evaluated on the same heartbeats with full windows)")
	flagcheck.Var(fs, &o.window, "window", "", 1000, 1, maxWindow, fmt.Sprintf("a size from 1 to %d (each detector and swept setting keeps n samples)", maxWindow), "window size n of the adaptive detectors (chen, bertier, sfd, φ, 2w-fd's long window, satzger, kappa); streams shorter than 2n heartbeats (duplicates not counted) get n = length/4 unless set")
	flagcheck.Var(fs, &o.interval, "interval", "", 0, 1, maxInterval, fmt.Sprintf("a positive duration up to %s (omit the flag to take Δ from the trace)", hours(maxInterval)), "nominal heartbeat interval Δ (default: from the trace header, else estimated from send times or arrivals)")
	flagcheck.Var(fs, &o.timeout, "timeout", "", 0, 1, maxTimeout, fmt.Sprintf("a positive duration up to %s, the default 10Δ at the largest --interval (omit the flag for 10Δ)", hours(maxTimeout)), "fixed timeout T for the table (default 10Δ, i.e. 1s for Δ = 100ms)")
	flagcheck.Var(fs, &o.delayOffset, "delay-offset", "", 0, 0, maxInterval, fmt.Sprintf("a duration from 0 to %s", hours(maxInterval)), "d̄ added to the arrival-based TD when clocks are not synchronized (e.g. RTT/2)")
	fs.StringVar(&o.clock, "clock", "auto", "sender/monitor clocks: auto, sync or unsync (auto: synchronized iff every 0 ≤ A−σ ≤ 1m)")
	fs.StringVarP(&o.format, "format", "f", "auto", "input format when it cannot be detected: auto, lip6, lip6-emission, csv, fdkit")
	fs.StringVar(&o.columns, "columns", "", "CSV columns as sender,seq,sent,arrival header names (empty name: no such column); implies --format csv")
	fs.StringVar(&o.unit, "unit", "ns", "time unit of CSV send and arrival columns: ns, us, ms or s")
	fs.BoolVar(&o.lenient, "lenient", false, "skip malformed lines (they are counted and reported) instead of failing")
	fs.BoolVar(&o.strict, "strict", false, "fail on the first record that cannot be right (an outlying arrival, send time, delay or sequence number, a sequence restart, a truncated last line) instead of leaving it out with a warning; see docs/fdreplay.md")
	v.maxDecomp = fs.String("max-decompressed", "0", "refuse a gzip or xz trace that decompresses to more than this size (e.g. 20GiB; 0: no bound)")
	fs.Float64Var(&o.maxRatio, "max-ratio", 200, "refuse a gzip or xz trace that decompresses to more than this many times its compressed size, past the first 64 MiB (a decompression bomb; recorded traces inflate 3-30 times; 0: no bound)")
	fs.StringVarP(&o.out, "out", "o", "", "directory for results: index.html (the HTML report), table.csv/json, curves.csv/json, verdict.json, <sender>-mr-td and -qap-td plots (PNG, SVG, PDF), all written under temporary names and moved in when complete; implies --sweep")
	fs.BoolVar(&o.force, "force", false, "let --out replace the results of an earlier run (without it a directory holding them is refused; files of the earlier run that this one does not write are removed; never an input) and --report an existing file (never an input, nor a read-only file)")
	fs.BoolVar(&o.sweep, "sweep", false, "sweep each detector's parameter (implied by --out, --range and tuner targets); without --out the curves are printed as CSV")
	flagcheck.Var(fs, &o.points, "points", "p", 40, 1, maxPoints, fmt.Sprintf("a count from 1 to %d", maxPoints), "points per swept curve")
	flagcheck.Var(fs, &o.sweepMiB, "max-sweep-memory", "", 1024, 1, 1<<20, "a size in MiB from 1 to 1048576", "MiB the table's and the sweep's results may take (about 20 KiB per stream and detector, and 12 KiB per stream and swept setting, kept until the outputs are written); a trace of more streams is refused while it is read, at the first stream past the bound")
	v.ranges = fs.StringArray("range", nil, "sweep range NAME=LO:HI[:log|lin], durations with a unit or in ms; without a spacing the default sweep's, linear from LO ≤ 0 (repeatable; defaults: fixed Δ..30Δ log, chen, sfd and 2w-fd Δ/100..20Δ log, φ 0.5..16, cassandra 0.25..16 log, jacobson K 0.5..64 log, satzger θ 0.5..1, kappa K 0.5..16 log)")
	flagcheck.Var(fs, &o.targets.MaxTD, "td-max", "", 0, 1, math.MaxInt64, "a positive duration (omit the flag for no TD target)", "tuner target: mean TD at most this")
	flagcheck.Var(fs, &o.targets.MaxMRPerSecond, "mr-max", "", 0, 0, math.MaxFloat64, "a finite rate per second ≥ 0 (0: only settings that made no mistake; omit the flag for no MR target)", "tuner target: mistakes per second at most this, in [0, ∞) (1 per minute is 0.0167; 0: only settings that made no mistake over the trace)")
	flagcheck.Var(fs, &o.targets.MinQAP, "qap-min", "", 0, math.SmallestNonzeroFloat64, 1, "a probability in (0, 1] (omit the flag for no QAP target)", "tuner target: QAP at least this (e.g. 0.999)")
	v.equivalence = fs.String("equivalence", "1%", "practical threshold of the verdict: a difference in mean TD smaller than this share of the best detector's is reported as equivalent, whatever its interval (a percentage or a fraction; off: none)")
	v.holdout = fs.String("holdout", "50%", "share of the trace's time, at its end, held out for the out-of-sample figures: each detector is tuned on the rest and reported on both (off: none)")
	fs.BoolVar(&o.noProgress, "no-progress", false, "no progress bar (it is shown only when stderr is a terminal)")
	fs.StringVar(&o.method, "method", "auto", "how the table and sweeps are computed: auto (one pass, or the other exact shared methods of docs/fdreplay.md, where a family allows) or per-point (a full replay per setting: slower, the same results; to check that claim, compare the CSV files but their method column)")
	fs.StringVar(&o.report, "report", "", "write a self-contained HTML report to this file (trace statistics, tables, plots, the tuner's choice and a verdict with confidence intervals; implies --sweep); --out also writes one as index.html")
	v.help = fs.BoolP("help", "h", false, "show this help")
	v.version = fs.Bool("version", false, "print fdreplay's version (the module version and the source revision it was built from) and exit")
	return fs, v
}

// parseFlags parses and validates the command line: every flag is checked
// here, before the run opens a file.
func parseFlags(args []string, stdout io.Writer) (options, []string, error) {
	var o options
	fs, v := newFlagSet(&o)
	if err := checkSingleDash(fs, args); err != nil {
		return o, nil, err
	}
	var repeated error
	if err := fs.ParseAll(args, onceValued(fs, &repeated)); err != nil {
		if repeated != nil {
			return o, nil, repeated
		}
		return o, nil, usageErr("%v", err)
	}
	// An empty value given on purpose ("--out $DIR" with DIR unset) is
	// refused, not taken as the flag's absence: the run would write nothing.
	for _, name := range []string{"out", "report", "config", "sender", "columns"} {
		if f := fs.Lookup(name); f.Changed && (f.Value.String() == "" || f.Value.String() == "[]") {
			return o, nil, usageErr("--%s: empty value (omit the flag to do without it)", name)
		}
	}
	// Inputs take "-" as standard input, so "--report -" reads as a
	// request for standard output: say it is not, rather than write a
	// file named "-".
	if o.report == "-" {
		return o, nil, usageErr("--report -: give a file name; the report is not written to standard output")
	}
	if o.out != "" && outfile.IsStagingName(filepath.Base(filepath.Clean(o.out))) {
		// A later run writing beside it would take it for its own
		// unfinished output and remove it.
		return o, nil, usageErr("--out %s: names beginning with .partial- are kept for unfinished output (staging directories, removed by later runs); name another directory", o.out)
	}
	if o.out == "-" {
		return o, nil, usageErr("--out -: give a directory name; the results are files, not written to standard output (without --out the table is printed there, and --sweep prints the curves as CSV)")
	}
	// Standard input can be read once.
	if i := slices.Index(fs.Args(), "-"); i >= 0 {
		if j := slices.Index(fs.Args()[i+1:], "-"); j >= 0 {
			return o, nil, usageErr("standard input given twice (traces %d and %d are \"-\"): it can be read once", i+1, i+j+2)
		}
	}
	if err := checkSameTraces(fs.Args()); err != nil {
		return o, nil, err
	}
	o.windowSet = fs.Changed("window")
	o.sweepFlag = fs.Changed("sweep")
	// --mr-max 0 is a target of its own (MR = 0), not "no target".
	o.targets.NoMistakes = fs.Changed("mr-max") && o.targets.MaxMRPerSecond == 0
	if err := parseFlagValues(&o, v); err != nil {
		return o, nil, err
	}
	if *v.version {
		// Which fdreplay made a result (user48's F30).
		fmt.Fprintln(stdout, versionText())
		return o, nil, pflag.ErrHelp
	}
	if *v.help {
		fmt.Fprintf(stdout, "Usage: fdreplay [flags] [TRACE...]\n\nReplays heartbeat traces through fdkit's failure detectors and reports TD, MR and QAP.\nWith no TRACE, replays the embedded default trace.\n\nFlags:\n%s\n%s", fs.FlagUsages(), examples)
		return o, nil, pflag.ErrHelp
	}
	o.config = *v.configFile
	entries, err := configEntries(&o, *v.detectors, *v.configFile, fs.Changed("detectors"))
	if err != nil {
		return o, nil, err
	}
	if o.detectors, err = selectDetectors(entries); err != nil {
		return o, nil, err
	}
	if slices.ContainsFunc(o.detectors, func(e string) bool { return strings.Contains(e, "..") }) {
		o.sweep = true // a sweep entry asks for its curve
	}
	if o.ranges, err = parseRanges(*v.ranges); err != nil {
		return o, nil, err
	}
	if err := checkRangesUsed(*v.ranges, o.detectors); err != nil {
		return o, nil, err
	}
	if len(o.ranges) > 0 {
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
	switch o.method {
	case "auto", "per-point":
	default:
		return o, nil, usageErr("--method %q: want auto or per-point", o.method)
	}
	if err := checkCSVFlags(o, fs.Changed("unit")); err != nil {
		return o, nil, err
	}
	return o, fs.Args(), nil
}

// parseFlagValues reads the flags whose values are text to parse: the
// verdict's shares and the decompression bounds.
func parseFlagValues(o *options, v flagValues) error {
	var err error
	if o.decide.Equivalence, err = parseShare("equivalence", *v.equivalence); err != nil {
		return usageErr("%v", err)
	}
	if o.decide.Holdout, err = parseShare("holdout", *v.holdout); err != nil {
		return usageErr("%v", err)
	}
	if o.maxDecomp, err = parseSize(*v.maxDecomp); err != nil {
		return usageErr("--max-decompressed %q: %v", *v.maxDecomp, err)
	}
	if !(o.maxRatio >= 0) || math.IsInf(o.maxRatio, 0) {
		return usageErr("--max-ratio %v: want a finite number ≥ 0 (0: no bound)", o.maxRatio)
	}
	return nil
}

// configEntries returns the --detectors entries followed by the
// detectors and sweeps of the --config file, if any: a config file makes
// --detectors default to none, and a sweep in it turns on o.sweep.
func configEntries(o *options, entries []string, configFile string, detectorsSet bool) ([]string, error) {
	if configFile == "" {
		return entries, nil
	}
	f, err := spec.LoadFile(configFile)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	if !detectorsSet {
		entries = nil
	}
	for _, s := range f.Detectors {
		entries = append(entries, s.String())
	}
	for _, w := range f.Sweeps {
		entries = append(entries, w.String())
		o.sweep = true
	}
	return entries, nil
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
	// One header name for two roles reads one column twice (user48's F4:
	// "host,host,..." failed on line 2 as a bad seq, read as a bad file).
	// Names match the header as trace does: trimmed, case folded.
	roles := [4]string{"sender", "seq", "sent", "arrival"}
	for i, a := range parts {
		for j := i + 1; j < len(parts); j++ {
			if a, b := strings.TrimSpace(a), strings.TrimSpace(parts[j]); a != "" && strings.EqualFold(a, b) {
				return usageErr("--columns %q: %q names both %s and %s; name a column of its own for each (leave a name empty when absent)", o.columns, a, roles[i], roles[j])
			}
		}
	}
	if _, err := trace.ParseUnit(o.unit); err != nil {
		return usageErr("--unit %q: want ns, us, ms or s", o.unit)
	}
	return nil
}

func selectDetectors(list []string) ([]string, error) {
	want := map[string]bool{}
	given := map[string]string{} // a detector's family name or canonical text: the entry that named it
	var texts []string           // entries in the textual form, in the order given
	for _, arg := range list {
		for _, d := range splitTop(arg) {
			d = strings.TrimSpace(d)
			if d == "" {
				// "fixed," or "fixed,,chen": a detector left out or a
				// stray comma; either way not what was meant silently.
				if strings.TrimSpace(arg) == "" {
					return nil, usageErr("--detectors: an empty value names no detector (give a name such as fixed, or all)")
				}
				return nil, usageErr("--detectors: %q has an empty entry (a comma with no detector before or after it)", arg)
			}
			low := strings.ToLower(d)
			if low == "all" {
				for _, n := range detectorNames {
					want[n] = true
				}
				continue
			}
			key := ""
			if f, ok := spec.Lookup(low); ok {
				key = f.Name
			} else {
				canon, err := parseSpecEntry(d)
				if err != nil {
					return nil, usageErr("--detectors: %v (see docs/detectors.md)", err)
				}
				key = canon
				if strings.Contains(canon, "..") {
					key = sweepKey(canon)
				}
			}
			// The same detector named twice would run once, one row where
			// two were asked for: say so ("all" names each family
			// without naming it twice).
			if first, ok := given[key]; ok {
				if first == d {
					return nil, usageErr("--detectors: %s is given twice; name each detector once (in --detectors and --config together)", d)
				}
				return nil, usageErr("--detectors: %s and %s are the same detector (%s); name each detector once (in --detectors and --config together)", first, d, key)
			}
			given[key] = d
			if f, ok := spec.Lookup(low); ok {
				want[f.Name] = true
				continue
			}
			texts = append(texts, d) // shown as given: "akka", not its expansion
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
