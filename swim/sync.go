package swim

import (
	"time"
)

// View transfers: the answer to a join and the periodic anti-entropy
// exchange (push-pull), each a member's whole view in MsgSync packets.

// pushPull is one anti-entropy exchange with a random alive member: this
// member's whole view in MsgSync packets (push), then a MsgJoin that makes
// the receiver answer with its own (pull).
func (m *Member) pushPull() {
	var p *peer
	if n := len(m.list); n > 0 {
		for tries := 0; tries < 8 && p == nil; tries++ {
			if c := m.list[m.rng.IntN(n)]; c.state == StateAlive {
				p = c
			}
		}
	}
	if p == nil {
		return
	}
	m.stats.PushPulls++
	m.sendState(p.node, false)
	m.sendSync(p.node)
	m.askView(p.node)
}

// askView sends to a MsgJoin carrying this member's Alive, which the
// receiver answers with its view.
func (m *Member) askView(to Node) {
	m.out = append(m.out, Packet{Kind: MsgJoin, From: m.self, To: to,
		Updates: []Update{m.selfAlive()}})
}

// pushPullInterval scales the base interval to the group: unchanged up to
// 32 members, then times ceil(n/32), so that an exchange's cost (a full
// view, about n/40 packets each way) stays about 3 packets per base interval
// whatever n.
func pushPullInterval(base time.Duration, n int) time.Duration {
	const perBase = 32
	return base * time.Duration((n+perBase-1)/perBase)
}

// pushPullDue returns when the next anti-entropy exchange is due: the
// interval for the current group size after the previous exchange, and the
// first one at a random fraction (drawn at the first Tick) of that interval
// after the first Tick. The size is read when asked, not when the previous
// exchange was scheduled: a member starts alone and joins, and an interval
// fixed at its first Tick (n = 1, 30 s) made all 128 members of a group
// formed together exchange in its first 30 s, 4 times the rate of the
// 120 s interval its size calls for (bench/memberlist, N = 128: 278 bytes
// per member per second of view transfers in the first 20 s).
func (m *Member) pushPullDue() time.Duration {
	iv := pushPullInterval(*m.cfg.PushPullInterval, m.NumAlive())
	if !m.ppDone {
		return m.ppFrom + time.Duration(m.ppFrac*float64(iv))
	}
	return m.ppFrom + iv
}

// sendSync answers a join with this member's whole view, in as many
// packets as the size limit needs.
func (m *Member) sendSync(to Node) {
	ups := make([]Update, 0, len(m.peers)+1)
	ups = append(ups, m.selfAlive())
	for _, p := range m.all {
		ups = append(ups, m.viewUpdate(p))
	}
	for len(ups) > 0 {
		pk := Packet{Kind: MsgSync, From: m.self, To: to}
		size := pk.Size()
		n := 0
		for n < len(ups) && size+ups[n].Size() <= m.cfg.MaxPacketSize {
			size += ups[n].Size()
			n++
		}
		n = max(n, 1)
		pk.Updates = ups[:n:n] // ups is this call's own slice: no copy needed
		ups = ups[n:]
		m.out = append(m.out, pk)
	}
}

// viewUpdate returns the update that states p's entry in the local view.
func (m *Member) viewUpdate(p *peer) Update {
	u := Update{Node: p.node, Incarnation: p.inc}
	switch p.state {
	case StateAlive:
		u.Kind, u.From, u.Proof = UpdateAlive, p.node.ID, p.proof
		u.Meta, u.Versions = p.meta, p.versions
	case StateSuspect:
		u.Kind, u.From = UpdateSuspect, p.susp.from
	case StateDead:
		u.Kind, u.From = UpdateDead, p.deadFrom
	case StateLeft:
		u.Kind, u.From, u.Proof = UpdateDead, p.node.ID, p.proof
	}
	return u
}

// applyView merges one entry of a view transfer (MsgSync: a join answer
// or a push-pull). Alive entries and leaves are applied without gossip
// (old news to the group). A Suspect or Dead about a member held alive or
// suspect enters as this member's own suspicion (From this member), which
// it gossips and, in the eager modes, sends to the suspect at once; never
// as an instant death. This is memberlist's rule for push-pull states: a
// transfer carries no proof the accused heard the accusation, and a Dead
// applied on the spot would leave it no chance to refute. See
// docs/algorithms.md, “SWIM: hostile and stale updates”.
func (m *Member) applyView(now time.Duration, u Update) {
	p := m.peers[u.Node.ID]
	if p != nil && u.Node.ID != m.self.ID && (p.state == StateAlive || p.state == StateSuspect) &&
		u.Node.Addr == p.node.Addr && (u.Kind == UpdateSuspect || (u.Kind == UpdateDead && !u.IsLeave())) {
		m.apply(now, Update{Kind: UpdateSuspect, Node: p.node, Incarnation: u.Incarnation, From: m.self.ID}, true)
		return
	}
	m.apply(now, u, false)
}
