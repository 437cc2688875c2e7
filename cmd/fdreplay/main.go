// Command fdreplay replays recorded heartbeat traces through fdkit's failure
// detectors and reports their quality of service: detection time TD,
// mistake rate MR (per second), query accuracy probability QAP, mistake
// duration E[TM] and recurrence time E[TMR] (Chen, Toueg and Aguilera,
// IEEE TC 51(5), 2002; docs/algorithms.md, “QoS metrics”).
//
// Usage:
//
//	fdreplay [flags] [TRACE...]
//
// With no TRACE it replays the embedded default trace of package traces.
// For every sender it prints a table of all detectors at their default
// settings; with --out it also sweeps each detector's parameter and writes
// the curves (CSV, JSON), the verdicts (JSON) and plots (PNG, SVG, PDF); with targets (--td-max,
// --mr-max, --qap-min) it reports, per detector, the setting that meets them
// with the smallest TD. Run fdreplay -h for flags and examples.
package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/fdkit/fdkit/internal/outfile"
	"github.com/fdkit/fdkit/qos/figure"
)

func main() {
	// SIGINT, SIGTERM or SIGHUP: stop, remove the partial --out files, exit
	// 130, 143 or 129.
	stop := outfile.HandleSignals("fdreplay", os.Stderr)
	routeLibraryLog(os.Stderr)
	// A closed pipe on stdout (fdreplay --out d | head) is a failed write
	// like any other (reported, the --out files still written, exit 1),
	// not a SIGPIPE that kills the run and leaves its staging directory.
	signal.Ignore(syscall.SIGPIPE)
	p := process{stdin: os.Stdin, memHeartbeats: defaultMemHeartbeats}
	if os.Getenv("GOMEMLIMIT") == "" { // the user's own limit wins
		p.limitMemory = debug.SetMemoryLimit
	}
	if os.Getenv(timingsEnv) == "1" {
		p.timings = os.Stderr
	}
	if v, ok := os.LookupEnv(sourceDateEnv); ok {
		// Two runs with it give identical PDFs (user48's F12: they
		// differed by their creation dates only).
		t, err := sourceDate(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fdreplay: %v\n", err)
			stop()
			os.Exit(2)
		}
		figure.SetPDFDate(t)
	}
	stopProfile := func() error { return nil }
	if path := os.Getenv(cpuProfileEnv); path != "" {
		var err error
		if stopProfile, err = startCPUProfile(path); err != nil {
			fmt.Fprintf(os.Stderr, "fdreplay: %v\n", err)
			stop()
			os.Exit(2)
		}
	}
	code := run(p, os.Args[1:], os.Stdout, os.Stderr)
	if err := stopProfile(); err != nil {
		fmt.Fprintf(os.Stderr, "fdreplay: %v\n", err)
		code = max(code, 1)
	}
	stop()
	os.Exit(code)
}

// routeLibraryLog makes lines that libraries print through the standard
// log package (gonum's PDF backend does, before returning its error) read
// as fdreplay's own lines on w: "fdreplay: " and the message, without
// log's date and time.
func routeLibraryLog(w io.Writer) {
	log.SetOutput(w)
	log.SetFlags(0)
	log.SetPrefix("fdreplay: ")
}

// sourceDateEnv names the variable whose value, seconds since 1970 UTC,
// is the date written into the PDF figures instead of the time of
// writing (the reproducible-builds.org convention, SOURCE_DATE_EPOCH).
const sourceDateEnv = "SOURCE_DATE_EPOCH"

// sourceDate reads SOURCE_DATE_EPOCH's value: a decimal count of seconds
// from 0 up to the year 9999 (the PDF date has four digits for the year).
func sourceDate(v string) (time.Time, error) {
	const maxSec = 253402300799 // 9999-12-31T23:59:59Z
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > maxSec {
		return time.Time{}, fmt.Errorf("%s=%q: want the seconds since 1970-01-01 UTC, a decimal integer from 0 to %d", sourceDateEnv, v, int64(maxSec))
	}
	return time.Unix(n, 0).UTC(), nil
}
