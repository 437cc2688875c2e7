package detector

import "time"

// Heartbeat is one heartbeat as seen by the monitor.
//
// Seq is the sender's sequence number and is meaningful only when HasSeq is
// true (0 is a valid sequence number: the LIP6 traces start at 0). Sent is the
// send instant on the sender's clock, meaningful only when HasSent is true;
// detectors ignore it and replay uses it for detection time. Arrival is the
// arrival instant on the monitor's clock. The two flags come last, so
// that they share a word: a Heartbeat takes 32 bytes (40 with each flag
// after its value), which is what a stream held in memory costs per
// heartbeat.
type Heartbeat struct {
	Seq     uint64
	Sent    time.Duration
	Arrival time.Duration
	HasSeq  bool
	HasSent bool
}

// Detector is a heartbeat failure detector for one monitored process.
//
// Observe updates the state with a heartbeat and recomputes the freshness
// point τ. Heartbeats should be observed in arrival order; each
// implementation documents what it does with stale, duplicate or reordered
// sequence numbers and with arrival times that go backwards. Observe never
// panics.
//
// FreshnessPoint returns τ, the instant after which the process is suspected
// if no newer heartbeat arrives. ok is false while no τ exists (before the
// first heartbeat).
//
// WarmingUp reports whether τ still rests on fewer samples than the detector's
// configured minimum; replay excludes such heartbeats from QoS metrics and
// reports how many it excluded. A detector that needs no warm-up always
// returns false once it has seen a heartbeat.
//
// Suspected reports whether the process is suspected at now, that is whether
// a τ exists and now > τ (strict).
type Detector interface {
	Observe(hb Heartbeat)
	FreshnessPoint() (tau time.Duration, ok bool)
	WarmingUp() bool
	Suspected(now time.Duration) bool
}

// Accrual is a detector with a suspicion level (Défago, Urbán, Hayashibara,
// Katayama, "Definition and specification of accrual failure detectors",
// DSN 2005).
//
// Level returns the suspicion level at now: never NaN, never negative, and
// non-decreasing in now while no heartbeat arrives. Before the first
// heartbeat it is 0.
//
// Threshold returns the configured threshold Θ; FreshnessPoint is
// LastArrival + ElapsedFor(Θ).
//
// ElapsedFor returns, in closed form, the smallest time elapsed since the last
// heartbeat at which the level reaches level, so that replay never steps
// time. ok is false when no heartbeat was seen or the level is never reached.
type Accrual interface {
	Detector
	Level(now time.Duration) float64
	Threshold() float64
	ElapsedFor(level float64) (elapsed time.Duration, ok bool)
}

// Linear is implemented by detectors whose freshness point has the form
//
//	τ = Offset + Scale·p
//
// where p is the detector's swept parameter (the fixed timeout T, Chen's
// safety margin α, the quantile z(Φ) of the normal φ model, Jacobson's K) and
// neither Offset nor Scale depends on p or on the detector's past outputs.
// The qos package uses it to compute a whole parameter sweep from a single
// replay (docs/algorithms.md, “Sweeping a parameter in one pass”).
//
// LinearForm returns Offset and Scale for the current state; Scale is in
// nanoseconds per unit of p (1 when p is itself a duration in nanoseconds).
// ok is false when no freshness point exists yet, or when the current state
// is not linear in p (for example because a clamp is active).
type Linear interface {
	Detector
	LinearForm() (offset time.Duration, scale float64, ok bool)
}

// BackwardCounter is implemented by every fdkit detector. BackwardArrivals
// returns how many heartbeats the detector dropped because they arrived
// earlier than the newest heartbeat it had recorded (the caller's clock went
// backwards): such a heartbeat never becomes a sample, neither an
// inter-arrival time nor an arrival offset, and never moves τ. The monitor
// drops them before they reach the detector and counts them itself
// (monitor.PeerState.BackwardArrivals).
type BackwardCounter interface {
	BackwardArrivals() uint64
}
