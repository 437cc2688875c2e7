// Command fdgen writes synthetic heartbeat traces in fdkit's trace format,
// made by trace's generator from a named preset and/or flags, deterministic
// for a seed. Records are generated and written one at a time
// (trace.NewMergedGenerator): memory does not grow with the trace's length,
// only with --senders (about 1.3 KB each, at most 100,000).
//
// Usage:
//
//	fdgen [flags]
//
// Examples:
//
//	fdgen --list                                   # the presets
//	fdgen --preset jitter --seed 1 -o jitter.fdkit.gz
//	fdgen --preset wan --duration 10m -o wan.fdkit.xz
//	fdgen --preset stable --pause 20s:600ms --crash 50s -o -
//	fdgen --preset jitter --senders 9 -o nine.fdkit.gz  # p0..p8
//	fdgen --interval 1s --delay lognormal --delay-mean 30ms --delay-sd 20ms \
//	      --loss 0.01 --loss-burst 5 --duration 1h -o my.fdkit.gz
//
// Flags given explicitly override the preset's values; a value a flag
// cannot mean (NaN, Inf, out of range, a trace over 10^8 heartbeats, more
// than 100,000 senders) is an error naming the flag, never replaced by a
// default. The output is
// compressed according to --compress, by default from the output name's
// extension (.gz gzip, .xz xz, else none). It is written under a temporary
// name and renamed when complete; SIGINT, SIGTERM or SIGHUP removes the
// partial file and exits 130, 143 or 129. A heartbeat whose instants overflow time.Duration
// (--receiver-start or delays near the limit) fails the run when it is
// reached: with -o nothing is left, on standard output what was written
// before it is. The header records the interval,
// the preset and the seed, and a comment line holds the command line.
package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fdkit/fdkit/internal/flagcheck"
	"github.com/fdkit/fdkit/internal/outfile"
	"github.com/fdkit/fdkit/trace"
)

func main() {
	// SIGINT, SIGTERM or SIGHUP: stop, remove the partial output, exit 130,
	// 143 or 129.
	stop := outfile.HandleSignals("fdgen", os.Stderr)
	defer stop()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if err != pflag.ErrHelp {
			fmt.Fprintln(os.Stderr, "fdgen:", err)
		}
		os.Exit(2)
	}
}

// genFlags holds fdgen's flags once parsed.
type genFlags struct {
	fs                                 *pflag.FlagSet
	list                               bool
	preset, out, compress, sender      string
	delayDist                          string
	seed                               uint64
	pauses, outages                    []string
	recvStart                          time.Duration
	senders                            int
	interval, duration, jitter, crash  time.Duration
	delayBase, delayMean, delaySD      time.Duration
	delayAlpha, loss, lossBurst, drift float64
}

// newFlags declares fdgen's flags on a new flag set writing to stderr.
func newFlags(stderr io.Writer) *genFlags {
	fs := pflag.NewFlagSet("fdgen", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	g := &genFlags{fs: fs}
	fs.BoolVar(&g.list, "list", false, "list the presets and exit")
	fs.StringVar(&g.preset, "preset", "", "start from this preset (see --list); empty: trace.GenConfig defaults")
	fs.Uint64Var(&g.seed, "seed", 1, "random seed (trace.NewRand)")
	fs.StringVarP(&g.out, "out", "o", "-", "output file, - for standard output; written under a temporary name and renamed when complete")
	fs.StringVar(&g.compress, "compress", "auto", "none, gzip, xz, or auto (from the output name's extension)")
	fs.StringVar(&g.sender, "sender", "", "sender id (default \"p\"); with --senders N > 1 the ids are this followed by 0..N-1")
	fs.StringVar(&g.delayDist, "delay", "", "one-way delay distribution: constant, normal, lognormal, pareto")
	fs.StringArrayVar(&g.pauses, "pause", nil, "sender pause AT:LENGTH, e.g. 30s:600ms (repeatable)")
	fs.StringArrayVar(&g.outages, "outage", nil, "network outage AT:LENGTH: everything sent in it is lost (repeatable)")
	fs.DurationVar(&g.recvStart, "receiver-start", 0, "receiver clock reading at instant 0")
	const anyDur = "a duration ≥ 0"
	flagcheck.Var(fs, &g.senders, "senders", "", 1, 1, maxSenders, fmt.Sprintf("a count from 1 to %d (the streams are generated side by side, about 1.3 KB each)", maxSenders), "number of senders, each an independent stream with the same model, merged in arrival order")
	flagcheck.Var(fs, &g.interval, "interval", "", 0, 1, math.MaxInt64, "a positive duration", "nominal heartbeat interval Δ (default 100ms)")
	flagcheck.Var(fs, &g.duration, "duration", "", 0, 1, math.MaxInt64, "a positive duration", "length of the trace, heartbeats scheduled in [0, duration) (default 1m)")
	flagcheck.Var(fs, &g.jitter, "jitter", "", 0, 0, math.MaxInt64, anyDur, "s.d. of the sender's send instants around k·Δ")
	flagcheck.Var(fs, &g.delayBase, "delay-base", "", 0, 0, math.MaxInt64, anyDur, "constant part of the delay")
	flagcheck.Var(fs, &g.delayMean, "delay-mean", "", 0, 0, math.MaxInt64, anyDur, "mean of the random part of the delay")
	flagcheck.Var(fs, &g.delaySD, "delay-sd", "", 0, 0, math.MaxInt64, anyDur, "s.d. of the random part (normal, lognormal)")
	flagcheck.Var(fs, &g.delayAlpha, "delay-alpha", "", 0, math.Nextafter(1, 2), math.MaxFloat64, "a finite shape > 1 (so that the mean exists)", "Pareto shape (> 1)")
	flagcheck.Var(fs, &g.loss, "loss", "", 0, 0, 1, "a fraction in [0, 1]", "loss rate (fraction 0..1): Bernoulli, or Gilbert-Elliott with --loss-burst > 1")
	flagcheck.Var(fs, &g.lossBurst, "loss-burst", "", 1, 1, math.MaxFloat64, "a finite mean burst length ≥ 1 heartbeat", "mean loss burst length in heartbeats (Gilbert-Elliott when > 1)")
	flagcheck.Var(fs, &g.crash, "crash", "", 0, 0, math.MaxInt64, "a duration ≥ 0 (0: no crash)", "crash time: nothing is sent at or after it (0: no crash)")
	flagcheck.Var(fs, &g.drift, "drift-ppm", "", 0, -999_999, 999_999, "a drift in parts per million between -999999 and 999999", "receiver clock drift in parts per million")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: fdgen [flags]\n\nWrites a synthetic heartbeat trace in fdkit format (see package trace).\n\nFlags:")
		fs.PrintDefaults()
	}
	return g
}

func run(args []string, stdout, stderr io.Writer) error {
	g := newFlags(stderr)
	if err := g.fs.Parse(args); err != nil {
		return err
	}
	if g.fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", g.fs.Args())
	}
	if g.list {
		for _, n := range trace.Presets() {
			p, _ := trace.LookupPreset(n)
			fmt.Fprintf(stdout, "%-9s %s\n", n, p.Description)
		}
		return nil
	}
	cfg, meta, err := g.config()
	if err != nil {
		return err
	}
	if err := validate(cfg, g.senders); err != nil {
		return err
	}
	comp, err := compression(g.compress, g.out)
	if err != nil {
		return err
	}
	gen, err := trace.NewMergedGenerator(senderConfigs(cfg, g.senders), g.seed)
	if err != nil {
		return inFlightHint(err)
	}
	h := trace.Header{Version: 1, Interval: cmp.Or(cfg.Interval, trace.DefaultGenInterval), Meta: meta,
		Comments: []string{"fdgen " + strings.Join(args, " ")}}
	return writeTrace(g.out, stdout, h, comp, gen)
}

// config starts from --preset and applies every flag given explicitly. It
// returns the generator's configuration and the header's metadata.
func (g *genFlags) config() (trace.GenConfig, map[string]string, error) {
	var cfg trace.GenConfig
	meta := map[string]string{"seed": strconv.FormatUint(g.seed, 10), "generator": "fdgen"}
	if g.preset != "" {
		p, err := trace.LookupPreset(g.preset)
		if err != nil {
			return cfg, nil, err
		}
		cfg = p.Config
		meta["preset"] = p.Name
	}
	set := g.fs.Changed
	setIf := func(name string, apply func()) {
		if set(name) {
			apply()
		}
	}
	if set("sender") && g.sender == "" {
		return cfg, nil, fmt.Errorf(`--sender "": want a sender id (omit the flag for %q)`, trace.DefaultGenSender)
	}
	setIf("sender", func() { cfg.Sender = g.sender })
	setIf("interval", func() { cfg.Interval = g.interval })
	setIf("duration", func() { cfg.Duration = g.duration })
	setIf("jitter", func() { cfg.Jitter = g.jitter })
	setIf("delay-base", func() { cfg.Delay.Base = g.delayBase })
	setIf("delay-mean", func() { cfg.Delay.Mean = g.delayMean })
	setIf("delay-sd", func() { cfg.Delay.SD = g.delaySD })
	setIf("delay-alpha", func() { cfg.Delay.Alpha = g.delayAlpha })
	setIf("crash", func() { cfg.CrashAt = g.crash })
	setIf("drift-ppm", func() { cfg.DriftPPM = g.drift })
	setIf("receiver-start", func() { cfg.ReceiverStart = g.recvStart })
	var err error
	if set("delay") {
		if cfg.Delay.Dist, err = trace.ParseDelayDist(g.delayDist); err != nil {
			return cfg, nil, err
		}
	}
	if cfg.Loss, err = g.lossModel(cfg.Loss); err != nil {
		return cfg, nil, err
	}
	if set("pause") {
		if cfg.Pauses, err = parsePeriods("pause", g.pauses); err != nil {
			return cfg, nil, err
		}
	}
	if set("outage") {
		if cfg.Outages, err = parsePeriods("outage", g.outages); err != nil {
			return cfg, nil, err
		}
	}
	return cfg, meta, nil
}

// lossModel returns the loss model --loss and --loss-burst give, or preset
// when neither is given.
func (g *genFlags) lossModel(preset trace.Loss) (trace.Loss, error) {
	if g.fs.Changed("loss-burst") && !g.fs.Changed("loss") {
		return preset, fmt.Errorf("--loss-burst %v needs --loss (the loss rate)", g.lossBurst)
	}
	switch {
	case !g.fs.Changed("loss"):
		return preset, nil
	case g.loss == 0:
		return trace.Loss{}, nil
	case g.lossBurst > 1:
		if !(g.loss < 1) {
			return preset, fmt.Errorf("--loss %v: want a fraction below 1 with --loss-burst", g.loss)
		}
		return trace.GilbertElliott(g.loss, g.lossBurst), nil
	}
	return trace.Loss{Model: trace.LossBernoulli, P: g.loss}, nil
}

// validate says in flags what trace.GenConfig would say in its field names.
func validate(cfg trace.GenConfig, senders int) error {
	if err := checkSize(cfg, senders); err != nil {
		return err
	}
	if ival := cmp.Or(cfg.Interval, trace.DefaultGenInterval); cfg.Jitter > ival {
		return fmt.Errorf("--jitter %v is larger than --interval %v: send instants are truncated to ±interval/2 so that sends stay ordered; want --jitter at most --interval", cfg.Jitter, ival)
	}
	end := cmp.Or(cfg.Duration, trace.DefaultGenDuration)
	if cfg.CrashAt > 0 {
		end = min(end, cfg.CrashAt)
	}
	if float64(cfg.ReceiverStart)+
		(float64(end)+float64(cfg.Delay.Base)+float64(cfg.Delay.Mean))*(1+cfg.DriftPPM*1e-6) >= math.MaxInt64 {
		return fmt.Errorf("--receiver-start %v + --duration %v + --delay-base and --delay-mean %v (× 1 + --drift-ppm %v/10^6): the last arrivals overflow the ±292 years of a time.Duration in ns",
			cfg.ReceiverStart, end, cfg.Delay.Base+cfg.Delay.Mean, cfg.DriftPPM)
	}
	switch d := cfg.Delay; {
	case d.Dist == trace.DelayPareto && !(d.Alpha > 1):
		return fmt.Errorf("--delay pareto needs --delay-alpha > 1 (got %v)", d.Alpha)
	case d.Dist == trace.DelayLogNormal && d.Mean == 0 && d.SD > 0:
		return errors.New("--delay lognormal needs a positive --delay-mean")
	}
	return nil
}

// senderConfigs gives each of n senders its own copy of cfg; with n > 1 the
// ids are the sender's id followed by 0..n-1. The streams are drawn in turn
// from one source and merged by arrival time, record by record
// (trace.NewMergedGenerator), so memory does not grow with the trace.
func senderConfigs(cfg trace.GenConfig, n int) []trace.GenConfig {
	cfgs := make([]trace.GenConfig, n)
	for i := range cfgs {
		c := cfg
		if n > 1 {
			c.Sender = cmp.Or(c.Sender, trace.DefaultGenSender) + strconv.Itoa(i)
		}
		cfgs[i] = c
	}
	return cfgs
}

// writeTrace writes gen's records to out ("-": stdout). A file is written
// under a temporary name beside it and renamed when complete, so an
// interrupted or failed run leaves no partial trace.
func writeTrace(out string, stdout io.Writer, h trace.Header, comp trace.Compression, gen *trace.MergedGenerator) error {
	if out == "-" {
		return copyRecords(stdout, h, comp, gen)
	}
	st, err := outfile.New(filepath.Dir(out), "fdgen")
	if err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	defer st.Abort()
	f, err := st.Create(filepath.Base(out))
	if errors.Is(err, outfile.ErrNotRegular) {
		return fmt.Errorf("--out %s: %w (or - for standard output)", out, err)
	}
	if err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	err = copyRecords(f, h, comp, gen)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	_, err = st.Commit(nil)
	return err
}

// copyRecords writes the header and every record of gen to w.
func copyRecords(w io.Writer, h trace.Header, comp trace.Compression, gen *trace.MergedGenerator) error {
	tw, err := trace.NewWriter(w, h, comp)
	if err != nil {
		return err
	}
	for {
		r, ok, err := gen.Next()
		if err := inFlightHint(err); err != nil {
			return err
		}
		if !ok {
			return tw.Close()
		}
		if err := tw.Write(r); err != nil {
			return err
		}
	}
}

// maxSenders bounds --senders: the streams are generated side by side, each
// holding a trace.Generator (about 1.3 KB: 1,000,000 senders peaked at
// 1.27 GB RSS).
const maxSenders = 100_000

// checkSize refuses a trace over trace.MaxGenHeartbeats (about 4 GB of
// text), which bounds one stream, not senders × streams.
func checkSize(cfg trace.GenConfig, senders int) error {
	ival, dur := cfg.Interval, cfg.Duration
	if ival == 0 {
		ival = trace.DefaultGenInterval
	}
	if dur == 0 {
		dur = trace.DefaultGenDuration
	}
	per := dur / ival
	if per > trace.MaxGenHeartbeats || int64(senders)*int64(per) > trace.MaxGenHeartbeats {
		return fmt.Errorf("--senders %d × (--duration %v / --interval %v) = %d heartbeats: at most %d",
			senders, dur, ival, int64(senders)*int64(min(per, trace.MaxGenHeartbeats+1)), trace.MaxGenHeartbeats)
	}
	return nil
}

// parsePeriods parses AT:LENGTH values.
func parsePeriods(flag string, vals []string) ([]trace.Period, error) {
	var ws []trace.Period
	for _, v := range vals {
		a, l, ok := strings.Cut(v, ":")
		at, err1 := time.ParseDuration(a)
		length, err2 := time.ParseDuration(l)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("--%s %q: want AT:LENGTH as Go durations, e.g. 30s:600ms", flag, v)
		}
		if at < 0 || length <= 0 || length > math.MaxInt64-at {
			hint := "for a sender that never resumes, use --crash"
			if flag == "outage" {
				hint = "for a network that never comes back, use --crash: nothing is received after it either"
			}
			return nil, fmt.Errorf("--%s %q: want AT ≥ 0 and LENGTH > 0 (%s)", flag, v, hint)
		}
		ws = append(ws, trace.Period{At: at, Length: length})
	}
	return ws, nil
}

// compression picks the output compression.
func compression(name, out string) (trace.Compression, error) {
	switch name {
	case "none":
		return trace.NoCompression, nil
	case "gzip":
		return trace.Gzip, nil
	case "xz":
		return trace.XZ, nil
	case "auto":
		return trace.CompressionFor(out), nil
	}
	return 0, fmt.Errorf("--compress %q: want none, gzip, xz or auto", name)
}

// inFlightHint adds to a generator's ErrTooManyInFlight the flags that
// set how many heartbeats are in flight.
func inFlightHint(err error) error {
	if errors.Is(err, trace.ErrTooManyInFlight) {
		return fmt.Errorf("%w (fdgen holds each heartbeat until none sent later can arrive first, at most %d over all --senders: shorten --delay-base, --delay-mean or --delay-sd, lengthen --interval, or give fewer --senders)", err, trace.MaxInFlight)
	}
	return err
}
