package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"github.com/fdkit/fdkit/internal/flagcheck"
	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/spec"
	"github.com/fdkit/fdkit/swim/wire"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// presetNames lists the registry's detector presets, comma-separated.
func presetNames() string {
	var names []string
	for _, p := range spec.Presets() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// recvFlags are the command line of "fdbeat recv".
type recvFlags struct {
	cfg      recvConfig
	logLevel string
	level    slog.Level // --log-level, parsed
	keyHex   []string   // --key
	keyFile  string
	keys     [][]byte // --key's and --key-file's, parsed
	plain    bool     // --plain: lines, not a table redrawn in place
	hostLate bool
}

// cmdRecv is "fdbeat recv": it checks the flags and reads the keys before
// it takes the terminal or opens a socket, then runs the receiver and
// prints its counts.
func cmdRecv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseRecvFlags(args, stderr)
	if err != nil {
		return err
	}
	c := f.cfg
	if len(f.keys) > 0 {
		if c.Keys, err = wire.NewKeyring(f.keys[0], f.keys[1:]...); err != nil {
			return fmt.Errorf("recv: keys: %w", err)
		}
	}
	log := slog.New(slog.NewTextHandler(c.useTerminal(stdout, stderr, f.plain), &slog.HandlerOptions{Level: f.level}))
	if c.Keys != nil && f.keyFile != "" && len(f.keyHex) == 0 {
		reloadKeysOnHUP(ctx, c.Keys, f.keyFile, log)
	}
	st, err := runRecv(ctx, c, log)
	if !st.Started {
		return err
	}
	printRecvCounts(stdout, st)
	return err
}

// parseRecvFlags parses and checks the flags of "fdbeat recv", and reads
// its keys.
func parseRecvFlags(args []string, stderr io.Writer) (*recvFlags, error) {
	fs := pflag.NewFlagSet("fdbeat recv", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	f := new(recvFlags)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: fdbeat recv [flags]\n\nMonitors heartbeat senders with several detectors and records a trace.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nExample:\n  fdbeat recv --listen 127.0.0.1:7946 --out traces/my-net.fdk.gz\n")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("recv: unexpected arguments %q", fs.Args())
	}
	// An empty value given on purpose (--out "$FILE" with FILE unset) is
	// refused: --out "" would record nothing, --listen "" listen on every
	// interface at a random port.
	for _, name := range []string{"out", "listen"} {
		if fl := fs.Lookup(name); fl.Changed && fl.Value.String() == "" {
			return nil, fmt.Errorf("recv: --%s: empty value (omit the flag for its default)", name)
		}
	}
	c := &f.cfg
	c.IgnoreHostLateness = !f.hostLate
	if !fs.Changed("phi-min-std") {
		// The live default (docs/experiments.md, “Host lateness on a
		// loaded loopback host”): a floor below the host's own jitter
		// counts the host's lateness against the sender.
		c.PhiMinStd = c.Interval / defaultPhiMinStdDivisor
	}
	for _, t := range c.Timeouts {
		if t <= 0 {
			return nil, fmt.Errorf("--timeouts %v: every timeout must be positive", t)
		}
	}
	for _, th := range c.Phis {
		// phi.NormalConfig takes 0 as "the default threshold (8)".
		if !(th > 0) || math.IsInf(th, 1) {
			return nil, fmt.Errorf("--phi %v: every threshold must be finite and positive", th)
		}
	}
	var err error
	if f.level, err = parseLevel(f.logLevel); err != nil {
		return nil, err
	}
	if f.keys, err = loadKeys(fs, f.keyHex, f.keyFile); err != nil {
		return nil, err
	}
	return f, nil
}

// register defines the flags of "fdbeat recv" on fs, writing into f.
func (f *recvFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.cfg.Listen, "listen", "127.0.0.1:7946", "UDP address to listen on")
	fs.StringVar(&f.cfg.Out, "out", "", "record heartbeats to this fdkit trace file (.gz or .xz compresses)")
	fs.BoolVar(&f.cfg.Force, "force", false, "let --out overwrite an existing non-empty file (without it an earlier recording is refused)")
	flagcheck.Var(fs, &f.cfg.Interval, "interval", "", 100*time.Millisecond, 1, time.Hour, "a positive duration up to 1h", "nominal heartbeat interval Δ (trace header; φ bootstrap)")
	fs.DurationSliceVar(&f.cfg.Timeouts, "timeouts", []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second}, "fixed-timeout detectors")
	fs.Float64SliceVar(&f.cfg.Phis, "phi", []float64{8, 12}, "thresholds of the normal-model φ detectors")
	flagcheck.Var(fs, &f.cfg.PhiWindow, "phi-window", "", 100, 1, maxPhiWindow, fmt.Sprintf("a size from 1 to %d (each sender keeps that many samples per φ detector)", maxPhiWindow), "φ window size (inter-arrival samples)")
	flagcheck.Var(fs, &f.cfg.PhiMinStd, "phi-min-std", "", 0, 0, time.Hour, "a duration from 0 to 1h (0: 1% of the mean interval)", "φ minimum standard deviation σ_min (default --interval/10, Akka's ratio; 0: the phi package's default, 1% of the mean interval)")
	fs.BoolVar(&f.hostLate, "host-lateness", true, "wait the host's own measured lateness (timer, GC and scheduling delays of the last 10 s, at most 5 s) past τ before convicting a sender; false: transitions are exactly the mistakes replay finds on the trace")
	fs.Func("detector", "a further detector in the textual form of docs/detectors.md, e.g. 'phi-akka(threshold=10, pause=3s)' or a preset ("+presetNames()+"); repeatable", func(v string) error {
		d, err := specDetector(v)
		if err != nil {
			return err
		}
		f.cfg.Detectors = append(f.cfg.Detectors, d)
		return nil
	})
	flagcheck.Var(fs, &f.cfg.MaxSenders, "max-senders", "", defaultMaxSenders, 1, maxSenders, fmt.Sprintf("a number of senders from 1 to %d", maxSenders), "most senders tracked; a new sender beyond them displaces the one on probation (fewer than 10 heartbeats) heard from least recently, or is ignored and counted when none is")
	flagcheck.Var(fs, &f.cfg.Sweep, "sweep", "", 10*time.Millisecond, time.Microsecond, monitor.DefaultPauseLimit-time.Nanosecond, fmt.Sprintf("a duration from 1µs to below the local-pause limit %v (sweeps that far apart would each look like a local pause)", monitor.DefaultPauseLimit), "how often the detectors are checked when no heartbeat comes")
	addKeyFlags(fs, &f.keyHex, &f.keyFile, "then accept only heartbeats signed with one of them (SIGHUP reloads --key-file)")
	fs.Uint64Var(&f.cfg.MaxSeqJump, "max-seq-jump", defaultMaxSeqJump, "a larger forward jump of a sender's sequence number needs a second heartbeat, from the same address at a plausible interval, to confirm it")
	flagcheck.Var(fs, &f.cfg.MaxIncarnationAhead, "max-incarnation-ahead", "", defaultMaxIncarnationAhead, 0, 24*time.Hour, "a duration from 0 to 24h", "refuse outright a heartbeat whose incarnation is further ahead of this host's clock (fdbeat send's incarnation is its start time in Unix ns); allows for clock skew")
	fs.Uint64Var(&f.cfg.MaxIncarnationJump, "max-incarnation-jump", defaultMaxIncarnationJump, "a larger forward jump of a sender's incarnation needs a second heartbeat, from the same address at a plausible interval, to confirm it (default: a day in ns, since fdbeat send's incarnation is its start time in Unix ns)")
	flagcheck.Var(fs, &f.cfg.EvictAfter, "evict-after", "", defaultEvictAfter, 0, math.MaxInt64, "a duration ≥ 0 (0: never)", "forget a sender silent for longer than this; 0 = never")
	flagcheck.Var(fs, &f.cfg.TableSenders, "table-senders", "", defaultTableSenders, 0, maxTableSenders, fmt.Sprintf("a number of senders from 0 to %d", maxTableSenders), "the table shows this many senders, those with the most heartbeats, and counts the rest")
	flagcheck.Var(fs, &f.cfg.Refresh, "refresh", "", time.Second, 0, time.Hour, "a duration from 0 (no table) to 1h", "table refresh period; 0 = no table")
	fs.BoolVar(&f.plain, "plain", false, "print periodic lines instead of redrawing the table, even on a terminal")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
}

// useTerminal sends the table to stdout, redrawn in place when stdout is
// a terminal (unless plain), and returns where the log goes: stderr, or
// above the table when stderr is the same terminal.
func (c *recvConfig) useTerminal(stdout, stderr io.Writer, plain bool) io.Writer {
	c.Table = stdout
	f, ok := stdout.(*os.File)
	if !ok || plain || !term.IsTerminal(int(f.Fd())) {
		return stderr
	}
	c.Terminal = true
	ef, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(ef.Fd())) {
		return stderr
	}
	// The log shares the terminal: it goes above the table.
	fd := int(f.Fd())
	c.display = newLiveRegion(stdout, stderr, func() (int, int, bool) {
		w, h, err := term.GetSize(fd)
		return w, h, err == nil
	})
	return c.display
}

// printRecvCounts prints what the receiver saw, recorded and refused.
func printRecvCounts(stdout io.Writer, st recvStats) {
	fmt.Fprintf(stdout, "received %d packets (%d bad, %d from old incarnations, %d copies not recorded), recorded %d heartbeats\n",
		st.Packets, st.Bad, st.Stale, st.Duplicates, st.Recorded)
	l := st.Lateness
	fmt.Fprintf(stdout, "host lateness (the margin the detectors waited past τ, at most %v): timer %v, GC pause %v, other pause %v, scheduling %v at most; %d late heartbeats excused\n",
		l.Cap, l.Sources[lateness.Timer].Max, l.Sources[lateness.GCPause].Max, l.Sources[lateness.OtherPause].Max, l.Sources[lateness.Scheduling].Max, st.Excused)
	if st.NoTraceID > 0 {
		fmt.Fprintf(stdout, "not recorded: %d heartbeats of senders that restarted more than 16 times while tracked (their trace sender ids were used up)\n", st.NoTraceID)
	}
	fmt.Fprintf(stdout, "refused: %d unauthenticated, %d failed authentication, %d incarnations ahead of the clock, %d unconfirmed jumps (%d confirmed; %d from another address, %d at an implausible interval), %d from senders beyond --max-senders; %d senders evicted, %d on probation displaced, %d followed again in an older incarnation; kernel receive drops: %s\n",
		st.Unauthenticated, st.AuthFailed, st.AheadOfClock, st.Implausible, st.Confirmed, st.OtherSource, st.BadInterval, st.Refused, st.Evicted, st.Displaced, st.Reverted, dropsString(st))
}
