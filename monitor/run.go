package monitor

import (
	"context"
	"fmt"
	"time"
)

// Run calls Sweep every interval (on the real clock) until ctx is done, and
// then returns nil; it returns an error at once for a non-positive interval
// or, with the local-pause guard on, one not shorter than Config.PauseLimit.
// It is the live wrapper that finds suspicions when no heartbeat or query
// comes, that drives the local-pause guard, and that feeds the host's
// lateness (Lateness: how late each sweep fires, and once a second the Go
// runtime's pause and scheduling histograms): start it with
// go m.Run(ctx, 100*time.Millisecond).
func (m *Monitor) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return fmt.Errorf("monitor: sweep interval %v must be positive", every)
	}
	// Every sweep would look like a local pause, and the grace periods
	// would follow one another: nobody would ever be convicted.
	if m.guardOn && every >= m.limit {
		return fmt.Errorf("monitor: sweep interval %v must be shorter than PauseLimit %v (or disable the local-pause guard)", every, m.limit)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	m.late.ReadRuntime(m.clock.Now())
	lastRead := m.clock.Now()
	m.Sweep()
	for {
		select {
		case <-ctx.Done():
			return nil
		case due := <-t.C:
			now := m.clock.Now()
			m.late.TickSince(due, now)
			if now-lastRead >= time.Second {
				m.late.ReadRuntime(now)
				lastRead = now
			}
			m.Sweep()
		}
	}
}
