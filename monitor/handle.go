package monitor

import "time"

// Handle is direct access to one peer, for a caller that keeps one per peer
// (in its own peer struct) so that the hot path skips the map lookup. Its
// methods behave like the Monitor's methods of the same name. A Handle is
// safe for concurrent use. After Remove, a Handle keeps working on the
// removed peer, which Sweep, Snapshot and the by-name methods no longer see:
// get a new Handle after a Remove.
//
// A *Handle is the peer's own record (no separate allocation), so the hot
// path through a Handle touches one object besides the detector.
type Handle peer

// Handle returns the handle of the named peer, creating the peer (trusted,
// with no heartbeat and so no freshness point yet) at the given incarnation
// if it does not exist. It returns ErrEmptyPeer, ErrTooManyPeers or the
// factory's error.
func (m *Monitor) Handle(name string, incarnation uint64) (*Handle, error) {
	if name == "" {
		return nil, ErrEmptyPeer
	}
	p := m.lookup(name)
	if p == nil {
		var err error
		if p, err = m.create(name, incarnation); err != nil {
			return nil, err
		}
	}
	return (*Handle)(p), nil
}

// Peer returns the peer's name.
func (h *Handle) Peer() string { return h.name }

// Heartbeat records a heartbeat arriving now (see Monitor.Heartbeat).
func (h *Handle) Heartbeat(b Beat) error { return h.m.beat((*peer)(h), b, 0, false) }

// HeartbeatAt records a heartbeat with a given arrival (see
// Monitor.HeartbeatAt and its caveat).
func (h *Handle) HeartbeatAt(b Beat, arrival time.Duration) error {
	return h.m.beat((*peer)(h), b, arrival, true)
}

// Status returns the peer's status now.
func (h *Handle) Status() Status { return h.m.status((*peer)(h)) }

// State returns a snapshot of the peer evaluated now.
func (h *Handle) State() PeerState { return h.m.state((*peer)(h)) }
