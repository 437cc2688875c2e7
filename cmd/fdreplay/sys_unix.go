//go:build unix

package main

import (
	"os/signal"
	"syscall"
	"time"
)

// ignoreSIGPIPE makes a write to a closed pipe on stdout fail with EPIPE,
// which errWriter keeps and the run reports at its end, instead of the
// SIGPIPE that Go's runtime otherwise lets kill the process (exit 141),
// leaving --out's staging directory and lock file behind.
func ignoreSIGPIPE() { signal.Ignore(syscall.SIGPIPE) }

// writable reports whether this process may write the file at path
// (access(2) with W_OK, which also sees ACLs and read-only mounts).
func writable(path string) bool {
	const wOK = 2
	return syscall.Access(path, wOK) == nil
}

// processCPU is the user and system CPU time this process has used so far
// (getrusage(2)); ok is false when it cannot be read.
func processCPU() (user, sys time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
