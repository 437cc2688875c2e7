// Timing a run's phases, for whoever measures fdreplay.

package main

import (
	"fmt"
	"io"
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
