// Timing and profiling a run, for whoever measures fdreplay.

package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"syscall"
	"time"
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
	var ru syscall.Rusage
	cpu := "?"
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu = fmt.Sprintf("%.2fs user %.2fs sys", time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds())
	}
	fmt.Fprintf(c.w, "fdreplay: timings: %-8s done at %.2fs wall, CPU %s\n", name, time.Since(c.start).Seconds(), cpu)
}

// cpuProfileEnv names the environment variable that, set to a file name,
// makes fdreplay write a CPU profile of the whole run there
// (runtime/pprof's format, read by go tool pprof). The file is created
// before the run starts, so that a name that cannot be created stops the
// run at once, and completed when the run ends; a run stopped by SIGINT or
// SIGTERM leaves it incomplete.
const cpuProfileEnv = "FDREPLAY_CPUPROFILE"

// startCPUProfile creates the file path and starts the CPU profile into
// it; stop ends the profile and closes the file. The errors name
// cpuProfileEnv and the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s=%s: %w", cpuProfileEnv, path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", cpuProfileEnv, err)
		}
		return nil
	}, nil
}
