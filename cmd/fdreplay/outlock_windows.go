//go:build windows

package main

import (
	"errors"
	"os"
	"syscall"
)

// errSharingViolation is Windows' ERROR_SHARING_VIOLATION.
const errSharingViolation = syscall.Errno(32)

// lockFile opens the lock file at path, creating it, for reading and
// writing while letting others only read it: a second open for writing
// (another run's lockFile) fails with errLockHeld until this one is
// closed, which Windows does when the process ends, however.
func lockFile(path string) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, syscall.FILE_SHARE_READ, nil, syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		if errors.Is(err, errSharingViolation) {
			return nil, errLockHeld
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// unlockFile closes f, which frees the lock, and removes the lock file
// (which fails, leaving it, if another run has opened it since: that run
// holds the lock now).
func unlockFile(f *os.File, path string) {
	f.Close()
	_ = os.Remove(path)
}
