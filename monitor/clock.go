package monitor

import (
	"sync/atomic"
	"time"
)

// Clock gives the monitor its notion of now, as a time.Duration offset from
// an origin fixed by the clock. Now must never go backwards and must be safe
// for concurrent use.
type Clock interface {
	Now() time.Duration
}

// Monotonic is the default Clock: the time elapsed since its creation, read
// from Go's monotonic clock (time.Since), so wall-clock steps (NTP, manual
// changes) never move it.
type Monotonic struct {
	start time.Time
}

// NewMonotonic returns a Monotonic clock whose origin is now.
func NewMonotonic() *Monotonic { return &Monotonic{start: time.Now()} }

// Now returns the time elapsed since the clock was created.
func (c *Monotonic) Now() time.Duration { return time.Since(c.start) }

// Start returns the wall-clock instant of the clock's origin (with its
// monotonic reading), for converting offsets to wall time: Start().Add(d).
func (c *Monotonic) Start() time.Time { return c.start }

// ManualClock is a Clock that moves only when told to; for tests and
// simulations. The zero value reads 0 and is ready to use.
type ManualClock struct {
	now atomic.Int64
}

// Now returns the clock's current reading.
func (c *ManualClock) Now() time.Duration { return time.Duration(c.now.Load()) }

// Set sets the reading to d. Setting it backwards is allowed but breaks the
// Clock contract; tests use it only to provoke that case.
func (c *ManualClock) Set(d time.Duration) { c.now.Store(int64(d)) }

// Advance moves the clock forward by d and returns the new reading.
func (c *ManualClock) Advance(d time.Duration) time.Duration {
	return time.Duration(c.now.Add(int64(d)))
}
