package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"syscall"
)

// crashSignals are the signals of a browser process that crashed (rather
// than one that ran the page and reported an error, or that a deadline
// killed).
var crashSignals = []syscall.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGABRT,
	syscall.SIGILL, syscall.SIGTRAP, syscall.SIGFPE}

// browserCrashed reports whether err says the browser process itself died
// of a crash signal: killed by it, or a wrapper shell (Debian's
// /usr/bin/chromium) exiting with 128 + the signal.
func browserCrashed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok {
		return false
	}
	if ws.Signaled() {
		return slices.Contains(crashSignals, ws.Signal())
	}
	code := ws.ExitStatus()
	return code > 128 && slices.Contains(crashSignals, syscall.Signal(code-128))
}

// runBrowser runs the browser bin with args, each attempt with a fresh
// profile directory from profile(attempt). A crash of the browser process
// (browserCrashed: Chromium has been seen to segfault on a loaded machine)
// is retried once; any other failure, and what the page itself reports, is
// the caller's to judge and is never retried.
func runBrowser(ctx context.Context, bin string, args []string, profile func(attempt int) string) (stdout, stderr string, err error) {
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--user-data-dir=" + profile(attempt)}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		if err == nil {
			return o.String(), e.String(), nil
		}
		if !browserCrashed(err) || attempt == 2 || ctx.Err() != nil {
			if browserCrashed(err) {
				err = fmt.Errorf("browser crashed on %d attempts, the last: %w", attempt, err)
			}
			return o.String(), e.String(), err
		}
	}
}
