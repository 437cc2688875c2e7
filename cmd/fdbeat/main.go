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
	"github.com/fdkit/fdkit/swim/wire"
	"github.com/spf13/pflag"
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
	l, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// parseLevel parses --log-level.
func parseLevel(level string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return l, nil
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
		// wire.ParseKey's length error speaks of AES (fdswim's use); here
		// the key is an HMAC-SHA256 key of the same sizes.
		if n := len(strings.TrimSpace(h)); n != 32 && n != 48 && n != 64 {
			return nil, fmt.Errorf("--key #%d: %d hex digits; want 32, 48 or 64 (an HMAC-SHA256 key of 16, 24 or 32 bytes)", i+1, n)
		}
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
