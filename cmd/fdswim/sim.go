package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	o := sim.Options{Context: ctx}
	var list bool
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed (same seed, same tables)")
	fs.BoolVar(&o.Quick, "quick", false, "smaller sizes and shorter runs")
	fs.IntSliceVar(&o.Sizes, "sizes", nil, "group sizes for load, detect and kill (default 8,16,...,512,1000; kill 8,16,32)")
	fs.IntVar(&o.Trials, "trials", 0, "crashes per size for detect and kill (default 200; kill 100)")
	fs.DurationVar(&o.Pause, "pause", 0, "lifeguard: pause length D (default: 6s, 9s and 12s)")
	fs.DurationVar(&o.Every, "every", 0, "lifeguard: pause interval I (default 2·D)")
	fs.IntSliceVar(&o.Counts, "counts", nil, "lifeguard: numbers C of paused members (default 1,2,4,8,16)")
	fs.DurationVar(&o.Duration, "duration", 0, "lifeguard: run length (default 10m)")
	fs.IntVar(&o.Alpha, "alpha", 0, "lifeguard: suspicion multiplier α (default 5)")
	fs.IntVar(&o.Beta, "beta", 0, "lifeguard: maximum timeout multiplier β (default 6)")
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

// runScenario runs s and returns at once when ctx is done (Ctrl-C): the
// scenario itself stops at its next check of o.Context.
func runScenario(ctx context.Context, s sim.Scenario, o sim.Options) ([]sim.Table, error) {
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
