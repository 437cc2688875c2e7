// Command fdswim runs fdkit's SWIM membership protocol.
//
// Subcommands:
//
//	fdswim sim [flags] [scenario...]   run named simulator scenarios and print their tables
//	fdswim agent [flags]               run one SWIM member over UDP (see fdswim agent -h)
//
// Each subcommand lives in its own file and registers itself in subcommands.
// Flag values a flag cannot mean (NaN, out of range, sizes that would
// exhaust memory) are errors naming the flag, never replaced by defaults.
// SIGINT or SIGTERM makes the agent leave the group and exit 0, and stops a
// simulation with status 130 or 143. Errors exit with status 1, or 2 for
// those that are marked usage errors (a bad --meta-file at start).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// subcommand runs with the arguments after its name.
type subcommand struct {
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	help string
}

// subcommands maps a name to its implementation; files add theirs in init.
var subcommands = map[string]subcommand{}

func main() {
	// SIGINT or SIGTERM cancels the context with the signal as its cause:
	// the agent leaves the group and exits 0 (its normal way to stop), a
	// simulation stops and exits 130 or 143.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := <-sigs; ok {
			cancel(signalCause{s.(syscall.Signal)})
		}
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel(nil)
	os.Exit(code)
}

// signalCause is the cause of a context cancelled by a signal.
type signalCause struct{ sig syscall.Signal }

func (c signalCause) Error() string {
	if c.sig == syscall.SIGTERM {
		return "interrupted by SIGTERM"
	}
	return "interrupted by SIGINT"
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "fdswim: unknown subcommand %q\n", args[0])
		usage(stderr)
		return 2
	}
	if err := sc.run(ctx, args[1:], stdout, stderr); err != nil {
		var sc signalCause
		if errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &sc) {
			fmt.Fprintf(stderr, "fdswim %s: %v: stopped\n", args[0], sc)
			return 128 + int(sc.sig)
		}
		fmt.Fprintf(stderr, "fdswim %s: %v\n", args[0], err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is an error in what the command was given (a flag or a file
// it names) that exits with status 2 rather than 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: fdswim <subcommand> [flags]")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, subcommands[n].help)
	}
}
