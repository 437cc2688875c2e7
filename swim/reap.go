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
		return (p.state == StateDead || p.state == StateLeft) && now-p.since >= *m.cfg.DeadRetention
	}
	if slices.ContainsFunc(m.all, expired) {
		m.forget(expired)
	}
}

// makeRoom reports whether the view can take one more member, evicting
// the dead or left member whose state is oldest when it is full.
func (m *Member) makeRoom() bool {
	if len(m.peers)+1 < m.cfg.MaxMembers {
		return true
	}
	var oldest *peer
	for _, p := range m.all {
		if (p.state == StateDead || p.state == StateLeft) && (oldest == nil || p.since < oldest.since) {
			oldest = p
		}
	}
	if oldest == nil {
		return false
	}
	m.forget(func(p *peer) bool { return p == oldest })
	return true
}

// forget removes the dead or left members for which gone is true from the
// view, the probe list and the reconnect candidates.
func (m *Member) forget(gone func(p *peer) bool) {
	m.all = slices.DeleteFunc(m.all, func(p *peer) bool {
		if !gone(p) {
			return false
		}
		delete(m.peers, p.node.ID)
		m.removeTomb(p)
		m.stats.Reaped++
		return true
	})
	kept, idx := m.list[:0], m.idx
	for i, p := range m.list {
		if m.peers[p.node.ID] == p {
			kept = append(kept, p)
			continue
		}
		p.inList = false
		if i < m.idx {
			idx--
		}
	}
	clear(m.list[len(kept):])
	m.list, m.idx = kept, idx
}
