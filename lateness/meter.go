package lateness

import (
	"cmp"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a Meter.
const (
	// DefaultWindow is how long a measured lateness counts towards Bound:
	// Cassandra's local-pause rule holds convictions for 5 s after a pause;
	// twice that lets a host that stalls every few seconds (GC cycles under
	// load, a busy neighbour) keep its margin between stalls.
	DefaultWindow = 10 * time.Second
	// DefaultCap bounds Bound, and so the time a monitor's margin can add to
	// a detection: Cassandra's default local-pause limit (5 s). A longer
	// stall is a pause, which the local-pause guards handle.
	DefaultCap = 5 * time.Second
)

// slots is the number of sub-windows of the sliding maximum.
const slots = 10

// Source says what a lateness was measured on.
type Source int

// Sources of lateness.
const (
	// Timer: how late a periodic timer (a sweep, a probe tick) fired: the
	// instant it ran minus the instant it was due. It includes the kernel
	// not running the process and the Go scheduler not running the
	// goroutine.
	Timer Source = iota
	// GCPause: a stop-the-world pause of the Go garbage collector
	// (runtime/metrics /sched/pauses/total/gc:seconds).
	GCPause
	// OtherPause: another stop-the-world pause of the Go runtime
	// (/sched/pauses/total/other:seconds).
	OtherPause
	// Scheduling: the time a runnable goroutine waited before it ran
	// (/sched/latencies:seconds), such as a reader woken by a datagram.
	Scheduling
	numSources
)

var sourceNames = [numSources]string{"timer", "gc-pause", "other-pause", "scheduling"}

// String returns the source's name: timer, gc-pause, other-pause or
// scheduling (the label promfd uses).
func (s Source) String() string {
	if s < 0 || s >= numSources {
		return fmt.Sprintf("Source(%d)", int(s))
	}
	return sourceNames[s]
}

// Sources returns every Source, in order.
func Sources() []Source { return []Source{Timer, GCPause, OtherPause, Scheduling} }

// Config configures a Meter. The zero value means the defaults.
type Config struct {
	// Window W: Bound is the largest lateness measured over the last W
	// (to within W/10). Default DefaultWindow (10 s); must not be negative.
	Window time.Duration
	// Cap: Bound never exceeds it. Default DefaultCap (5 s); must not be
	// negative.
	Cap time.Duration
}

// Meter measures how late the local host runs: it keeps the largest
// lateness measured over a sliding window (Bound), and totals per Source
// (Stats). Lateness is fed by Observe and Tick, and from the Go runtime's
// own histograms by ReadRuntime; Probe does both on a ticker of its own.
// Instants passed to it are readings of one clock that never goes back (a
// monitor's Clock); a Meter reads no clock itself except in Probe. All
// methods are safe for concurrent use; Bound costs one atomic load.
type Meter struct {
	window, cap, slot time.Duration

	mu      sync.Mutex
	max     [slots]time.Duration // largest lateness in each slot
	id      [slots]int64         // which slot (now/slot) each entry holds
	latest  int64                // the newest slot measured
	perSrc  [numSources]SourceStats
	rt      *runtimeReader
	started bool

	bound atomic.Int64
}

// SourceStats are the totals of one Source since the Meter was made.
type SourceStats struct {
	Count uint64        // lateness measurements
	Max   time.Duration // the largest
	Last  time.Duration // the most recent
	Total time.Duration // their sum
}

// Stats is a snapshot of a Meter.
type Stats struct {
	// Bound: the largest lateness over the last Window, capped at Cap.
	Bound time.Duration
	// Window and Cap as configured.
	Window, Cap time.Duration
	// Sources holds the totals of each Source, indexed by Source.
	Sources [numSources]SourceStats
}

// New returns a Meter, or an error for a negative Window or Cap.
func New(cfg Config) (*Meter, error) {
	if cfg.Window < 0 {
		return nil, fmt.Errorf("lateness: Window %v is negative", cfg.Window)
	}
	if cfg.Cap < 0 {
		return nil, fmt.Errorf("lateness: Cap %v is negative", cfg.Cap)
	}
	cfg.Window = cmp.Or(cfg.Window, DefaultWindow)
	cfg.Cap = cmp.Or(cfg.Cap, DefaultCap)
	m := &Meter{window: cfg.Window, cap: cfg.Cap, slot: max(cfg.Window/slots, 1)}
	m.clear(-1 << 62)
	return m, nil
}

// Observe records that the host was late by late at now (a non-positive
// lateness only moves the window). Bound then includes it for Window.
func (m *Meter) Observe(now, late time.Duration, src Source) {
	if src < 0 || src >= numSources {
		src = Timer
	}
	m.mu.Lock()
	m.observe(now, late, src)
	m.mu.Unlock()
}

// clear empties every slot and makes latest the newest.
func (m *Meter) clear(latest int64) {
	for i := range m.id {
		m.id[i], m.max[i] = -1<<62, 0
	}
	m.latest = latest
}

// observe records a lateness in the slot of now. The window ends at the
// newest slot measured: a measurement a little older than the newest (two
// feeders read the clock before taking the lock) counts in its own slot
// without pushing newer ones out; one older than the whole window means the
// clock went back, and the window starts afresh.
func (m *Meter) observe(now, late time.Duration, src Source) {
	id := int64(now / m.slot)
	if now < 0 && now%m.slot != 0 {
		id-- // floor for negative instants
	}
	switch {
	case id > m.latest:
		m.latest = id
	case id <= m.latest-slots:
		m.clear(id)
	}
	i := int(((id % slots) + slots) % slots)
	if m.id[i] != id {
		m.id[i], m.max[i] = id, 0
	}
	if late > 0 {
		m.max[i] = max(m.max[i], late)
		s := &m.perSrc[src]
		s.Count++
		s.Max = max(s.Max, late)
		s.Last = late
		s.Total += late
	}
	var b time.Duration
	for j := range m.max {
		if m.id[j] > m.latest-slots {
			b = max(b, m.max[j])
		}
	}
	m.bound.Store(int64(min(b, m.cap)))
}

// Tick records a periodic timer due at due that ran at now: a lateness of
// now − due (Source Timer).
func (m *Meter) Tick(due, now time.Duration) { m.Observe(now, now-due, Timer) }

// Bound returns the largest lateness measured over the last Window, at
// most Cap, as of the latest measurement (the window moves only when the
// Meter is fed: a Meter fed by a ticker, as Probe and monitor.Monitor.Run
// do, forgets a lateness Window after it).
func (m *Meter) Bound() time.Duration { return time.Duration(m.bound.Load()) }

// Stats returns a snapshot.
func (m *Meter) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Stats{Bound: m.Bound(), Window: m.window, Cap: m.cap, Sources: m.perSrc}
}
