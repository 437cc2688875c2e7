package swim

import (
	"cmp"
	"slices"
	"time"
)

// apply merges one update into the local view with SWIM's precedence rules
// (ALGORITHMS.md §10.1), for member l, local entry in incarnation j and
// update incarnation i:
//
//   - Alive(l, i) overrides Suspect(l, j) and Alive(l, j) when i > j, and
//     Dead(l, j) or Left(l, j) when i > j (a rejoin or a refuted
//     declaration);
//   - Suspect(l, i) overrides Suspect(l, j) when i > j and Alive(l, j) when
//     i ≥ j; with i = j it is a confirmation (Lifeguard);
//   - Dead(l, i) overrides Alive(l, j) and Suspect(l, j) when i ≥ j. SWIM's
//     Confirm overrides them "for any j"; like memberlist we ignore a Dead
//     older than the entry, so that a member that refuted (or restarted and
//     rejoined with a higher incarnation) is not killed by a stale
//     declaration still in flight;
//   - a member's own leave, Left(l, i), also overrides Dead(l, j) when
//     i ≥ j, so that Left and Dead are ordered and all views agree; a
//     member holding Left(l, j) that hears Dead(l, i), i ≤ j, gossips the
//     leave again and sends it to the sender and the declarer (correctLeft),
//     so that members that missed the leave do not keep Dead.
//
// Updates about this member itself trigger refutation. Applied updates are
// queued for dissemination when gossip is true (false for a join's view
// transfer, which is old news to the group).
func (m *Member) apply(now time.Duration, u Update, gossip bool) {
	if u.Node.ID == m.self.ID {
		m.aboutSelf(u)
		return
	}
	p := m.peers[u.Node.ID]
	switch u.Kind {
	case UpdateAlive:
		if p == nil {
			p = &peer{node: u.Node, state: StateAlive, inc: u.Incarnation, since: now}
			m.peers[u.Node.ID] = p
			m.all = append(m.all, p)
			m.live++
			m.insertInList(p)
			if gossip {
				m.heard(now, p)
			}
			m.emit(EventJoin, p, u.From, now)
			m.gossip(u, gossip)
			return
		}
		if u.Incarnation <= p.inc {
			return
		}
		prev := p.state
		p.node, p.inc, p.since = u.Node, u.Incarnation, now
		switch prev {
		case StateSuspect:
			m.clearSuspicion(p)
			p.state = StateAlive
			m.emit(EventAlive, p, u.From, now)
		case StateDead, StateLeft:
			p.state = StateAlive
			m.live++
			m.removeTomb(p)
			m.insertInList(p)
			m.emit(EventJoin, p, u.From, now)
		}
		if gossip {
			m.heard(now, p)
		}
		m.gossip(u, gossip)
		if gossip && prev == StateSuspect {
			// This member held the suspicion that u refutes: pass the
			// refutation on at once, racing the others' timers.
			m.forward(u, nil, m.cfg.GossipFanout)
		}
	case UpdateSuspect:
		if p == nil {
			return
		}
		switch p.state {
		case StateAlive:
			if u.Incarnation < p.inc {
				return
			}
			p.inc = u.Incarnation
			m.startSuspicion(now, p, u.From)
			m.gossip(u, gossip)
		case StateSuspect:
			switch {
			case u.Incarnation > p.inc:
				p.inc = u.Incarnation
				m.startSuspicion(now, p, u.From)
				m.gossip(u, gossip)
			case u.Incarnation == p.inc:
				if p.susp.confirm(u.From) && len(p.susp.confirmers) <= p.susp.k {
					m.gossip(u, gossip) // Lifeguard: re-gossip the first K
				}
			}
		}
	case UpdateDead:
		if p != nil && p.state == StateLeft && !u.IsLeave() && u.Incarnation <= p.inc {
			m.correctLeft(p, u, gossip)
			return
		}
		if p == nil || u.Incarnation < p.inc {
			return
		}
		switch p.state {
		case StateAlive, StateSuspect:
			m.kill(now, p, u, gossip)
		case StateDead:
			if u.IsLeave() {
				m.leftAfterDead(now, p, u, gossip)
			}
		}
	}
}

// leftAfterDead records a member's own leave over a Dead that others
// declared in the same incarnation or earlier: the leave is the member's
// own word, and ranking Left above Dead makes the two final states totally
// ordered, so every view converges on the same one whichever arrives first
// (before, a member that had declared the leaver dead kept Dead while the
// rest of the group kept Left). It emits EventLeave.
func (m *Member) leftAfterDead(now time.Duration, p *peer, u Update, gossip bool) {
	m.removeTomb(p)
	p.state = StateLeft
	p.inc, p.since, p.deadFrom = u.Incarnation, now, u.From
	m.emit(EventLeave, p, u.From, now)
	m.gossip(u, gossip)
}

// correctLeft answers a Dead heard about p, which this member knows left
// in that incarnation or later: whoever sent or declared it missed the
// leave, whose retransmissions (the leaver's and everyone's) may be over,
// and would keep Dead until an anti-entropy exchange. The leave is queued
// again (unless it still is) and, in the eager modes, sent at once to the
// packet's sender and the declarer. Each Dead heard costs at most two
// packets, and a corrected member gossips the leave, never the Dead again.
// A view transfer (gossip false) needs no answer: the exchange's pull
// carries this member's view.
func (m *Member) correctLeft(p *peer, u Update, gossip bool) {
	if !gossip {
		return
	}
	left := m.viewUpdate(p)
	if b := m.bidx[p.node.ID]; b == nil || b.u != left {
		m.enqueue(left)
	}
	var to []*peer
	for _, id := range []ID{m.stepFrom, u.From} {
		if q := m.peers[id]; q != nil && (q.state == StateAlive || q.state == StateSuspect) && !slices.Contains(to, q) {
			to = append(to, q)
		}
	}
	m.forward(left, to, 0)
}

// kill moves p to Dead (or Left for a leave) as stated by u.
func (m *Member) kill(now time.Duration, p *peer, u Update, gossip bool) {
	if p.state == StateSuspect {
		m.clearSuspicion(p)
	}
	p.inc, p.since, p.deadFrom = u.Incarnation, now, u.From
	m.live--
	if u.IsLeave() {
		p.state = StateLeft
		m.emit(EventLeave, p, u.From, now)
	} else {
		p.state = StateDead
		p.inTomb = true
		m.tomb = append(m.tomb, p)
		m.emit(EventDead, p, u.From, now)
	}
	if m.forceNext == p {
		m.forceNext = nil
	}
	m.gossip(u, gossip)
}

func (m *Member) clearSuspicion(p *peer) {
	p.susp = nil
	if i := slices.Index(m.suspects, p); i >= 0 {
		m.suspects = slices.Delete(m.suspects, i, i+1)
	}
}

func (m *Member) removeTomb(p *peer) {
	if !p.inTomb {
		return
	}
	p.inTomb = false
	if i := slices.Index(m.tomb, p); i >= 0 {
		m.tomb = slices.Delete(m.tomb, i, i+1)
	}
}

// aboutSelf handles an update about this member: a suspicion or
// declaration in the current incarnation or later (or an Alive claiming a
// later one) is refuted with a higher incarnation, unless the member is
// leaving. An older suspicion or declaration comes from a member that missed
// the refutation and that everyone else now ignores: the current Alive is
// announced again (unless it is still being gossiped), without a new
// incarnation, so that this member corrects it.
func (m *Member) aboutSelf(u Update) {
	if m.st != running {
		return
	}
	switch u.Kind {
	case UpdateAlive:
		if u.Incarnation <= m.inc {
			return
		}
	case UpdateSuspect, UpdateDead:
		if u.Incarnation < m.inc {
			if !m.selfQueued() {
				m.enqueue(m.selfAlive())
			}
			m.tellAlive(u.From)
			m.tellAlive(m.stepFrom)
			return
		}
	}
	m.refute(u.Incarnation)
	if u.Kind != UpdateAlive {
		m.tellAlive(u.From)
		m.tellAlive(m.stepFrom)
	}
}

// tellAlive sends this member's current Alive at once, in a ping, to the
// member id that suspects it or declared it dead, or that sent the packet
// with the suspicion or declaration (which it believes: a member that kept a
// restarted member dead answers its probes with the Dead notice), at most
// once per incarnation and member, instead of leaving the refutation to
// piggybacking alone: a suspecter hears it before its suspicion timer
// fires even when it probes elsewhere. Not to the sender of the packet being
// answered (the answer carries the Alive, newest of the least sent), and not
// in ModeSWIM (plain SWIM refutes by piggybacking only).
func (m *Member) tellAlive(id ID) {
	if m.cfg.Mode == ModeSWIM || id == "" || id == m.self.ID || id == m.replyTo {
		return
	}
	p := m.peers[id]
	if p == nil {
		return
	}
	told := m.toldThisIncarnation()
	if told[id] {
		return
	}
	told[id] = true
	m.sendAlive(p)
}

// toldThisIncarnation returns the set of members sent this member's Alive
// directly, emptied when the incarnation changed since it was filled.
func (m *Member) toldThisIncarnation() map[ID]bool {
	if m.toldInc != m.inc {
		m.toldInc = m.inc
		clear(m.told)
	}
	if m.told == nil {
		m.told = make(map[ID]bool)
	}
	return m.told
}

// sendAlive pings p with this member's Alive as the first update.
func (m *Member) sendAlive(p *peer) {
	m.stats.AliveSent++
	m.seq++
	m.send(Packet{Kind: MsgPing, To: p.node, Ping: Ping{Seq: m.seq},
		Updates: []Update{m.selfAlive()}})
}

// announceAlive sends this member's new Alive at once to up to
// IndirectChecks random alive or suspect members (not in ModeSWIM), so that
// a refutation starts spreading from several members in the same period.
func (m *Member) announceAlive() {
	if m.cfg.Mode == ModeSWIM || len(m.list) == 0 {
		return
	}
	k := m.cfg.IndirectChecks
	told := m.toldThisIncarnation()
	for tries := 0; k > 0 && tries < 4*m.cfg.IndirectChecks; tries++ {
		p := m.list[m.rng.IntN(len(m.list))]
		if (p.state != StateAlive && p.state != StateSuspect) || told[p.node.ID] || p.node.ID == m.replyTo {
			continue
		}
		told[p.node.ID] = true
		m.sendAlive(p)
		k--
	}
}

// selfAlive is this member's Alive in its current incarnation.
func (m *Member) selfAlive() Update {
	return Update{Kind: UpdateAlive, Node: m.self, Incarnation: m.inc, From: m.self.ID}
}

// selfQueued reports whether an update about this member waits in the
// dissemination queue.
func (m *Member) selfQueued() bool { return m.bidx[m.self.ID] != nil }

// refute raises the incarnation above accused (saturating) and gossips
// Alive; Lifeguard counts it against the local health.
func (m *Member) refute(accused Incarnation) {
	inc := m.inc.Next()
	if accused >= inc {
		inc = accused.Next()
	}
	m.inc = inc
	m.stats.Refutations++
	m.adjustHealth(1)
	m.enqueue(m.selfAlive())
	m.announceAlive()
}

func (m *Member) gossip(u Update, ok bool) {
	if ok {
		m.enqueue(u)
	}
}

// enqueue adds u to the dissemination queue, replacing any queued update
// about the same member (the newer one supersedes it and starts its
// transmissions from zero). O(1): the queue is indexed by member ID.
func (m *Member) enqueue(u Update) {
	m.bseq++
	if b := m.bidx[u.Node.ID]; b != nil {
		*b = bcast{u: u, id: m.bseq}
		return
	}
	if m.bidx == nil {
		m.bidx = make(map[ID]*bcast)
	}
	b := &bcast{u: u, id: m.bseq}
	m.bidx[u.Node.ID] = b
	m.bq = append(m.bq, b)
}

// piggyback appends to ups the queued updates least sent first (newest
// first among equals) that fit in budget bytes, counts a transmission for
// each, and drops those sent λ·ceil(log10(n+1)) times (SWIM §4.1,
// ALGORITHMS.md §10.1). A queued update equal to one of the priority
// updates already in ups is not repeated but counts as sent.
func (m *Member) piggyback(ups []Update, budget int) []Update {
	if len(m.bq) == 0 {
		return ups
	}
	if len(m.bq) > 1 {
		slices.SortFunc(m.bq, func(a, b *bcast) int {
			if c := cmp.Compare(a.tx, b.tx); c != 0 {
				return c
			}
			return cmp.Compare(b.id, a.id)
		})
	}
	limit := retransmitLimit(m.cfg.RetransmitMult, m.NumAlive())
	prio := len(ups)
	for _, b := range m.bq {
		if slices.Contains(ups[:prio], b.u) {
			b.tx++ // already in the packet as a priority update
			continue
		}
		s := b.u.Size()
		if s > budget {
			continue
		}
		if ups == nil {
			ups = make([]Update, 0, min(len(m.bq), 8))
		}
		ups = append(ups, b.u)
		budget -= s
		b.tx++
		if budget < 32 {
			break
		}
	}
	m.bq = slices.DeleteFunc(m.bq, func(b *bcast) bool {
		if b.tx >= limit {
			delete(m.bidx, b.u.Node.ID)
			return true
		}
		return false
	})
	return ups
}
