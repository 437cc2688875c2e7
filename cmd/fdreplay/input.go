// An input's streams as the replay reads them: in memory or spooled.

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fdkit/fdkit/qos"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// closeInputs releases the spools of inputs.
func closeInputs(inputs []input) {
	for _, in := range inputs {
		if in.spool != nil {
			in.spool.Close()
		}
	}
}

// len returns the number of heartbeats of the stream.
func (in *input) len() int {
	if in.spool != nil {
		return in.spool.Len()
	}
	return len(in.hbs)
}

// source returns the stream's heartbeats, in memory or spooled.
func (in *input) source() qos.Source {
	if in.spool != nil {
		return in.spool
	}
	return qos.SliceSource(in.hbs)
}

// stream returns the stream for a sweep.
func (in *input) stream() qos.Stream {
	if in.spool != nil {
		return qos.Stream{Name: in.name, Source: in.spool}
	}
	return qos.Stream{Name: in.name, Heartbeats: in.hbs}
}

// notEvaluated describes a stream on which no heartbeat got past warm-up:
// the warm-up asked for held them all, or the detectors' own (no
// freshness point yet) held those after it.
// entries are the --detectors entries: a window set in a spec is named
// as given, since --window does not change it.
func notEvaluated(in *input, s settings, entries []string) string {
	fresh := in.len() - in.stats.Duplicates - in.stats.Reordered
	why := fmt.Sprintf("all in the warm-up of %d (window n = %d; lower --warmup or --window)", s.warmUp, s.window)
	if fresh > s.warmUp {
		after := fmt.Sprintf("warm-up %d, and the detectors were still warming up after the other %d", s.warmUp, fresh-s.warmUp)
		if s.warmUp == 0 {
			after = "no warm-up, and the detectors were still warming up after them"
		}
		own, others := specWindows(entries)
		them := "them"
		if len(own) == 1 && !others {
			them = "it"
		}
		switch {
		case len(own) == 0:
			why = after + fmt.Sprintf(" (the adaptive ones fill a window of n = %d first; lower --window or replay a longer stream)", s.window)
		case others:
			why = after + fmt.Sprintf(" (the adaptive ones fill their windows first: n = %d from --window, and %s; lower them or replay a longer stream)", s.window, strings.Join(own, ", "))
		default:
			why = after + fmt.Sprintf(" (the adaptive ones fill their windows first: %s; lower %s in the spec or replay a longer stream)", strings.Join(own, ", "), them)
		}
	}
	return fmt.Sprintf("%s: sender %s: no heartbeat evaluated: %d fresh heartbeat(s), %s", in.where(), displaySender(in), fresh, why)
}

// where is the file and line of the stream's first record, file:line.
func (in *input) where() string {
	if in.line <= 0 {
		return in.file
	}
	return fmt.Sprintf("%s:%d", in.file, in.line)
}

// streamSettings derives the detector settings for one stream.
func streamSettings(o options, in *input) settings {
	s := settings{interval: in.interval, window: o.window, delay: o.delayOffset}
	// A stream too short for the window (fewer than 2n heartbeats) gets
	// n = a quarter of its length, unless --window was given, so that the
	// adaptive detectors are evaluated on something. Its length leaves out
	// the duplicates, which every detector drops (docs/algorithms.md), so
	// that a trace with every record twice is replayed as the trace itself
	// (user44's F12: twice the records made n twice as large).
	if n := in.len() - in.stats.Duplicates; !o.windowSet && n < 2*o.window {
		s.window = max(n/4, 2)
		s.windowShrunk = true
	}
	s.warmUp = o.warmUp
	if s.warmUp < 0 {
		s.warmUp = s.window
	}
	s.timeout = o.timeout
	if s.timeout == 0 {
		s.timeout = 10 * in.interval
	}
	switch o.clock {
	case "sync":
		s.sync = true
	case "auto":
		s.sync = in.clocksSync
	}
	s.targets = sfdTargets(o.targets, in.interval)
	return s
}

// uniqueNames makes stream names unique: they name table rows, curves and
// plot files, and two streams called "t.txt:4" (files with one base name in
// two directories, or one file given twice) overwrote each other's plots
// and could not be told apart in the tables. A clash takes the file's path
// as given, and then a "#i" suffix.
func uniqueNames(ins []input) {
	count := map[string]int{}
	for _, in := range ins {
		count[in.name]++
	}
	for i := range ins {
		in := &ins[i]
		if base := filepath.Base(in.file) + ":"; count[in.name] > 1 && strings.HasPrefix(in.name, base) {
			in.name = in.file + ":" + strings.TrimPrefix(in.name, base)
		}
	}
	seen := map[string]int{}
	for i := range ins {
		n := ins[i].name
		seen[n]++
		if seen[n] > 1 {
			ins[i].name = fmt.Sprintf("%s#%d", n, seen[n])
		}
	}
}

// roundInterval rounds an estimated Δ to 0.1 ms (estimates from send times
// are off by microseconds; detectors need the nominal value).
func roundInterval(d time.Duration) time.Duration {
	const q = 100 * time.Microsecond
	if d < q {
		return d
	}
	return time.Duration(math.Round(float64(d)/float64(q))) * q
}

// newProgress returns a progress callback drawing a bar on stderr when it
// is a terminal (done < 0 finishes the bar).
func newProgress(stderr io.Writer, disabled bool) func(done, total int) {
	f, ok := stderr.(*os.File)
	if disabled || !ok || !term.IsTerminal(int(f.Fd())) {
		return func(int, int) {}
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			if done < 0 || total == 0 {
				return
			}
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("sweeping"),
				progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		if done < 0 {
			_ = bar.Finish()
			return
		}
		_ = bar.Set(done)
	}
}
