//go:build !unix

package main

import "testing"

// mkfifo: named pipes are Unix only; the test skips.
func mkfifo(t *testing.T, _ string) { t.Skip("named pipes: Unix only") }

// hupSelf: SIGHUP is Unix only; the test skips.
func hupSelf(t *testing.T) { t.Skip("SIGHUP: Unix only") }
