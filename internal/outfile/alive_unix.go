//go:build unix

package outfile

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists: kill(2) with signal 0
// checks without signalling, and EPERM means it exists under another user.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
