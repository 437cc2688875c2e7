package swim

import "time"

// PeerStatus is one entry of a member's view, as returned by Members.
type PeerStatus struct {
	Node        Node
	State       State
	Incarnation Incarnation
	// Since is the instant of the last state change (0 for members added
	// by Bootstrap and not changed since).
	Since time.Duration
	// Level is the peer's suspicion level from its failure detector at the
	// instant passed to Members: φ for the default detector, 0 or 1 for a
	// binary detector, 0 before anything was heard from the peer.
	Level float64
	// Suspected reports whether the peer's detector suspects it (this is
	// the detector's opinion, not the protocol's State). It is false while
	// the detector is WarmingUp.
	Suspected bool
	// WarmingUp reports that the peer's detector has heard nothing yet or
	// rests on fewer inter-arrival times than it needs
	// (detector.Detector.WarmingUp; DefaultPeerMinSamples for the default
	// detector): its Level then means little, and it has no say in the
	// ModeDetector gate. In a group of n members a member hears a given
	// peer about every (n−1)/2 periods, so the default detector warms up
	// in about 4·(n−1) periods.
	WarmingUp bool
	// ProbeTimeout is the direct probe timeout the member would use for
	// the peer now.
	ProbeTimeout time.Duration
	// SuspicionDeadline is when the suspicion timer fires, for a suspect.
	SuspicionDeadline time.Duration
	// Meta is the member's metadata (bytes in a string, at most
	// MaxMetaLen), as of the latest Alive heard that carried it.
	Meta string
	// Versions is the range of wire formats the member advertised; zero
	// when none was heard (a member writing wire format 1).
	Versions VersionRange
}

// Members returns this member's view at now: itself first (alive, level 0),
// then every other member known, in the order learnt, dead and left ones
// included until they are reaped (Config.DeadRetention, Config.MaxMembers).
func (m *Member) Members(now time.Duration) []PeerStatus {
	out := make([]PeerStatus, 0, len(m.all)+1)
	selfState := StateAlive
	if m.st != running {
		selfState = StateLeft
	}
	out = append(out, PeerStatus{Node: m.self, State: selfState, Incarnation: m.inc, Meta: m.meta, Versions: m.cfg.Versions})
	for _, p := range m.all {
		out = append(out, m.status(p, now))
	}
	return out
}

// Member returns the view entry for id at now; ok is false when the ID is
// unknown.
func (m *Member) Member(id ID, now time.Duration) (PeerStatus, bool) {
	p := m.peers[id]
	if p == nil {
		return PeerStatus{}, false
	}
	return m.status(p, now), true
}

// State returns the state of id in the local view (0 when unknown). It does
// no detector query and allocates nothing.
func (m *Member) State(id ID) State {
	if id == m.self.ID {
		return StateAlive
	}
	if p := m.peers[id]; p != nil {
		return p.state
	}
	return 0
}

// Level returns the suspicion level of id's failure detector at now (see
// PeerStatus.Level); ok is false when the ID is unknown.
func (m *Member) Level(id ID, now time.Duration) (float64, bool) {
	p := m.peers[id]
	if p == nil {
		return 0, false
	}
	if p.det == nil {
		return 0, true
	}
	return levelOf(p.det, now), true
}

func (m *Member) status(p *peer, now time.Duration) PeerStatus {
	s := PeerStatus{Node: p.node, State: p.state, Incarnation: p.inc, Since: p.since,
		ProbeTimeout: m.probeTimeout(p), Meta: p.meta, Versions: p.versions}
	s.WarmingUp = p.det == nil || p.det.WarmingUp()
	if p.det != nil {
		s.Level = levelOf(p.det, now)
		s.Suspected = detectorSuspects(p, now, m.health.hostLateness)
	}
	if p.susp != nil {
		s.SuspicionDeadline = p.susp.deadline
	}
	return s
}
