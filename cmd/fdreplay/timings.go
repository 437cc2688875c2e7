// Timing and profiling a run, for whoever measures fdreplay.

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/fdkit/fdkit/internal/outfile"
)

// timingsEnv names the environment variable that, set to 1, makes
// fdreplay print on stderr when each phase of the run ends: the wall time
// since the start and the process's CPU time (user and system) so far,
// so that the phases using one core only show up (docs/fdreplay.md).
const timingsEnv = "FDREPLAY_TIMINGS"

// phaseClock prints the phases of one run; its zero value (w nil) prints
// nothing.
type phaseClock struct {
	w     io.Writer
	start time.Time
}

func newPhaseClock(w io.Writer) phaseClock {
	return phaseClock{w: w, start: time.Now()}
}

// mark prints that the phase name ended.
func (c phaseClock) mark(name string) {
	if c.w == nil {
		return
	}
	cpu := "?"
	if user, sys, ok := processCPU(); ok {
		cpu = fmt.Sprintf("%.2fs user %.2fs sys", user.Seconds(), sys.Seconds())
	}
	fmt.Fprintf(c.w, "fdreplay: timings: %-8s done at %.2fs wall, CPU %s\n", name, time.Since(c.start).Seconds(), cpu)
}

// cpuProfileEnv names the environment variable that, set to a file name,
// makes fdreplay write a CPU profile of the whole run there
// (runtime/pprof's format, read by go tool pprof). The name must not exist
// yet: fdreplay replaces no file it did not write (a profile named like an
// input trace, or the index.html of an earlier --out, was overwritten
// before the flags were even read; a device such as /dev/full took it
// without an error). The profile is written to a staged file beside it
// (internal/outfile) and renamed onto the name when the run ends, so that
// a name that cannot be written stops the run at once, a write error
// (a full disk) is reported, and a run stopped by SIGINT, SIGTERM or
// SIGHUP leaves no file.
const cpuProfileEnv = "FDREPLAY_CPUPROFILE"

// startCPUProfile starts the CPU profile into a staged file for path;
// stop ends the profile and moves the file to path. The errors name
// cpuProfileEnv and the file.
func startCPUProfile(path string) (stop func() error, err error) {
	fail := func(err error) error { return fmt.Errorf("%s=%s: %w", cpuProfileEnv, path, err) }
	if err := refuseExisting(path); err != nil {
		return nil, fail(err)
	}
	st, err := outfile.New(filepath.Dir(path), "fdreplay-profile")
	if err != nil {
		return nil, fail(err)
	}
	f, err := st.Create(filepath.Base(path))
	if err != nil {
		st.Abort()
		return nil, fail(err)
	}
	w := &errWriter{w: f}
	if err := pprof.StartCPUProfile(w); err != nil {
		f.Close()
		st.Abort()
		return nil, fail(err)
	}
	return func() error {
		defer st.Abort() // nothing after Commit
		pprof.StopCPUProfile()
		err := errors.Join(w.err, f.Close())
		if err == nil {
			err = refuseExisting(path) // created by someone else meanwhile
		}
		if err == nil {
			_, err = st.Commit(nil)
		}
		if err != nil {
			return fail(err)
		}
		return nil
	}, nil
}

// refuseExisting returns an error if path exists (or cannot be looked at).
func refuseExisting(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return errors.New("the file exists, and fdreplay replaces no file it did not write: remove it or name a new one")
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return err
	}
}
