//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockFile opens the lock file at path, creating it, and locks it with
// flock(2), failing with errLockHeld at once if another open file holds
// the lock (in this process or another). A symbolic link is not
// followed. The kernel frees the lock when the process ends, however.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLockHeld
		}
		return nil, err
	}
	return f, nil
}

// unlockFile removes the lock file at path if f is still the file there,
// then closes f, which frees the lock.
func unlockFile(f *os.File, path string) {
	fi, err1 := f.Stat()
	pi, err2 := os.Lstat(path)
	if err1 == nil && err2 == nil && os.SameFile(fi, pi) {
		_ = os.Remove(path)
	}
	f.Close()
}
