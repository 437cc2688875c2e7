// Command fdswim runs fdkit's SWIM membership protocol.
//
// Subcommands:
//
//	fdswim sim [flags] [scenario...]   run named simulator scenarios and print their tables
//	fdswim agent [flags]               run one SWIM member over UDP (see fdswim agent -h)
//
// Each subcommand lives in its own file and registers itself in subcommands.
package main

import (
	"context"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
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
		fmt.Fprintf(stderr, "fdswim %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

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
