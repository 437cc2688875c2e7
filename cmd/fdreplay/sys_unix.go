//go:build unix

package main

import (
	"syscall"
	"time"
)

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
