// Package outfile writes a command's result files so that an interrupted,
// killed or failed run never leaves a partial one behind.
//
// A Staging collects the files of one run in a hidden directory inside the
// destination directory (same file system, so a rename moves a file in
// atomically). Commit renames every staged file into place; Abort, or a
// SIGINT, SIGTERM or (on Unix) SIGHUP seen by HandleSignals, removes the
// staging directory with whatever it holds. A reader of the destination therefore sees either
// the complete earlier file or the complete new one, never a file cut
// mid-row; a run killed with SIGKILL leaves only the hidden staging
// directory, which the next Staging in that directory removes.
//
// Commits and signal handling share one lock, so a signal that arrives
// while Commit renames waits for the renames to end: the files of one
// Commit appear together or not at all (short of SIGKILL or a crash of the
// machine between two renames).
package outfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stagingPrefix starts the name of every staging directory (hidden, with
// the command's name after it).
const stagingPrefix = ".partial-"

// IsStagingName reports whether name, a file name without directory,
// is reserved for staging directories: Staging.Create refuses it, and a
// later run removes such a directory when its owner is gone, so a command
// refuses it as an output name before it starts.
func IsStagingName(name string) bool { return strings.HasPrefix(name, stagingPrefix) }

var (
	mu          sync.Mutex
	live        = map[*Staging]bool{}
	interrupted bool
	onInterrupt = map[*func()]bool{} // OnInterrupt's functions
)

// OnInterrupt registers fn to run when a signal stops the command
// (HandleSignals), after the stagings are removed and before the process
// exits: the command's own cleanup of what it keeps outside a Staging,
// such as a lock file. fn runs while Commit cannot, and must not call
// into this package. The returned function unregisters fn.
func OnInterrupt(fn func()) (remove func()) {
	mu.Lock()
	defer mu.Unlock()
	key := &fn
	onInterrupt[key] = true
	return func() {
		mu.Lock()
		defer mu.Unlock()
		delete(onInterrupt, key)
	}
}

// ownerAlive reports whether the process whose id starts rest ("PID-XXXX",
// the tail of a staging directory's name) is still running, so that a
// second run writing to the same directory never removes the first one's
// staging. A name without a PID is a leftover.
func ownerAlive(rest string) bool {
	pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	return processAlive(pid)
}

// ErrInterrupted is returned by Commit and New after a signal stopped the
// command.
var ErrInterrupted = errors.New("outfile: interrupted")

// Staging holds the files of one run until Commit.
type Staging struct {
	dir, tmp string
	done     bool
}

// New creates a staging directory for files that go to dir (which must
// exist). cmd and the process id name it (".partial-cmd-PID-XXXX") so a
// leftover says who left it; leftovers of killed runs of cmd in dir (whose
// process is gone) are removed.
func New(dir, cmd string) (*Staging, error) {
	mu.Lock()
	defer mu.Unlock()
	if interrupted {
		return nil, ErrInterrupted
	}
	prefix := stagingPrefix + cmd + "-"
	if old, err := filepath.Glob(filepath.Join(dir, prefix+"*")); err == nil {
		for _, o := range old {
			if !ownerAlive(strings.TrimPrefix(filepath.Base(o), prefix)) {
				_ = os.RemoveAll(o)
			}
		}
	}
	tmp, err := os.MkdirTemp(dir, prefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, err
	}
	s := &Staging{dir: dir, tmp: tmp}
	live[s] = true
	return s, nil
}

// Dir returns the staging directory: writers that take a directory (a plot
// saver) write there, and Commit moves what they wrote.
func (s *Staging) Dir() string { return s.tmp }

// Create creates a staged file that Commit will move to dir/name. name is a
// plain file name (no directory).
func (s *Staging) Create(name string) (*os.File, error) {
	if name == "" || name != filepath.Base(name) || IsStagingName(name) {
		return nil, fmt.Errorf("outfile: %q is not a plain file name", name)
	}
	if err := CheckReplaceable(filepath.Join(s.dir, name)); err != nil {
		return nil, err
	}
	return os.Create(filepath.Join(s.tmp, name))
}

// ErrNotRegular is the error of CheckReplaceable (errors.Is): the
// destination exists and is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// CheckReplaceable refuses a destination that exists and is not a regular
// file (a symbolic link is replaced, not followed): the rename of Commit
// would otherwise replace a device such as /dev/null or /dev/full (as root),
// a FIFO or a socket with a regular file. Create and Commit check it; a
// command checks it before the work whose output it is. The error is
// ErrNotRegular (errors.Is) and offers no alternative: a command that
// writes to standard output for "-" says so itself.
func CheckReplaceable(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	what := "not a regular file"
	switch {
	case fi.IsDir():
		what = "a directory"
	case fi.Mode()&os.ModeDevice != 0:
		what = "a device"
	case fi.Mode()&os.ModeNamedPipe != 0:
		what = "a FIFO"
	case fi.Mode()&os.ModeSocket != 0:
		what = "a socket"
	}
	return &notRegularError{path: path, what: what}
}

// notRegularError is CheckReplaceable's error: path is what (a FIFO, a
// device, ...).
type notRegularError struct{ path, what string }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s is %s: the output is written to a temporary file and renamed onto its name, which would replace it; give a regular file's name", e.path, e.what)
}

func (e *notRegularError) Is(target error) bool { return target == ErrNotRegular }

// Write stages the file name with the content fn writes.
func (s *Staging) Write(name string, fn func(io.Writer) error) error {
	f, err := s.Create(name)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	testPause("staged " + name)
	return nil
}

// TestPauseEnv names the environment variable of a test hook: when it holds
// a point, "staged NAME" (after Write staged the file NAME) or "commit"
// (when Commit starts), the process prints "outfile: paused at POINT" on
// stderr there and sleeps ten minutes, so that a test can signal a real
// process at a known point instead of relying on timing.
const TestPauseEnv = "FDKIT_TEST_OUTFILE_PAUSE"

func testPause(point string) {
	if os.Getenv(TestPauseEnv) != point {
		return
	}
	fmt.Fprintf(os.Stderr, "outfile: paused at %s\n", point)
	time.Sleep(10 * time.Minute)
}

// Commit moves every staged file into the destination directory, replacing
// files of the same name, then removes each of the stale paths (files of an
// earlier run that this one did not write) and the staging directory. It
// returns the final paths of the files moved, in name order.
func (s *Staging) Commit(stale []string) ([]string, error) {
	testPause("commit")
	mu.Lock()
	defer mu.Unlock()
	if interrupted {
		return nil, ErrInterrupted
	}
	if s.done {
		return nil, errors.New("outfile: staging already committed or aborted")
	}
	ents, err := os.ReadDir(s.tmp)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		final := filepath.Join(s.dir, e.Name())
		if err := CheckReplaceable(final); err != nil {
			return out, err
		}
		if err := os.Rename(filepath.Join(s.tmp, e.Name()), final); err != nil {
			return out, err
		}
		out = append(out, final)
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, err
		}
	}
	s.done = true
	delete(live, s)
	return out, os.Remove(s.tmp)
}

// Abort removes the staging directory and everything staged. It is safe to
// call after Commit (it does nothing then), so `defer s.Abort()` cleans up
// after any error.
func (s *Staging) Abort() {
	mu.Lock()
	defer mu.Unlock()
	s.abortLocked()
}

// abortLocked removes s's files and returns how many there were.
func (s *Staging) abortLocked() int {
	if s.done {
		return 0
	}
	ents, _ := os.ReadDir(s.tmp)
	// A writer of the run may still be creating a file as the directory
	// goes: retry until it is gone.
	for range 5 {
		if os.RemoveAll(s.tmp) == nil {
			break
		}
	}
	s.done = true
	delete(live, s)
	return len(ents)
}

// abortAll aborts every live Staging and makes later New and Commit calls
// fail; it returns how many partial files it removed.
func abortAll() int {
	mu.Lock()
	defer mu.Unlock()
	interrupted = true
	n := 0
	for s := range live {
		n += s.abortLocked()
	}
	for fn := range onInterrupt {
		(*fn)()
	}
	return n
}

// ExitCode is the status of a command stopped by sig: 128 + the signal
// number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), as shells
// report it.
func ExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// HandleSignals makes SIGINT, SIGTERM and, on Unix, SIGHUP (a closed
// terminal or a dropped ssh session) stop the command: every live
// Staging is removed, one line on stderr says what happened, and the
// process exits with ExitCode. Call it at the start of main; the returned
// function stops the handling.
func HandleSignals(cmd string, stderr io.Writer) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals...)
	quit := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			n := abortAll()
			name := signalNames[sig]
			if n > 0 {
				fmt.Fprintf(stderr, "%s: interrupted by %s: stopped and removed %d partial output file(s)\n", cmd, name, n)
			} else {
				fmt.Fprintf(stderr, "%s: interrupted by %s: stopped; no partial output file left\n", cmd, name)
			}
			os.Exit(ExitCode(sig))
		case <-quit:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(quit)
	}
}
