package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/fdkit/fdkit/internal/flagcheck"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fdkit/fdkit/swim/sim"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/pflag"
)

func init() {
	subcommands["sim"] = subcommand{run: runSim, help: "run simulator scenarios (load, detect, kill, lifeguard, pause, restart, partition, baselines, compare, all)"}
}

// runSim is `fdswim sim [flags] scenario...`.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("fdswim sim", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	o := sim.ScenarioConfig{Context: ctx}
	var list bool
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed (same seed, same tables)")
	fs.BoolVar(&o.Quick, "quick", false, "smaller sizes and shorter runs")
	fs.Var(&intList{p: &o.Sizes, want: fmt.Sprintf("comma-separated group sizes, each an integer from 2 to %d", maxSimSize)}, "sizes", fmt.Sprintf("group sizes for load, detect, kill and pause, each 2..%d (default 8,16,...,512,1000; kill 8,16,32; pause 32)", maxSimSize))
	flagcheck.Var(fs, &o.Trials, "trials", "", 0, 1, maxTrials, fmt.Sprintf("a count from 1 to %d", maxTrials), "crashes per size for detect and kill (default 200; kill 100)")
	flagcheck.Var(fs, &o.Pause, "pause", "", 0, 1, maxSimDuration, fmt.Sprintf("a positive duration up to %v", maxSimDuration), "lifeguard: pause length D (default: 6s, 9s and 12s)")
	flagcheck.Var(fs, &o.Every, "every", "", 0, 1, maxSimDuration, fmt.Sprintf("a positive duration up to %v, longer than the pause", maxSimDuration), "lifeguard: pause interval I, longer than D (default 2·D)")
	fs.Var(&intList{p: &o.Counts, want: fmt.Sprintf("comma-separated numbers of paused members, each an integer from 0 to %d", lifeguardN)}, "counts", fmt.Sprintf("lifeguard: numbers C of paused members, each 0..%d (default 1,2,4,8,16)", lifeguardN))
	flagcheck.Var(fs, &o.Duration, "duration", "", 0, 1, maxSimDuration, fmt.Sprintf("a positive duration up to %v", maxSimDuration), "lifeguard: run length (default 10m)")
	flagcheck.Var(fs, &o.Alpha, "alpha", "", 0, 1, maxMult, fmt.Sprintf("a multiplier from 1 to %d", maxMult), "lifeguard: suspicion multiplier α (default 5)")
	flagcheck.Var(fs, &o.Beta, "beta", "", 0, 1, maxMult, fmt.Sprintf("a multiplier from 1 to %d", maxMult), "lifeguard: maximum timeout multiplier β (default 6)")
	fs.BoolVar(&list, "list", false, "list the scenarios and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fdswim sim [flags] scenario... (or all)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if err := checkSimFlags(fs, o); err != nil {
		return err
	}
	if list {
		for _, s := range sim.Scenarios() {
			fmt.Fprintf(stdout, "%-10s %s\n", s.Name, s.Doc)
		}
		return nil
	}
	names := fs.Args()
	if len(names) == 0 {
		fs.Usage()
		return errors.New("no scenario named")
	}
	var run []sim.Scenario
	for _, n := range names {
		if n == "all" {
			run = append(run, sim.Scenarios()...)
			continue
		}
		s, ok := sim.Lookup(n)
		if !ok {
			return fmt.Errorf("unknown scenario %q (try --list)", n)
		}
		run = append(run, s)
	}
	for _, s := range run {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		tables, err := runScenario(ctx, s, o)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, t := range tables {
			if err := printTable(stdout, t); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "(%s: %v wall time)\n\n", s.Name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// Bounds of the sim flags. A simulated group holds every member's view of
// every other (memory grows as N²) and runs take time in proportion to
// their length, trials and sizes.
const (
	maxSimSize     = 10_000
	maxTrials      = 100_000
	maxMult        = 1000
	maxSimDuration = 24 * time.Hour
	lifeguardN     = 128 // the lifeguard scenario's group size
)

// checkSimFlags checks what the flag values cannot check alone: the lists
// and --every against --pause, so that an invalid value is refused with its
// flag's name instead of becoming a default or a simulator error.
func checkSimFlags(fs *pflag.FlagSet, o sim.ScenarioConfig) error {
	if fs.Changed("sizes") && len(o.Sizes) == 0 {
		return errors.New("--sizes: give at least one group size")
	}
	for i, n := range o.Sizes {
		if n < 2 || n > maxSimSize {
			return fmt.Errorf("--sizes %d: each group size must be from 2 to %d", n, maxSimSize)
		}
		if slices.Contains(o.Sizes[:i], n) {
			return fmt.Errorf("--sizes %d: given twice (each size is run once)", n)
		}
	}
	if fs.Changed("counts") && len(o.Counts) == 0 {
		return errors.New("--counts: give at least one number of paused members")
	}
	for _, c := range o.Counts {
		if c < 0 || c > lifeguardN {
			return fmt.Errorf("--counts %d: each count must be from 0 to %d (the lifeguard group has %d members)", c, lifeguardN, lifeguardN)
		}
	}
	if o.Every > 0 {
		longest := 12 * time.Second // the default pauses are 6, 9 and 12 s
		if o.Pause > 0 {
			longest = o.Pause
		}
		if o.Every <= longest {
			return fmt.Errorf("--every %v: must be longer than the pause D = %v (give --pause to change D)", o.Every, longest)
		}
	}
	return nil
}

// runScenario runs s and returns at once when ctx is done (Ctrl-C): the
// scenario itself stops at its next check of o.Context.
func runScenario(ctx context.Context, s sim.Scenario, o sim.ScenarioConfig) ([]sim.Table, error) {
	type result struct {
		tables []sim.Table
		err    error
	}
	done := make(chan result, 1)
	go func() {
		t, err := s.Run(o)
		done <- result{t, err}
	}()
	select {
	case r := <-done:
		return r.tables, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func printTable(w io.Writer, t sim.Table) error {
	fmt.Fprintf(w, "%s\n", t.Title)
	tb := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
	)
	tb.Header(t.Header)
	for _, r := range t.Rows {
		if err := tb.Append(r); err != nil {
			return err
		}
	}
	if err := tb.Render(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(n))
	}
	return nil
}

// intList is a repeatable flag of comma-separated integers (the first use
// replaces the default, later ones append, as pflag's IntSlice) whose parse
// error says what the flag wants instead of strconv's words.
type intList struct {
	p    *[]int
	want string
	set  bool
}

func (l *intList) Set(s string) error {
	var v []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("want %s, got %q", l.want, f)
		}
		v = append(v, n)
	}
	if !l.set {
		*l.p, l.set = nil, true
	}
	*l.p = append(*l.p, v...)
	return nil
}

func (l *intList) String() string {
	if len(*l.p) == 0 {
		return "" // no "(default [])" in the help
	}
	s := make([]string, len(*l.p))
	for i, n := range *l.p {
		s[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func (l *intList) Type() string { return "ints" }
