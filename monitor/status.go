package monitor

import (
	"errors"
	"fmt"
	"time"
)

// Status is a peer's output: trusted or suspected. The zero value is
// Unknown (no such peer).
type Status uint8

// Statuses.
const (
	Unknown Status = iota
	Trusted
	Suspected
)

func (s Status) String() string {
	switch s {
	case Unknown:
		return "unknown"
	case Trusted:
		return "trusted"
	case Suspected:
		return "suspected"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Cause says what produced a transition.
type Cause uint8

// Causes of transitions.
const (
	// CauseFreshness: the freshness point at Config.High passed with no newer
	// heartbeat (trusted → suspected).
	CauseFreshness Cause = iota + 1
	// CauseHeartbeat: a heartbeat brought the level below Config.Low
	// (suspected → trusted).
	CauseHeartbeat
	// CauseRestart: a heartbeat with a larger incarnation number reset the
	// peer (suspected → trusted).
	CauseRestart
)

func (c Cause) String() string {
	switch c {
	case CauseFreshness:
		return "freshness-point"
	case CauseHeartbeat:
		return "heartbeat"
	case CauseRestart:
		return "restart"
	}
	return fmt.Sprintf("Cause(%d)", uint8(c))
}

// Transition is one change of a peer's status, delivered to
// Config.OnTransition.
type Transition struct {
	Peer        string
	Incarnation uint64 // the peer's incarnation when the transition took effect
	Old, New    Status
	Cause       Cause
	// Level is the suspicion level when the transition was found (for a
	// suspicion it is at least Config.High; +Inf is possible, never NaN).
	Level float64
	// At is the instant the transition took effect on the monitor's clock:
	// for a suspicion, the freshness point at High (or the arrival that
	// produced it, if later; or the end of a local-pause grace period); for a
	// trust, the arrival of the heartbeat. It does not depend on how often
	// the monitor looks.
	At time.Duration
	// Found is the clock reading when the monitor noticed the transition
	// (≥ At).
	Found time.Duration
	// Number is the 1-based index of this transition among the peer's
	// transitions since it was first seen, so a subscriber receiving them
	// from several goroutines can put one peer's transitions in order.
	Number uint64
	// WarmingUp reports that the detector was still warming up when it
	// produced the freshness point behind a suspicion (replay excludes such
	// periods from QoS metrics).
	WarmingUp bool
}

// PeerState is a snapshot of one peer, evaluated at Now.
type PeerState struct {
	Peer        string
	Incarnation uint64
	Status      Status
	// Level is the suspicion level at Now (see the package doc): never NaN,
	// never negative.
	Level float64
	// FreshnessPoint is the instant after which the peer is suspected if no
	// newer heartbeat arrives (the freshness point at Config.High);
	// HasFreshnessPoint is false when the detector has none yet or the level
	// can never reach High.
	FreshnessPoint    time.Duration
	HasFreshnessPoint bool
	LastArrival       time.Duration // arrival of the newest accepted heartbeat
	Heartbeats        uint64        // accepted heartbeats in this incarnation
	Suspicions        uint64        // trusted → suspected transitions since first seen
	Transitions       uint64        // all transitions since first seen
	WarmingUp         bool          // the detector is still warming up
	// BackwardArrivals counts the heartbeats dropped because their arrival
	// was not later than LastArrival (a caller's clock that went backwards):
	// none reached the detector, so none became a sample. Since first seen.
	BackwardArrivals uint64
	Now              time.Duration // the clock reading of this snapshot
}

// Errors returned by the Monitor.
var (
	// ErrStaleIncarnation: the heartbeat's incarnation is older than the
	// peer's current one; the heartbeat was ignored.
	ErrStaleIncarnation = errors.New("monitor: heartbeat from an older incarnation ignored")
	// ErrEmptyPeer: the peer name is empty.
	ErrEmptyPeer = errors.New("monitor: empty peer name")
	// ErrTooManyPeers: the heartbeat would create a peer beyond
	// Config.MaxPeers; it was ignored.
	ErrTooManyPeers = errors.New("monitor: too many peers (Config.MaxPeers)")
)
