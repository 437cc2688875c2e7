//go:build !unix

package main

import "time"

// writable reports whether this process may write the file at path. Outside
// Unix the permission bits checked by the caller are all there is to see.
func writable(path string) bool { return true }

// processCPU reports no CPU time outside Unix; the timings print "?".
func processCPU() (user, sys time.Duration, ok bool) { return 0, 0, false }
