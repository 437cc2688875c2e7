// Plausibility of a loaded trace: its units (the interval and the one-way
// delays), and the streams that cannot be replayed.

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/trace"
)

// checkPlausible reports a Δ estimated from the timestamps outside
// [minPlausibleInterval, maxPlausibleInterval], or a mean one-way delay
// (send and arrival clocks within an hour of each other, so that A − σ is
// a delay and not a clock offset) above maxPlausibleDelay, naming --unit
// and --interval: the one corrects the unit, the other confirms Δ.
func checkPlausible(est time.Duration, st trace.Stats, o options) error {
	fix := fmt.Sprintf("if the timestamps are in another unit, correct it (%s); if Δ really is %v, confirm it with --interval %v", unitHint(o), est, est)
	switch {
	case est <= 0:
		return nil
	case est < minPlausibleInterval:
		return fmt.Errorf("the timestamps give Δ = %v, shorter than the %v a heartbeat plausibly has: %s", est, minPlausibleInterval, fix)
	case est > maxPlausibleInterval:
		return fmt.Errorf("the timestamps give Δ = %v, longer than the %v a heartbeat plausibly has: %s", est, maxPlausibleInterval, fix)
	case st.HasClock && st.ClockOffset > maxPlausibleDelay && st.ClockOffset < time.Hour:
		return fmt.Errorf("the timestamps give a mean one-way delay A − σ of %v, longer than %v, with Δ = %v: %s", st.ClockOffset.Round(time.Millisecond), maxPlausibleDelay, est, fix)
	}
	return nil
}

// checkArrivalsMove reports a stream whose arrival instants span less than
// a unitRatio-th of what its records take at Δ (interval): arrival times
// that do not move (a receive log written in one batch, timestamped at the
// flush) leave nothing to replay, and a replay of them reports made-up
// detection times (user48 F23: 3,000 heartbeats over 0 s gave a TD of
// 51 s). Streams of fewer than 3 records, or without arrivals, pass.
func checkArrivalsMove(st trace.Stats, interval time.Duration) error {
	if !st.HasArrival || st.Records < 3 || interval <= 0 {
		return nil
	}
	want := float64(st.Records-1) * float64(interval)
	if float64(st.Span)*unitRatio >= want {
		return nil
	}
	return fmt.Errorf("%d arrivals within %v, where %d heartbeats take about %v at Δ = %v: the arrival times do not move (a receive log timestamped in one batch?); nothing to replay",
		st.Records, st.Span, st.Records, detector.RoundNanos(want).Round(time.Millisecond), interval)
}

// unitRatio is how far the Δ estimated from the timestamps may be from the
// declared Δ (either way) before the two contradict: unit mistakes are
// factors of 1000.
const unitRatio = 100

// checkUnit reports a Δ estimated from the timestamps that contradicts the
// declared one by more than unitRatio.
func checkUnit(est, declared time.Duration, from string, o options) error {
	if est <= 0 {
		return nil
	}
	r := float64(est) / float64(declared)
	if r <= unitRatio && r >= 1.0/unitRatio {
		return nil
	}
	return fmt.Errorf("the timestamps give Δ ≈ %v but %s is %v (%.3g× apart): are the timestamps in another unit (%s)?", est, from, declared, r, unitHint(o))
}

func unitHint(o options) string {
	if o.columns != "" {
		return fmt.Sprintf("--unit is %s", o.unit)
	}
	return "convert the file: --unit applies to CSV with --columns"
}

// sanityReport gathers the findings of one file.
type sanityReport struct {
	excluded int
	byKind   map[trace.FindingKind]int
	listed   []epochFinding
	restarts []epochFinding // the first maxListedFindings restarts
	restartN int            // restarts in all
}

// epochFinding is a finding with the incarnation of its sender that the
// record belongs to (trace.Checked.Epoch; a restart's is the one it
// starts), so that each incarnation's section of the report lists its own
// (atk25's F5: p0@1 and p0@2 both listed the records of both).
type epochFinding struct {
	*trace.Finding
	epoch int
}

// add counts f, the finding of a record of its sender's incarnation epoch.
func (r *sanityReport) add(f *trace.Finding, epoch int) {
	if f.Kind == trace.FindingRestart && !f.Excluded {
		r.restartN++
		if len(r.restarts) < maxListedFindings {
			r.restarts = append(r.restarts, epochFinding{f, epoch})
		}
		return
	}
	if r.byKind == nil {
		r.byKind = map[trace.FindingKind]int{}
	}
	r.excluded++
	r.byKind[f.Kind]++
	if len(r.listed) < maxListedFindings {
		r.listed = append(r.listed, epochFinding{f, epoch})
	}
}

// leftRecords is what the input check left out of one incarnation of one
// sender (trace.Checked.Epoch: a late heartbeat of the incarnation before
// a restart counts in that one's): how many records, and the sequence
// numbers of those whose number is not in doubt (a time field was wrong:
// FindingArrival, FindingSent or FindingDelay; or a FindingSeq with
// SeqKnown, a copy of a number received before or a late heartbeat of the
// incarnation before), which were received, for the loss
// (trace.Accumulator.AlsoReceived: a copy's number, received already,
// changes nothing); and how many were left out for a wrong sequence
// number, received too, their true number unknown (unnumbered: see
// notLost). Its memory is a bit per sequence number of the pages those
// numbers fall in, next to the stream's.
type leftRecords struct {
	n          int
	unnumbered uint64
	acc        trace.Accumulator
}

// notLost takes from st's loss one missing sequence number per record
// left out for a wrong sequence number (atk25's F3; not a copy, atk26's
// N1): it was received, so it is no loss, though which number it had is
// unknown; and when no number is
// left missing, no loss burst either. The bursts stay where numbers are
// missing otherwise (one of them holds the record's true number, likely).
func (lo *leftRecords) notLost(st *trace.Stats) {
	if lo == nil || lo.unnumbered == 0 || !st.HasSeq || st.Expected == 0 {
		return
	}
	st.Lost -= min(st.Lost, lo.unnumbered)
	st.LossRate = float64(st.Lost) / float64(st.Expected)
	if st.Lost == 0 {
		st.LossBursts, st.LongestBurst = 0, 0
	}
}

// leftOut counts c, a record the input check left out.
func (l *traceLoad) leftOut(c trace.Checked) {
	k := [2]int{c.SenderIndex, c.Epoch}
	lo := l.left[k]
	if lo == nil {
		if l.left == nil {
			l.left = map[[2]int]*leftRecords{}
		}
		lo = new(leftRecords)
		l.left[k] = lo
	}
	lo.n++
	switch f := c.Finding; {
	case f.Kind == trace.FindingArrival, f.Kind == trace.FindingSent, f.Kind == trace.FindingDelay,
		f.Kind == trace.FindingSeq && f.SeqKnown:
		if c.Record.HasSeq {
			lo.acc.Add(trace.Record{Sender: c.Record.Sender, Seq: c.Record.Seq, HasSeq: true})
		}
	case f.Kind == trace.FindingSeq:
		lo.unnumbered++
	}
}

// print writes the warning: how many records were left out, why, and the
// first of them with file:line; then the restarts.
func (r *sanityReport) print(w io.Writer, name string) {
	if r.excluded > 0 {
		var kinds []string
		for k := trace.FindingArrival; k <= trace.FindingRestart; k++ {
			if n := r.byKind[k]; n > 0 {
				kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
			}
		}
		fmt.Fprintf(w, "fdreplay: warning: %s: left out %d record(s) that cannot be right (%s); --strict makes this an error:\n", name, r.excluded, strings.Join(kinds, ", "))
		for _, f := range r.listed {
			fmt.Fprintf(w, "  %v\n", f.Finding)
		}
		if r.excluded > len(r.listed) {
			fmt.Fprintf(w, "  ... and %d more\n", r.excluded-len(r.listed))
		}
	}
	for _, f := range r.restarts {
		fmt.Fprintf(w, "fdreplay: note: %v; each incarnation is replayed as its own stream (sender@epoch) with a fresh detector\n", f.Finding)
	}
	if more := r.restartN - len(r.restarts); more > 0 {
		// Counted as the left-out records are (user48's F35: the notes
		// stopped at 20 of 2999 restarts without a word).
		fmt.Fprintf(w, "fdreplay: note: %s: ... and %d more sequence restart(s), %d in all\n", name, more, r.restartN)
	}
}

// parseSize parses a byte count with an optional unit: B, KB, MB, GB, TB
// (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024).
func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]int64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case mult == 0:
		return 0, fmt.Errorf("unknown unit %q (want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", unit)
	case err != nil || n < 0:
		return 0, errors.New("want a non-negative whole number of bytes with an optional unit, e.g. 20GiB")
	case n > math.MaxInt64/mult:
		return 0, errors.New("too large")
	}
	return n * mult, nil
}

// clockNotes says when a clock flag does not do what it was likely given
// for (user48's F20): --clock sync on streams whose one-way delays A − σ
// are beyond any network's (their TDs then include the clocks' offset),
// and --delay-offset on streams replayed with synchronized clocks, whose
// TD = τ − σ does not use it. One line for each, naming the first stream
// and how many there are.
func clockNotes(o options, ins []input) []string {
	var offset, unused []*input
	for i := range ins {
		in := &ins[i]
		sync := o.clock == "sync" || o.clock == "auto" && in.clocksSync
		st := in.stats
		if o.clock == "sync" && st.HasClock && (st.ClockOffset > maxPlausibleDelay || st.ClockOffset < -maxPlausibleDelay) {
			offset = append(offset, in)
		}
		if o.delayOffset > 0 && sync {
			unused = append(unused, in)
		}
	}
	var notes []string
	if len(offset) > 0 {
		in := offset[0]
		notes = append(notes, fmt.Sprintf("fdreplay: warning: --clock sync: the one-way delays A − σ of sender %s (%s)%s are beyond any network's (about %v for sender %[1]s): the clocks are not synchronized, and every TD includes their offset (--clock auto measures A − σ and chooses)",
			displaySender(in), in.file, others(len(offset)), in.stats.ClockOffset.Round(time.Second)))
	}
	if len(unused) > 0 {
		in := unused[0]
		notes = append(notes, fmt.Sprintf("fdreplay: note: --delay-offset %v is not used for sender %s (%s)%s: its clocks are synchronized, TD = τ − σ; the offset applies to the arrival-based TD of unsynchronized clocks only",
			o.delayOffset, displaySender(in), in.file, others(len(unused))))
	}
	return notes
}

// others says how many more streams a note is about, after the first.
func others(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" and %d other stream(s)", n-1)
}

// The plausible range of a heartbeat interval and of a one-way delay read
// from timestamps without --interval: outside, the timestamps' unit is
// wrong far more often than the heartbeat is (a CSV in seconds read with
// --unit ms, or a LIP6 trace converted to microseconds, gives Δ = 100 µs;
// a CSV in microseconds read with --unit ms gives one-way delays of
// tens of seconds).
const (
	minPlausibleInterval = time.Millisecond
	maxPlausibleInterval = time.Hour
	maxPlausibleDelay    = 10 * time.Second
)

// unreplayable says why the stream cannot be replayed, or "": its Δ cannot
// be estimated (one heartbeat, or no step between two), or its arrivals
// do not move (checkArrivalsMove: a receive log timestamped in one batch),
// which a replay would turn into made-up detection times. Either is a
// stream skipped with a warning, so that one such stream among others
// does not stop their replay (user48's F1 and F23).
func unreplayable(in *input) string {
	if in.interval <= 0 {
		return fmt.Sprintf("the heartbeat interval cannot be estimated from its %d heartbeat(s) (give --interval)", in.len())
	}
	if err := checkArrivalsMove(in.stats, in.interval); err != nil {
		return err.Error()
	}
	return ""
}

// dropUnreplayable returns the inputs that can be replayed, leaving out
// with a warning (as keepEvaluated leaves out a stream too short for the
// warm-up) those that cannot (input.unreplayable): a stray record of
// another sender does not stop the replay of the others. When none is
// left that is the error. The inputs left out are closed.
func dropUnreplayable(ins []input, stderr io.Writer) ([]input, error) {
	var kept []input
	var dropped []string
	for i := range ins {
		in := &ins[i]
		if in.unreplayable == "" {
			kept = append(kept, *in)
			continue
		}
		dropped = append(dropped, fmt.Sprintf("%s: sender %s: no heartbeat evaluated: %s", in.where(), displaySender(in), in.unreplayable))
		closeInputs(ins[i : i+1])
	}
	if len(kept) == 0 && len(dropped) > 0 {
		if len(dropped) == 1 {
			return nil, errors.New(dropped[0])
		}
		return nil, fmt.Errorf("no stream could be evaluated (%d streams; first: %s)", len(dropped), dropped[0])
	}
	for _, d := range dropped {
		fmt.Fprintf(stderr, "fdreplay: warning: skipped %s\n", d)
	}
	return kept, nil
}
