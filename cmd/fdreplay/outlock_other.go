//go:build !unix && !windows

package main

import "os"

// lockFile opens the lock file at path, creating it. Outside Unix and
// Windows there is no lock to take: the file only names the run.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

// unlockFile closes f and removes the lock file.
func unlockFile(f *os.File, path string) {
	f.Close()
	_ = os.Remove(path)
}
