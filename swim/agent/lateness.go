package agent

import (
	"time"

	"github.com/fdkit/fdkit/lateness"
)

// Lateness returns the meter of this host's lateness: how late the agent's
// timer fired at each tick, and once a second the Go runtime's
// stop-the-world pauses and goroutine scheduling latency (package
// lateness). Its Bound is given to the state machine before every Tick
// (swim.Member.SetHostLateness): in ModeDetector a peer's detector is asked
// about now − Bound, so that a silence this host caused is not held against
// the peer. Read its Stats for the measurements.
func (a *Agent) Lateness() *lateness.Meter { return a.clock.late }

// hostTick feeds the lateness meter with a tick of the agent's timer that
// was due at due, reads the runtime's histograms about once a second, and
// gives the state machine the bound. It runs on the agent's goroutine.
func (a *Agent) hostTick(due time.Time) {
	now := time.Since(a.clock.start)
	a.clock.late.TickSince(due, now)
	if now-a.clock.lateRead >= time.Second {
		a.clock.late.ReadRuntime(now)
		a.clock.lateRead = now
	}
	a.m.SetHostLateness(a.clock.late.Bound())
}
