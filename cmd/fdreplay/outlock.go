// The --out directory's lock: one run at a time writes there.

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/fdkit/fdkit/internal/outfile"
)

// errLockHeld is lockFile's answer when another open file holds the lock.
var errLockHeld = errors.New("lock held")

// outLock keeps a second fdreplay out of an --out directory from the check
// that it holds no earlier results to the last rename of the commit, so
// that two runs never mix their files there. It is the file lockName in
// the directory, holding the PID of the run, locked by the operating
// system (flock(2) on Unix, an open without write sharing on Windows), so
// that the lock of a run that died, even by SIGKILL, is free again: such a
// run leaves only the file, which the next run takes over. release, and a
// signal that stops the run (outfile.OnInterrupt), remove it.
type outLock struct {
	mu     sync.Mutex
	f      *os.File // nil once released
	path   string
	remove func() // unregisters the signal cleanup
	// created are the directories the run created for --out, deepest
	// first: unlock removes those left empty, so that a run that fails or
	// is stopped before it writes leaves no new empty directory (user44's
	// D6). After a commit they hold the results and stay.
	created []string
}

// lockOut takes the lock of the --out directory dir, or fails at once,
// naming the PID of the run that holds it. created are the directories
// the run made for dir (mkdirOwn), deepest first.
func lockOut(dir string, created []string) (*outLock, error) {
	l := &outLock{path: filepath.Join(dir, lockName), created: created}
	// Registered first and run under l.mu, so that a signal arriving while
	// the lock is being taken removes the file once it is ours.
	l.remove = outfile.OnInterrupt(l.unlock)
	l.mu.Lock()
	err := l.take(dir)
	l.mu.Unlock()
	if err != nil {
		// Unlocked before the signal cleanup is unregistered, which
		// waits for a signal handler that may be waiting for l.mu.
		l.release()
		return nil, err
	}
	return l, nil
}

// take opens and locks the file, checks it is the one at the path (a run
// that just ended may have removed the file it locked, after this run
// opened it) and writes this run's PID into it.
func (l *outLock) take(dir string) error {
	for range 100 {
		if fi, err := os.Lstat(l.path); err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("--out %s: %s is not fdreplay's lock file (not a regular file): remove it", dir, l.path)
		}
		f, err := lockFile(l.path)
		if errors.Is(err, errLockHeld) {
			return fmt.Errorf("--out %s: in use by %s: wait for it to end or choose another directory", dir, holder(l.path))
		}
		if err != nil {
			return fmt.Errorf("--out %s: cannot write there: %w", dir, unwrapPath(err))
		}
		fi, err1 := f.Stat()
		pi, err2 := os.Lstat(l.path)
		if err1 != nil || err2 != nil || !os.SameFile(fi, pi) {
			f.Close()
			continue
		}
		// A file of that name that is not a lock file is the user's:
		// leave it as it is.
		b := make([]byte, 32)
		n, err := f.ReadAt(b, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			f.Close()
			return fmt.Errorf("--out %s: reading %s: %w", dir, l.path, unwrapPath(err))
		}
		if _, ok := lockPID(b[:n]); !ok && n > 0 {
			f.Close()
			return fmt.Errorf("--out %s: %s is not fdreplay's lock file (it holds something else): remove it or choose another directory", dir, l.path)
		}
		l.f = f
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("--out %s: writing %s: %w", dir, l.path, unwrapPath(err))
		}
		if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
			return fmt.Errorf("--out %s: writing %s: %w", dir, l.path, unwrapPath(err))
		}
		return nil
	}
	return fmt.Errorf("--out %s: cannot lock %s: it keeps being replaced", dir, l.path)
}

// lockPID parses a lock file's contents: a PID and a newline, or nothing
// (a run between taking the lock and writing its PID).
func lockPID(b []byte) (pid int, ok bool) {
	if len(b) == 0 {
		return 0, true
	}
	s, found := strings.CutSuffix(string(b), "\n")
	pid, err := strconv.Atoi(s)
	return pid, found && err == nil && pid > 0
}

// holder names the run that holds the lock at path: its PID, or, when the
// file holds none (that run has not written it yet), "another fdreplay
// run".
func holder(path string) string {
	b, err := os.ReadFile(path)
	if pid, ok := lockPID(b); err == nil && ok && pid > 0 {
		return fmt.Sprintf("fdreplay (pid %d)", pid)
	}
	return "another fdreplay run"
}

// release removes the lock file and frees the lock; it may be called more
// than once.
func (l *outLock) release() {
	l.unlock()
	l.remove()
}

// unlock removes the file if it is still this run's lock file (removed
// before it is unlocked, so that no other run takes a lock on a file
// about to go: see take) and closes it.
func (l *outLock) unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	unlockFile(l.f, l.path)
	l.f = nil
	for _, d := range l.created {
		if os.Remove(d) != nil { // not empty: it, and those above it, stay
			break
		}
	}
}

// mkdirOwn creates dir and those of its parents that do not exist, as
// os.MkdirAll does, with mkdir (os.Mkdir; a test passes another), and
// returns the directories this call's own mkdir created, deepest first. A
// directory whose mkdir fails with fs.ErrExist was made by someone else
// (another run racing this one, say) and is not listed, so that unlock
// never removes a directory another run made and is about to lock: which
// directories are missing is not guessed beforehand. A path that exists
// and is not a directory fails with syscall.ENOTDIR.
func mkdirOwn(dir string, mkdir func(string, os.FileMode) error) ([]string, error) {
	var missing []string // dir and its missing parents, deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return nil, &os.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
			}
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		for try := 0; ; try++ {
			err := mkdir(d, 0o755)
			if err == nil {
				created = append(created, d)
				break
			}
			if !errors.Is(err, fs.ErrExist) {
				return nil, err
			}
			fi, serr := os.Stat(d)
			if serr == nil && !fi.IsDir() {
				return nil, &os.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
			}
			// Made by someone else; and if gone again (the run
			// that made it failed and removed it), made anew.
			if serr == nil || try == 9 {
				break
			}
		}
	}
	slices.Reverse(created)
	return created, nil
}
