//go:build !unix

package outfile

import "os"

// processAlive reports whether process pid exists. Outside Unix,
// os.FindProcess fails for a process that is gone (on Windows it opens a
// handle to it); where it cannot tell, the staging directory is kept, so
// that a live run's files are never removed.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
