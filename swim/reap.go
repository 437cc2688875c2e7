package swim

import (
	"slices"
	"time"
)

// Forgetting members: dead and left members are reaped DeadRetention after
// their last state change, and the view holds at most MaxMembers entries
// (see Config). Without both, the member list only grew: every fake Alive
// (anyone in plain mode) added an entry forever, and every join answer and
// push-pull carried all the dead.

// reapExpired forgets the dead and left members whose retention ended, at
// most once per ProbeInterval (one pass over the view).
func (m *Member) reapExpired(now time.Duration) {
	if now < m.nextReap {
		return
	}
	m.nextReap = now + m.cfg.ProbeInterval
	expired := func(p *peer) bool {
		return (p.state == StateDead || p.state == StateLeft) && now-p.since >= m.cfg.DeadRetention
	}
	if slices.ContainsFunc(m.all, expired) {
		m.forget(expired)
	}
}

// makeRoom reports whether the view can take one more member, evicting
// one when it is full. A member that answered a ping of this member
// (proven real) outranks one known only from what others said: the
// candidates, in order, are the dead or left members that never answered
// (the oldest state first), then, for a newcomer that speaks for itself
// (direct: its Alive came in a packet it sent), the live members that
// never answered (suspects first, then the oldest state), then the dead
// or left members that answered (the oldest first). A relayed newcomer
// never evicts a member that answered. So a flood of forged Alive updates
// cannot evict the dead members that answered, which the two sides of a
// partition need to find each other again by reconnect pings; and a view
// full of forged members, which never answer, cannot refuse a genuine
// member while the fakes wait to be declared dead.
func (m *Member) makeRoom(direct bool) bool {
	if len(m.peers)+1 < m.cfg.MaxMembers {
		return true
	}
	down := func(p *peer) bool { return p.state == StateDead || p.state == StateLeft }
	var oldest *peer
	pick := func(ok func(p *peer) bool, better func(p, q *peer) bool) {
		for _, p := range m.all {
			if ok(p) && (oldest == nil || better(p, oldest)) {
				oldest = p
			}
		}
	}
	older := func(p, q *peer) bool { return p.since < q.since }
	pick(func(p *peer) bool { return down(p) && !p.answered }, older)
	if oldest == nil && direct {
		pick(func(p *peer) bool {
			return !down(p) && !p.answered && !(m.pr.active && m.pr.target == p)
		}, func(p, q *peer) bool {
			if (p.state == StateSuspect) != (q.state == StateSuspect) {
				return p.state == StateSuspect
			}
			return p.since < q.since
		})
		if oldest != nil {
			m.unlive(oldest)
		}
	}
	if oldest == nil && direct {
		pick(down, older)
	}
	if oldest == nil {
		return false
	}
	m.forget(func(p *peer) bool { return p == oldest })
	return true
}

// unlive takes a live member out of the live set before it is forgotten.
func (m *Member) unlive(p *peer) {
	if p.state == StateSuspect {
		m.clearSuspicion(p)
	}
	p.state = StateDead // forgotten at once by the caller
	m.live--
	if !p.verified {
		m.unverified--
	}
	if m.probing.forceNext == p {
		m.probing.forceNext = nil
	}
}

// forget removes the dead or left members for which gone is true from the
// view, the probe list, the reconnect candidates and the dissemination
// queue: an evicted member's queued Alive goes with it, so a flood of
// forged Alives from ever new senders, answered without the queue
// (reply.go), does not grow the queue beyond the view.
func (m *Member) forget(gone func(p *peer) bool) {
	queued := false
	m.all = slices.DeleteFunc(m.all, func(p *peer) bool {
		if !gone(p) {
			return false
		}
		if b := m.queue.byID[p.node.ID]; b != nil {
			delete(m.queue.byID, p.node.ID)
			b.tx = -1 // marks it for removal below
			queued = true
		}
		delete(m.peers, p.node.ID)
		if m.verifiedAt[p.node.Addr] == p {
			delete(m.verifiedAt, p.node.Addr)
		}
		m.removeTomb(p)
		m.stats.Reaped++
		return true
	})
	m.filterList(func(p *peer) bool { return m.peers[p.node.ID] == p })
	if queued {
		m.queue.items = slices.DeleteFunc(m.queue.items, func(b *bcast) bool { return b.tx < 0 })
		m.clearViewMarks()
	}
}
