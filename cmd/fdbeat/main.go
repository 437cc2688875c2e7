// Command fdbeat sends, watches and records UDP heartbeats.
//
//	fdbeat send [flags] HOST:PORT...   send heartbeats, optionally impaired
//	fdbeat recv [flags]                monitor senders with five detectors, record a trace
//
// "fdbeat send" sends one small binary packet (packet.go: magic, version,
// incarnation, sequence number, send time, sender name) every --interval to
// each address. Since this machine may have no kernel netem, it can impair
// its own sending path in user space: --delay/--jitter/--delay-dist add a
// delay drawn from a distribution, --loss/--loss-burst drop heartbeats
// (independently or in Gilbert bursts), --pause stops sending for a while at
// given times (like SIGSTOP/SIGCONT), and --duration ends the run like a
// crash.
//
// "fdbeat recv" listens, feeds every heartbeat to the [Field-vi] detectors
// (docs/algorithms.md, “Published field measurements”: fixed timeouts 300 ms, 1
// s, 3 s and normal-model φ with thresholds 8 and 12, window 100), logs each
// trusted/suspected transition, shows a table of each detector's level and
// status per sender (redrawn in place on a terminal, periodic lines otherwise)
// and records every heartbeat to an fdkit-format trace (--out, compressed by
// the .gz or .xz suffix) that "fdreplay" can analyse. Its detectors wait the
// host's own measured lateness past a freshness point before convicting
// (package lateness), so that a busy receiver does not blame its senders;
// with --host-lateness=false its transitions are exactly the mistakes replay
// finds on that trace. It flushes the trace every 500 ms, so
// a crash loses at most the last second (read the cut file with --lenient).
//
// Against forged heartbeats, send --key/--key-file signs each packet with
// HMAC-SHA256 and recv with keys accepts only signed ones; without keys, an
// incarnation more than --max-incarnation-ahead ahead of the receiver's
// clock is refused, and a jump of a sender's incarnation or sequence number
// beyond --max-incarnation-jump/--max-seq-jump needs a second heartbeat from
// the same address at a plausible interval to confirm it. Against floods of
// forged names, recv rate-limits its warnings, lets a new sender displace
// one still on probation (fewer than 10 heartbeats) in a full table, evicts
// senders silent for --evict-after, shows only --table-senders senders, and
// counts the kernel's receive drops on Linux (docs/live.md, which says what
// plain mode cannot stop).
//
// Both stop cleanly on SIGINT or SIGTERM; recv flushes the trace. A second
// signal ends the process at once.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fdkit/fdkit/internal/flagcheck"
	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/swim/wire"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

const usage = `fdbeat sends, watches and records UDP heartbeats.

Usage:
  fdbeat send [flags] HOST:PORT...
  fdbeat recv [flags]

Run "fdbeat send --help" or "fdbeat recv --help" for the flags.
`

func main() {
	// The first signal stops the command cleanly (send waits for delayed
	// heartbeats, recv flushes its trace); a second one ends the process at
	// once with status 130. Both go through one channel, so the second is
	// never swallowed however the goroutines are scheduled.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sigs
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "fdbeat: aborted by a second signal")
		os.Exit(130)
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// run executes one fdbeat command and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "send":
		err = cmdSend(ctx, args[1:], stdout, stderr)
	case "recv":
		err = cmdRecv(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "fdbeat: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "fdbeat:", err)
		return 1
	}
	return 0
}

// maxPhiWindow bounds --phi-window: every sender gets a window per φ
// detector, up to --max-senders of them.
const maxPhiWindow = 100_000

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// addKeyFlags adds --key and --key-file, the keys of authenticated
// heartbeats, in the format of fdswim's (wire.ParseKey, wire.ReadKeyFile).
func addKeyFlags(fs *pflag.FlagSet, keys *[]string, keyFile *string, what string) {
	fs.StringSliceVar(keys, "key", nil, "HMAC-SHA256 key in hex, 32, 48 or 64 digits (repeatable); "+what)
	fs.StringVar(keyFile, "key-file", "", "file of hex keys, one per line, # comments allowed (first key first); "+what)
}

// loadKeys returns the keys of --key and --key-file, in that order; nil
// when neither is given. A flag given with an empty value (--key "$KEY"
// with KEY unset) is an error: it would otherwise send unsigned heartbeats,
// or accept unauthenticated ones, as if no key had been asked for.
func loadKeys(fs *pflag.FlagSet, keys []string, keyFile string) ([][]byte, error) {
	if fs.Changed("key") && len(keys) == 0 {
		return nil, errors.New("--key: empty; want a key in hex, 32, 48 or 64 digits")
	}
	if fs.Changed("key-file") && keyFile == "" {
		return nil, errors.New("--key-file: empty; want the path of a file of hex keys")
	}
	var out [][]byte
	for i, h := range keys {
		k, err := wire.ParseKey(h)
		if err != nil {
			return nil, fmt.Errorf("--key #%d: %w", i+1, err)
		}
		out = append(out, k)
	}
	if keyFile != "" {
		ks, err := wire.ReadKeyFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("--key-file %w", err)
		}
		out = append(out, ks...)
	}
	return out, nil
}

// reloadKeysOnHUP replaces the keyring with the key file's keys on every
// SIGHUP until ctx ends, as fdswim agent does: rotate by adding the new key
// second on every receiver and reloading, then switching the senders.
func reloadKeysOnHUP(ctx context.Context, kr *wire.Keyring, path string, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				n, err := kr.ReloadFile(path)
				if err != nil {
					log.Error("SIGHUP: keys not reloaded, the old ones stay", "key_file", path, "err", err)
					continue
				}
				log.Info("SIGHUP: keys reloaded", "key_file", path, "keys", n)
			}
		}
	}()
}

func cmdSend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("fdbeat send", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var c sendConfig
	var pauses, logLevel, keyFile string
	var keys []string
	flagcheck.Var(fs, &c.Interval, "interval", "", 100*time.Millisecond, 1, time.Hour, "a positive duration up to 1h", "heartbeat interval Δ")
	fs.StringVar(&c.Name, "name", "", "sender name in the packets (default: the receiver uses the source address)")
	fs.Uint64Var(&c.Incarnation, "incarnation", 0, "incarnation number (default: start time in Unix ns, new on every start)")
	flagcheck.Var(fs, &c.Duration, "duration", "", 0, 0, math.MaxInt64, "a duration ≥ 0 (0: until SIGINT/SIGTERM)", "stop (as if crashed) after this long; 0 = until SIGINT/SIGTERM")
	fs.Uint64Var(&c.Count, "count", 0, "stop after this many heartbeats; 0 = no limit")
	fs.StringVar(&c.DelayDist, "delay-dist", "normal", "added delay distribution: "+strings.Join(delayDists, ", "))
	flagcheck.Var(fs, &c.Delay, "delay", "", 0, 0, time.Hour, "a duration from 0 to 1h", "mean added delay")
	flagcheck.Var(fs, &c.Jitter, "jitter", "", 0, 0, time.Hour, "a duration from 0 to 1h", "delay spread: standard deviation (normal) or half-width (uniform)")
	flagcheck.Var(fs, &c.Loss, "loss", "", 0, 0, math.Nextafter(1, 0), "a fraction in [0, 1)", "fraction of heartbeats dropped, in [0, 1)")
	flagcheck.Var(fs, &c.LossBurst, "loss-burst", "", 0, 0, math.MaxFloat64, "0 (independent losses) or a finite mean burst length ≥ 1", "mean loss burst length in heartbeats (Gilbert model); 0 = independent losses")
	fs.StringVar(&pauses, "pause", "", "pauses AT:DURATION[,...] after the start, e.g. 20s:600ms,40s:600ms")
	fs.Uint64Var(&c.Seed, "seed", 0, "random seed of the impairments; 0 = random")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	addKeyFlags(fs, &keys, &keyFile, "sign every heartbeat with the first")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: fdbeat send [flags] HOST:PORT...\n\nSends UDP heartbeats, optionally impaired in user space.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nExample (the [Field-vi] impaired path):\n  fdbeat send --name a --delay 80ms --jitter 60ms --loss 0.15 127.0.0.1:7946\n")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.LossBurst > 0 && c.LossBurst < 1 {
		return fmt.Errorf("--loss-burst %v: want 0 (independent losses) or a mean burst length ≥ 1", c.LossBurst)
	}
	c.Targets = fs.Args()
	if len(c.Targets) == 0 {
		fs.Usage()
		return errors.New("send: give at least one HOST:PORT")
	}
	var err error
	if c.Pauses, err = parsePauses(pauses); err != nil {
		return fmt.Errorf("--pause: %w", err)
	}
	ks, err := loadKeys(fs, keys, keyFile)
	if err != nil {
		return err
	}
	if len(ks) > 0 {
		c.Key = ks[0]
	}
	log, err := newLogger(stderr, logLevel)
	if err != nil {
		return err
	}
	st, err := runSend(ctx, c, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sent %d heartbeats to %d target(s); dropped %d (loss model), %d pauses, %d stalls of the sender, %d write errors\n",
		st.Sent, len(c.Targets), st.Dropped, st.Pauses, st.Stalls, st.Errors)
	return nil
}

func cmdRecv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("fdbeat recv", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var c recvConfig
	var logLevel, keyFile string
	var keys []string
	var plain bool
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:7946", "UDP address to listen on")
	fs.StringVar(&c.Out, "out", "", "record heartbeats to this fdkit trace file (.gz or .xz compresses)")
	fs.BoolVar(&c.Force, "force", false, "let --out overwrite an existing non-empty file (without it an earlier recording is refused)")
	flagcheck.Var(fs, &c.Interval, "interval", "", 100*time.Millisecond, 1, time.Hour, "a positive duration up to 1h", "nominal heartbeat interval Δ (trace header; φ bootstrap)")
	fs.DurationSliceVar(&c.Timeouts, "timeouts", []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second}, "fixed-timeout detectors")
	fs.Float64SliceVar(&c.Phis, "phi", []float64{8, 12}, "thresholds of the normal-model φ detectors")
	flagcheck.Var(fs, &c.PhiWindow, "phi-window", "", 100, 1, maxPhiWindow, fmt.Sprintf("a size from 1 to %d (each sender keeps that many samples per φ detector)", maxPhiWindow), "φ window size (inter-arrival samples)")
	flagcheck.Var(fs, &c.PhiMinStd, "phi-min-std", "", 0, 0, time.Hour, "a duration from 0 to 1h (0: 1% of the mean interval)", "φ minimum standard deviation σ_min (default --interval/10, Akka's ratio; 0: the phi package's default, 1% of the mean interval)")
	hostLate := fs.Bool("host-lateness", true, "wait the host's own measured lateness (timer, GC and scheduling delays of the last 10 s, at most 5 s) past τ before convicting a sender; false: transitions are exactly the mistakes replay finds on the trace")
	fs.Func("detector", "a further detector in the textual form of docs/detectors.md, e.g. 'phi-akka(threshold=10, pause=3s)' or a preset (akka, cassandra, scylla, hazelcast); repeatable", func(v string) error {
		d, err := specDetector(v)
		if err != nil {
			return err
		}
		c.Detectors = append(c.Detectors, d)
		return nil
	})
	flagcheck.Var(fs, &c.MaxSenders, "max-senders", "", defaultMaxSenders, 1, maxSenders, fmt.Sprintf("a number of senders from 1 to %d", maxSenders), "most senders tracked; a new sender beyond them displaces the one on probation (fewer than 10 heartbeats) heard from least recently, or is ignored and counted when none is")
	flagcheck.Var(fs, &c.Sweep, "sweep", "", 10*time.Millisecond, time.Microsecond, monitor.DefaultPauseLimit-time.Nanosecond, fmt.Sprintf("a duration from 1µs to below the local-pause limit %v (sweeps that far apart would each look like a local pause)", monitor.DefaultPauseLimit), "how often the detectors are checked when no heartbeat comes")
	addKeyFlags(fs, &keys, &keyFile, "then accept only heartbeats signed with one of them (SIGHUP reloads --key-file)")
	fs.Uint64Var(&c.MaxSeqJump, "max-seq-jump", defaultMaxSeqJump, "a larger forward jump of a sender's sequence number needs a second heartbeat, from the same address at a plausible interval, to confirm it")
	flagcheck.Var(fs, &c.MaxIncarnationAhead, "max-incarnation-ahead", "", defaultMaxIncarnationAhead, 0, 24*time.Hour, "a duration from 0 to 24h", "refuse outright a heartbeat whose incarnation is further ahead of this host's clock (fdbeat send's incarnation is its start time in Unix ns); allows for clock skew")
	fs.Uint64Var(&c.MaxIncarnationJump, "max-incarnation-jump", defaultMaxIncarnationJump, "a larger forward jump of a sender's incarnation needs a second heartbeat, from the same address at a plausible interval, to confirm it (default: a day in ns, since fdbeat send's incarnation is its start time in Unix ns)")
	flagcheck.Var(fs, &c.EvictAfter, "evict-after", "", defaultEvictAfter, 0, math.MaxInt64, "a duration ≥ 0 (0: never)", "forget a sender silent for longer than this; 0 = never")
	flagcheck.Var(fs, &c.TableSenders, "table-senders", "", defaultTableSenders, 0, maxTableSenders, fmt.Sprintf("a number of senders from 0 to %d", maxTableSenders), "the table shows this many senders, those with the most heartbeats, and counts the rest")
	flagcheck.Var(fs, &c.Refresh, "refresh", "", time.Second, 0, time.Hour, "a duration from 0 (no table) to 1h", "table refresh period; 0 = no table")
	fs.BoolVar(&plain, "plain", false, "print periodic lines instead of redrawing the table, even on a terminal")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: fdbeat recv [flags]\n\nMonitors heartbeat senders with several detectors and records a trace.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nExample:\n  fdbeat recv --listen 127.0.0.1:7946 --out traces/my-net.fdk.gz\n")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("recv: unexpected arguments %q", fs.Args())
	}
	c.IgnoreHostLateness = !*hostLate
	if !fs.Changed("phi-min-std") {
		// The live default (docs/experiments.md, “Host lateness on a
		// loaded loopback host”): a floor below the host's own jitter
		// counts the host's lateness against the sender.
		c.PhiMinStd = c.Interval / defaultPhiMinStdDivisor
	}
	for _, t := range c.Timeouts {
		if t <= 0 {
			return fmt.Errorf("--timeouts %v: every timeout must be positive", t)
		}
	}
	for _, th := range c.Phis {
		// phi.NormalConfig takes 0 as "the default threshold (8)".
		if !(th > 0) || math.IsInf(th, 1) {
			return fmt.Errorf("--phi %v: every threshold must be finite and positive", th)
		}
	}
	c.Table = stdout
	var logOut io.Writer = stderr
	if f, ok := stdout.(*os.File); ok && !plain && term.IsTerminal(int(f.Fd())) {
		c.Terminal = true
		if ef, ok := stderr.(*os.File); ok && term.IsTerminal(int(ef.Fd())) {
			// The log shares the terminal: it goes above the table.
			fd := int(f.Fd())
			c.display = newLiveRegion(stdout, stderr, func() (int, int, bool) {
				w, h, err := term.GetSize(fd)
				return w, h, err == nil
			})
			logOut = c.display
		}
	}
	log, err := newLogger(logOut, logLevel)
	if err != nil {
		return err
	}
	ks, err := loadKeys(fs, keys, keyFile)
	if err != nil {
		return err
	}
	if len(ks) > 0 {
		if c.Keys, err = wire.NewKeyring(ks[0], ks[1:]...); err != nil {
			return fmt.Errorf("recv: keys: %w", err)
		}
		if keyFile != "" && len(keys) == 0 {
			reloadKeysOnHUP(ctx, c.Keys, keyFile, log)
		}
	}
	st, err := runRecv(ctx, c, log)
	if !st.Started {
		return err
	}
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
	return err
}
