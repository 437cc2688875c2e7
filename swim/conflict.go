package swim

import "time"

// ID conflicts: two nodes (different addresses) claiming one ID, such as
// a member started with an ID already in use. The node already held alive
// or suspect keeps the ID; a joiner claiming it is refused, and updates
// naming the ID at the other address are ignored, so the newcomer can
// neither take over the entry nor, by leaving, remove the original. Both
// sides learn of it: the member that refuses emits EventConflict and
// answers the joiner with a MsgSync holding only the entry it keeps, and
// the joiner, reading its own ID at another address there, emits
// EventConflict and keeps retrying its join (it is admitted once the
// original is dead or left, as with memberlist's conflict rule).

// conflictEvery is how often one conflicting pair is reported again while
// it persists (every claim is counted in Stats.Conflicts).
const conflictEvery = 10

// conflict records a claim of held's ID by the node claim.
func (m *Member) conflict(now time.Duration, claim, held Node) {
	m.stats.Conflicts++
	last := m.lastConflict
	if last.claim == claim && last.held == held && now < last.at+conflictEvery*m.cfg.ProbeInterval {
		return
	}
	m.lastConflict = conflictNote{claim: claim, held: held, at: now}
	m.events = append(m.events, Event{Kind: EventConflict, Node: claim, From: claim.ID, At: now, Held: held})
}

// conflictNote is the last conflict reported.
type conflictNote struct {
	claim, held Node
	at          time.Duration
}

// refuseJoin answers a join from a node claiming the ID of a member held
// alive or suspect at another address (or this member's own ID): a MsgSync
// with only the entry kept under that ID, which the joiner reads as a
// conflict, and no view.
func (m *Member) refuseJoin(now time.Duration, joiner Node) bool {
	held := m.self
	u := m.selfAlive()
	if joiner.ID != m.self.ID {
		p := m.peers[joiner.ID]
		if p == nil || (p.state != StateAlive && p.state != StateSuspect) {
			return false
		}
		held, u = p.node, m.viewUpdate(p)
	}
	if joiner.Addr == held.Addr {
		return false
	}
	m.conflict(now, joiner, held)
	m.out = append(m.out, Packet{Kind: MsgSync, From: m.self, To: joiner, Updates: []Update{u}})
	return true
}
