package monitor

import (
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
)

// Lateness returns the meter of the host's lateness the monitor waits for
// (Config.Lateness, or the monitor's own). Its Stats say how late the host
// has been, per source; its Bound is the margin in force. A caller that
// sweeps from a loop of its own instead of Run feeds it there: on each tick
// of a time.Ticker, m.Lateness().TickSince(due, clock.Now()), and
// ReadRuntime about once a second (or run its Probe in a goroutine).
func (m *Monitor) Lateness() *lateness.Meter { return m.late }

// Excused returns how many heartbeats arrived after their peer's freshness
// point (at High) while the peer was still trusted because the monitor held
// the conviction back: the host-lateness margin or a local-pause grace
// period. Each is a false suspicion that the monitor did not report (or a
// conviction it would have reported and then withdrawn).
func (m *Monitor) Excused() uint64 { return m.excused.Load() }

// excuses reports whether a conviction due at the freshness point tau is
// held back at now by the host's lateness: now ≤ τ + Bound.
func (m *Monitor) excuses(tau, now time.Duration) bool {
	if !m.useLate {
		return false
	}
	b := m.late.Bound()
	return b > 0 && now <= detector.AddSat(tau, b)
}
