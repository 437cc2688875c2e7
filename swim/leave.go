package swim

import (
	"time"
)

// Leaving: a voluntary leave gossiped as a Dead update about oneself.

// Leave starts a voluntary leave: the member gossips a Dead update about
// itself with From = its own ID (in the Lifeguard modes also sent at once
// to GossipFanout random members, in MsgGossip packets: a caller that stops
// the member early, before its next probe, still tells somebody), keeps
// running until that update has been piggybacked the full retransmit limit
// or that many protocol periods have passed, and then stops (Left reports
// true). A member with no other live or suspect member has nobody to tell
// and stops at once (as memberlist's Leave does without alive members).
func (m *Member) Leave(now time.Duration) error {
	if m.st != running {
		return ErrLeft
	}
	if m.live == 0 {
		m.st = left
		return nil
	}
	m.st = leaving
	u := Update{Kind: UpdateDead, Node: m.self, Incarnation: m.inc, From: m.self.ID}
	u.Proof = m.selfProof(u)
	m.enqueue(u)
	m.push(u, nil, m.cfg.GossipFanout)
	limit := retransmitLimit(m.cfg.RetransmitMult, m.groupSize())
	m.leaveDeadline = now + mulTimer(m.cfg.ProbeInterval, limit)
	return nil
}

func (m *Member) leaveQueued() bool {
	b := m.queue.byID[m.self.ID]
	return b != nil && b.u.change() == changeLeave
}
