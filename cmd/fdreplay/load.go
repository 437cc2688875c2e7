package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/report"
	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/traces"
)

// maxListedFindings is how many sanity findings are listed per file.
const maxListedFindings = 20

// loadInputs reads the traces (or the embedded default), checks every
// record (trace.Checker: records that cannot be right are left out with a
// warning, or fail the run with --strict) and splits them into per-sender
// streams, one per incarnation of the sender. Only heartbeats are kept.
func loadInputs(o options, files []string, stderr io.Writer) ([]input, error) {
	ropt, err := readerConfig(o)
	if err != nil {
		return nil, err
	}
	set := inputSet{mem: o.memHeartbeats}
	if len(files) == 0 {
		r, err := traces.Open(traces.Default)
		if err != nil {
			return nil, err
		}
		if err := set.load(r, "traces/"+traces.Default, o, false, stderr); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		r, err := openTrace(f, ropt, o.stdin)
		if err != nil {
			closeInputs(set.ins)
			return nil, readErr(err, o.lenient) // a bound passed while the format is detected names its flag too (user48's F27)
		}
		if err := set.load(r, f, o, len(files) > 1, stderr); err != nil {
			return nil, err
		}
	}
	if err := checkSenders(o.senders, set.ins); err != nil {
		closeInputs(set.ins)
		return nil, err
	}
	ins, err := dropUnreplayable(set.ins, stderr)
	if err != nil {
		return nil, err
	}
	uniqueNames(ins)
	return ins, nil
}

// readerConfig are the trace reader's options from the flags.
func readerConfig(o options) (trace.ReaderConfig, error) {
	ropt := trace.ReaderConfig{Lenient: o.lenient, MaxDecompressed: o.maxDecomp, MaxRatio: o.maxRatio}
	if o.format != "auto" {
		f, err := trace.ParseFormat(o.format)
		if err != nil {
			return ropt, usageErr("--format: %v", err)
		}
		ropt.Format = f
	}
	if o.columns != "" {
		parts := strings.Split(o.columns, ",")
		if len(parts) != 4 {
			return ropt, usageErr("--columns %q: want four comma-separated names sender,seq,sent,arrival (leave a name empty when absent)", o.columns)
		}
		unit, err := trace.ParseUnit(o.unit)
		if err != nil {
			return ropt, usageErr("--unit: %v", err)
		}
		ropt.Format = trace.FormatCSV
		ropt.Columns = trace.Columns{Sender: parts[0], Seq: parts[1], Sent: parts[2], Arrival: parts[3], Unit: unit}
	}
	return ropt, nil
}

// openTrace opens the trace file f, or stdin for "-".
func openTrace(f string, ropt trace.ReaderConfig, stdin io.Reader) (*trace.Reader, error) {
	var r *trace.Reader
	var err error
	if f == "-" {
		opt := ropt
		opt.Name = "<stdin>"
		r, err = trace.NewReader(stdin, opt)
	} else {
		r, err = trace.Open(f, ropt)
	}
	if errors.Is(err, trace.ErrUnknownFormat) {
		return nil, fmt.Errorf("%w (fdreplay: give -f/--format lip6, lip6-emission or fdkit, or for CSV --columns SENDER,SEQ,SENT,ARRIVAL with its header's names, an empty name for a column it lacks, and --unit)", err)
	}
	return r, err
}

// inputSet is the inputs loaded so far, with how many of their heartbeats
// are in memory: the bound mem (process.memHeartbeats) is over all
// inputs together.
type inputSet struct {
	ins  []input
	held int
	mem  int
}

// load reads the trace r (named file) into the set and closes r. On an
// error every input of the set is closed.
func (s *inputSet) load(r *trace.Reader, file string, o options, multi bool, stderr io.Writer) error {
	ins, err := loadReader(r, file, o, multi, s.mem-s.held, maxStreams(o)-len(s.ins), stderr)
	r.Close()
	if err == nil {
		err = s.add(ins)
	}
	if err != nil {
		closeInputs(s.ins)
	}
	return err
}

// add appends ins to the set. When they went past the bound of heartbeats
// in memory, the earlier inputs move to spools too.
func (s *inputSet) add(ins []input) error {
	s.ins = append(s.ins, ins...)
	n, spooled := 0, false
	for _, in := range ins {
		n += len(in.hbs)
		spooled = spooled || in.spool != nil
	}
	if !spooled {
		s.held += n
		return nil
	}
	for i := range s.ins {
		in := &s.ins[i]
		if in.spool != nil {
			continue
		}
		sp, err := spoolOf(in.hbs)
		if err == nil {
			if err = sp.Finish(); err != nil {
				sp.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("%s: sender %q: %w", in.file, in.sender, spoolErr(err, s.mem))
		}
		in.spool, in.hbs = sp, nil
	}
	s.held = 0
	return nil
}

// checkSenders reports the senders of --sender that no input holds, so
// that a misspelt or absent id fails the run rather than being dropped
// while the others run.
func checkSenders(want []string, ins []input) error {
	have := map[string]bool{}
	for _, in := range ins {
		have[in.sender] = true
	}
	var missing []string
	for _, s := range want {
		if !have[s] && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 || len(ins) == 0 {
		// No input at all is the caller's error (noStreamErr).
		return nil
	}
	return usageErr("--sender: no heartbeat of sender %s in the input (the other senders named were found; without --sender every sender is replayed)%s", strings.Join(quoteAll(missing), ", "), incarnationHint(missing))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// epochStream is the heartbeats of one incarnation of one sender.
type epochStream struct {
	sender     string
	epoch      int
	hbs        []detector.Heartbeat
	unsorted   bool          // some arrival is earlier than the one before it
	latest     time.Duration // the latest arrival so far, read at line latestLine
	latestLine int
	line       int          // the line of its first record
	spool      *trace.Spool // the heartbeats, once the input is too large for memory
	index      int          // the sender's trace.Checked.SenderIndex
}

// maxArrivalBack is how much earlier than the latest arrival of its
// stream so far a record may arrive, in file order: network reordering
// (a seq-sorted CSV shows it) moves a heartbeat by the spread of the
// one-way delays, well under a minute; more is a receiver clock stepped
// back, which sorting by arrival would turn into stale heartbeats and a
// long outage.
const maxArrivalBack = time.Minute

// toSpool moves s's heartbeats to a spool, sorted by arrival.
func (s *epochStream) toSpool() error {
	if s.unsorted {
		slices.SortStableFunc(s.hbs, func(a, b detector.Heartbeat) int { return cmp.Compare(a.Arrival, b.Arrival) })
	}
	sp, err := spoolOf(s.hbs)
	if err != nil {
		return err
	}
	s.spool, s.hbs, s.unsorted = sp, nil, false
	return nil
}

// tableBytesPerResult is the peak memory of a run per stream and detector
// of its table (the replay's detector, result and confidence-interval
// cells, with the garbage collector's headroom): 7,900 one-sender streams
// of 20 heartbeats took 1.5 GB with the 11 default detectors.
const tableBytesPerResult = 20 << 10

// maxStreams is how many streams (senders × incarnations, over all inputs)
// a run takes: what they keep until the outputs are written
// (streamBytes: their table, and their sweep's results when the run
// sweeps) within --max-sweep-memory.
func maxStreams(o options) int {
	per, _ := streamBytes(o)
	return int(int64(o.sweepMiB) << 20 / max(per, 1))
}

// tooManyStreams is the error of a run refused, while loading at where,
// for holding more than maxStreams streams.
func tooManyStreams(o options, where string) error {
	per, settings := streamBytes(o)
	what := fmt.Sprintf("the table of %d detectors", len(o.detectors))
	fewer := "fewer detectors (-d)"
	if settings > 0 {
		what += fmt.Sprintf(" and %d settings' results of the sweep", settings)
		fewer = "fewer settings (--points, -d)"
	}
	if n := maxStreams(o); n > 0 {
		return fmt.Errorf("%s: more than %d streams (senders × incarnations): each keeps about %d KiB until the outputs are written (%s), above --max-sweep-memory %d MiB past that: replay fewer streams (--sender), %s, or raise --max-sweep-memory",
			where, n, per>>10, what, o.sweepMiB, fewer)
	}
	return fmt.Errorf("%s: one stream keeps about %d KiB until the outputs are written (%s), above --max-sweep-memory %d MiB: replay %s, or raise --max-sweep-memory",
		where, per>>10, what, o.sweepMiB, fewer)
}

// spoolOf returns a spool holding hbs, which are in arrival order; it is
// not finished, so that more heartbeats can follow.
func spoolOf(hbs []detector.Heartbeat) (*trace.Spool, error) {
	sp, err := trace.NewSpool("")
	if err != nil {
		return nil, err
	}
	for _, hb := range hbs {
		if err := sp.Add(hb); err != nil {
			sp.Close()
			return nil, err
		}
	}
	return sp, nil
}

// spoolErr adds to an error of a spool what the user can do about it:
// sort the trace (heartbeats too far out of arrival order), or make room
// in the temporary directory (any other error: a full or read-only disk,
// a missing TMPDIR).
func spoolErr(err error, mem int) error {
	if errors.Is(err, trace.ErrSpoolOrder) {
		return fmt.Errorf("%w; sort the trace by arrival time first", err)
	}
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return fmt.Errorf("%w (past %d heartbeats in memory, fdreplay keeps each stream, one per sender and incarnation, in its own temporary file: raise the open-file limit, ulimit -n, above the number of streams, or replay fewer with --sender)", err, mem)
	}
	return fmt.Errorf("%w (past %d heartbeats in memory, fdreplay keeps the streams in temporary files in %s: free space there or set TMPDIR to another directory)", err, mem, os.TempDir())
}

// loadReader reads one trace through the sanity check into streams.
// Past limit heartbeats in memory, its streams move to spools; past
// streamsLeft streams it stops with the error of tooManyStreams.
func loadReader(r *trace.Reader, file string, o options, multi bool, limit, streamsLeft int, stderr io.Writer) ([]input, error) {
	l := &traceLoad{name: file, o: o, limit: limit, streamsLeft: streamsLeft}
	if file == "-" {
		l.name = "<stdin>"
	}
	loaded := false
	defer func() {
		if !loaded {
			l.closeSpools()
		}
	}()
	if err := l.read(r); err != nil {
		return nil, err
	}
	reportSkipped(stderr, l.name, r.Skipped(), r.SkippedErrors())
	if cut := r.Truncated(); cut != nil {
		fmt.Fprintf(stderr, "fdreplay: input cut short, replaying the records before the cut: %v\n", cut)
	}
	l.rep.print(stderr, l.name)
	out, err := l.inputs(file, r.Header().Interval, multi)
	loaded = err == nil
	return out, err
}

// traceLoad is one trace being read into streams, one per sender and
// incarnation.
type traceLoad struct {
	name        string // the file's name in messages
	o           options
	limit       int              // heartbeats held in memory before every stream is spooled
	streamsLeft int              // streams this trace may add
	bySender    [][]*epochStream // streams' entries by trace.Checked.SenderIndex
	all         []*epochStream   // the streams in the order they began
	rep         sanityReport
	left        map[[2]int]*leftRecords // by trace.Checked.SenderIndex and Epoch
	inMemory    int                     // heartbeats held in memory; −1 once everything is spooled
	err         error                   // the first error of the checker's callback
}

// readErr adds to a decompression bound's error the flag that raises it,
// and to a compressed stream cut short that --lenient replays the records
// before the cut, unless lenient is already set (user48's F29: a
// recording cut by a crash was refused without a word of it).
func readErr(err error, lenient bool) error {
	var le *trace.DecompressionLimitError
	if !errors.As(err, &le) {
		if !lenient && errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w (--lenient replays the records before the cut)", err)
		}
		return err
	}
	flag := "--max-ratio"
	if le.Max > 0 {
		flag = "--max-decompressed"
	}
	return fmt.Errorf("%w (raise %s if the trace is genuine)", err, flag)
}

// strictErr is a finding stopping the run under --strict: its detail
// says what would happen without the flag rather than that the record was
// left out, since the run stops there.
func strictErr(f *trace.Finding) error {
	if !f.Excluded {
		return fmt.Errorf("%v (--strict makes every finding an error)", f)
	}
	return fmt.Errorf("%s (--strict makes every finding an error; without --strict it would be left out with a warning)",
		strings.TrimSuffix(f.String(), ": left out"))
}

// checked takes one record from the sanity check: a finding is an error
// with --strict, else reported, and a record kept goes to its stream.
func (l *traceLoad) checked(c trace.Checked) {
	if l.err != nil {
		return
	}
	if f := c.Finding; f != nil {
		if l.o.strict {
			l.err = strictErr(f)
			return
		}
		l.rep.add(f, c.Epoch)
		if f.Excluded {
			l.leftOut(c)
			return
		}
	}
	rec := c.Record
	if !rec.HasArrival {
		// An emission log has no sender column: no 'sender ""' then
		// (user48's F21), and what fdreplay can replay instead.
		who := ""
		if rec.Sender != "" {
			who = fmt.Sprintf("sender %q: ", rec.Sender)
		}
		l.err = fmt.Errorf("%s:%d: %srecord seq %d has no arrival time (an emission log?): fdreplay replays reception logs, whose records have arrival times", l.name, c.Line, who, rec.Seq)
		return
	}
	s, err := l.stream(rec.Sender, c.SenderIndex, c.Epoch, c.Line)
	if err == nil {
		err = l.add(s, rec, c.Line)
	}
	l.err = err
}

// stream returns the stream of sender's incarnation epoch, starting it
// (and any before it) when it is new; idx is the sender's
// trace.Checked.SenderIndex.
func (l *traceLoad) stream(sender string, idx, epoch, line int) (*epochStream, error) {
	for len(l.bySender) <= idx {
		l.bySender = append(l.bySender, nil)
	}
	es := l.bySender[idx]
	if epoch <= len(es) {
		return es[epoch-1], nil
	}
	for len(es) < epoch {
		if len(l.all) >= l.streamsLeft {
			return nil, tooManyStreams(l.o, fmt.Sprintf("%s:%d: sender %q", l.name, line, sender))
		}
		e := &epochStream{sender: sender, epoch: len(es) + 1, line: line, index: idx}
		if l.inMemory < 0 {
			var err error
			if e.spool, err = trace.NewSpool(""); err != nil {
				return nil, fmt.Errorf("%s:%d: sender %q: %w", l.name, line, sender, spoolErr(err, l.o.memHeartbeats))
			}
		}
		es = append(es, e)
		l.all = append(l.all, e)
	}
	l.bySender[idx] = es
	return es[epoch-1], nil
}

// add appends rec's heartbeat to s, spooling every stream once the
// heartbeats in memory pass the limit. An arrival far earlier than the
// stream's latest is an error.
func (l *traceLoad) add(s *epochStream, rec trace.Record, line int) error {
	if back := s.latest - rec.Arrival; s.latestLine > 0 && back > maxArrivalBack {
		return fmt.Errorf("%s:%d: sender %q: arrival %v before the one at %s:%d: the receiver's clock stepped back? (network reordering moves a heartbeat by less than %v): correct the step or cut the trace there", l.name, line, rec.Sender, back, l.name, s.latestLine, maxArrivalBack)
	}
	if s.latestLine == 0 || rec.Arrival > s.latest {
		s.latest, s.latestLine = rec.Arrival, line
	}
	if s.spool != nil {
		if err := s.spool.Add(rec.Heartbeat()); err != nil {
			return fmt.Errorf("%s:%d: sender %q: %w", l.name, line, rec.Sender, spoolErr(err, l.o.memHeartbeats))
		}
		return nil
	}
	if n := len(s.hbs); n > 0 && s.hbs[n-1].Arrival > rec.Arrival {
		s.unsorted = true
	}
	s.hbs = append(s.hbs, rec.Heartbeat())
	if l.inMemory++; l.inMemory > l.limit {
		l.inMemory = -1
		for _, e := range l.all {
			if err := e.toSpool(); err != nil {
				return fmt.Errorf("%s:%d: sender %q: %w", l.name, line, e.sender, spoolErr(err, l.o.memHeartbeats))
			}
		}
	}
	return nil
}

// closeSpools removes the spools of a trace that failed to load.
func (l *traceLoad) closeSpools() {
	for _, e := range l.all {
		if e.spool != nil {
			e.spool.Close()
		}
	}
}

// inputs returns the streams read, by sender and incarnation, ready for
// replay. The streams are summarized in parallel (newInput reads each
// once); the error is the first stream's in that order.
func (l *traceLoad) inputs(file string, hdr time.Duration, multi bool) ([]input, error) {
	senders := slices.DeleteFunc(slices.Clone(l.bySender), func(es []*epochStream) bool { return len(es) == 0 })
	slices.SortFunc(senders, func(a, b []*epochStream) int { return trace.CompareSenders(a[0].sender, b[0].sender) })
	var out []input
	var jobs []func() error
	for _, es := range senders {
		sender := es[0].sender
		for _, s := range es {
			i := len(out)
			out = append(out, input{})
			jobs = append(jobs, func() error {
				in, err := newInput(s, file, l.name, hdr, len(es), multi, l.o, l.left[[2]int{s.index, s.epoch}])
				in.warnings = l.rep.senderWarnings(sender, s.epoch)
				out[i] = in
				return err
			})
		}
	}
	if err := inParallel(jobs); err != nil {
		return nil, err
	}
	return out, nil
}

// newInput sorts one epoch's heartbeats by arrival (stably, as trace.Split
// does), summarizes them and settles Δ; left is what the input check left
// out of the epoch (nil: nothing), received and so not counted as lost.
func newInput(s *epochStream, file, name string, hdr time.Duration, epochs int, multi bool, o options, left *leftRecords) (input, error) {
	if s.unsorted {
		slices.SortStableFunc(s.hbs, func(a, b detector.Heartbeat) int { return cmp.Compare(a.Arrival, b.Arrival) })
	}
	in := input{file: name, line: s.line, sender: s.sender, hdr: hdr, hbs: slices.Clip(s.hbs), spool: s.spool, epoch: s.epoch, epochs: epochs}
	in.name = s.sender
	if in.name == "" {
		in.name = "stream"
	}
	if epochs > 1 {
		in.name = fmt.Sprintf("%s@%d", in.name, s.epoch)
	}
	if multi {
		in.name = filepath.Base(file) + ":" + in.name
	}
	// One read for the stats, the clock rule (qos.ClocksLookSynchronized)
	// and, with a report (--out, --report), its Summary.
	var acc trace.Accumulator
	if left != nil {
		acc.AlsoReceived(&left.acc)
		in.left = left.n
	}
	var z *report.Summarizer
	if o.out != "" || o.report != "" {
		z = new(report.Summarizer)
	}
	sync := in.len() > 0
	var top uint64 // the highest number so far, for in.farBehind
	seq, done := in.source().Pass()
	for hb := range seq {
		acc.Add(trace.Record{Sender: s.sender, Seq: hb.Seq, HasSeq: hb.HasSeq, Sent: hb.Sent, HasSent: hb.HasSent, Arrival: hb.Arrival, HasArrival: true})
		sync = sync && qos.SynchronizedDelay(hb)
		if hb.HasSeq {
			if top > hb.Seq && top-hb.Seq > detector.DefaultRestartJump {
				in.farBehind++
			}
			top = max(top, hb.Seq)
		}
		if z != nil {
			z.Add(hb)
		}
	}
	if err := done(); err != nil {
		return in, err
	}
	in.stats, in.clocksSync = acc.Stats(), sync
	left.notLost(&in.stats)
	if z != nil {
		sum := z.Summary()
		in.summary = &sum
	}
	what := fmt.Sprintf("%s: sender %q", name, s.sender)
	if epochs > 1 {
		what += fmt.Sprintf(" (epoch %d)", s.epoch)
	}
	est := roundInterval(in.stats.Interval)
	declared, from := o.interval, "--interval"
	if declared == 0 && hdr > 0 {
		declared, from = hdr, "the file header's interval"
	}
	switch {
	case declared > 0:
		in.interval = declared
		if err := checkUnit(est, declared, from, o); err != nil {
			return in, fmt.Errorf("%s: %w", what, err)
		}
	default:
		in.interval = est
	}
	if in.interval > maxInterval {
		// Only the header or the estimate can be over the bound: so is
		// --interval. Name what gave Δ, the bound, and what to change.
		src := "the timestamps give Δ = " + in.interval.String()
		if declared > 0 {
			src = fmt.Sprintf("%s is %v", from, declared)
		}
		return in, fmt.Errorf("%s: %s, over the longest Δ fdreplay replays, %s (its settings go up to 30Δ, which must fit in a time.Duration): if the timestamps are in another unit, correct it (%s); else give --interval, at most %s",
			what, src, hours(maxInterval), unitHint(o), hours(maxInterval))
	}
	if declared == 0 {
		if err := checkPlausible(est, in.stats, o); err != nil {
			return in, fmt.Errorf("%s: %w", what, err)
		}
	}
	in.unreplayable = unreplayable(&in)
	return in, nil
}
