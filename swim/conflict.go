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
// EventConflict and keeps retrying its join.
//
// A dead or left entry can be reclaimed by a node at another address (a
// member restarted on a new address or port), once it has been down for
// Config.DeadReclaimTime (memberlist's DeadNodeReclaimTime, whose 0 means
// never). The claimant hears the entry's declaration at incarnation j
// (in the join's answer, or sent back at once) and refutes it with an
// Alive at j+1 from its own address (aboutSelf); that Alive replaces the
// entry. Requiring an incarnation above j keeps the stored incarnation
// monotone, so that the old life's Alive and Dead updates still in flight
// are stale against the new life, and keeps the signed-update rule whole:
// an Alive that raises the incarnation needs a proof under the key bound
// to the ID, so only the same identity reclaims a retained entry (anyone,
// trust on first use, once it is reaped).

// conflictEvery is how often one conflicting pair is reported again while
// it persists (every claim is counted in Stats.Conflicts); a new Join's
// refusal is reported at once.
const conflictEvery = 10

// conflict records a claim of held's ID by the node claim.
func (m *Member) conflict(now time.Duration, claim, held Node) {
	m.stats.Conflicts++
	last := m.join.lastConflict
	if last.claim == claim && last.held == held && now < last.at+conflictEvery*m.cfg.ProbeInterval {
		return
	}
	m.join.lastConflict = conflictNote{claim: claim, held: held, at: now}
	m.ready.events = append(m.ready.events, Event{Kind: EventConflict, Node: claim, From: claim.ID, At: now, Held: held})
}

// conflictNote is the last conflict reported.
type conflictNote struct {
	claim, held Node
	at          time.Duration
}

// refuseJoin answers a join from a node claiming the ID of a member held
// alive or suspect at another address (or this member's own ID), or dead
// or left for less than DeadReclaimTime: a MsgSync with only the entry
// kept under that ID, which the joiner reads as a conflict (or, for a dead
// or left entry, as the declaration to refute before it reclaims the ID),
// and no view. With signed self-updates, a join whose Alive is not signed
// with the key bound to a dead or left entry is refused too: it could not
// reclaim the ID before the entry is reaped, and answering it with the
// view every period until then would cost a view per period. A join
// from the held address is the holder restarting and is answered, unless
// its Alive is signed with another key than the one bound to the ID (an
// identity file lost): its Alive would be refused as a bad proof, and the
// joiner, answered with a view, would take itself for a member while every
// other member holds it dead. The answer echoes the join's token, which
// tells the joiner it answers its join (refusesJoin).
func (m *Member) refuseJoin(now time.Duration, joiner Node, ups []Update, token uint64) bool {
	held := m.self
	u := m.selfAlive()
	rekeyed := false
	if joiner.ID != m.self.ID {
		p := m.peers[joiner.ID]
		if p == nil || (p.state != StateAlive && p.state != StateSuspect && m.reclaimable(now, p) && !m.foreignKey(p, ups)) {
			return false
		}
		held, u = p.node, m.viewUpdate(p)
		rekeyed = joiner.Addr == held.Addr && hasAlive(ups, p.node.ID) && m.foreignKey(p, ups)
	}
	if joiner.Addr == held.Addr && !rekeyed {
		return false
	}
	m.conflict(now, joiner, held)
	m.ready.packets = append(m.ready.packets, Packet{Kind: MsgSync, From: m.self, To: joiner, Updates: []Update{u}, JoinToken: token})
	return true
}

// reclaimable reports whether p, dead or left, may be taken over by a
// node at another address: it has been down for DeadReclaimTime.
func (m *Member) reclaimable(now time.Duration, p *peer) bool {
	return now-p.since >= m.cfg.DeadReclaimTime
}

// reclaim handles an update u naming the ID of p, dead or left, at another
// address, and reports whether apply goes on with it. One at or below the
// stored incarnation is about a life this member does not hold (the old
// node's, or a claimant that has not yet refuted the declaration) and
// changes nothing: a leave from a node refused under p's ID (a member
// restarted on a new port that gave up its join) must not turn p from Dead
// to Left, which would report a crashed member as gone gracefully. A stale Alive
// sent by the claimant itself gets the declaration back at once, so that
// it refutes. An Alive above the stored incarnation reclaims p's ID once p
// has been down for DeadReclaimTime and is a conflict before; a
// declaration or leave above it is a later life's and moves p to u's
// address.
func (m *Member) reclaim(in *inbound, p *peer, u *Update) bool {
	now := in.now
	if u.Kind == UpdateSuspect {
		return false // a suspicion changes no dead or left entry
	}
	if u.Incarnation <= p.inc {
		if u.Kind == UpdateAlive && in.from == u.Node.ID {
			m.accuseBack(in, p, u.Node)
		}
		return false
	}
	if u.Kind == UpdateAlive {
		if !m.reclaimable(now, p) {
			m.conflict(now, u.Node, p.node)
			return false
		}
		m.stats.Reclaims++
	}
	m.readdress(p, u.Node)
	p.answered = false
	return true
}

// foreignKey reports whether, with signed self-updates, the joiner's Alive
// among ups (about p's ID) lacks a proof under the key bound to p.
func (m *Member) foreignKey(p *peer, ups []Update) bool {
	if !m.signed() {
		return false
	}
	bound := m.keys.trusted[p.node.ID]
	if p.key != "" {
		bound = p.key
	}
	if bound == "" {
		return false
	}
	for i := range ups {
		if u := &ups[i]; u.Kind == UpdateAlive && u.Node.ID == p.node.ID {
			return string(u.Proof.Key()) != bound
		}
	}
	return true
}

// hasAlive reports whether ups holds an Alive about id (a join carries
// its sender's; an anti-entropy pull may carry none).
func hasAlive(ups []Update, id ID) bool {
	for i := range ups {
		if ups[i].Kind == UpdateAlive && ups[i].Node.ID == id {
			return true
		}
	}
	return false
}

// JoinRefusal is what a joining member learnt from a member that refused
// its join for a dead or left holder of its ID: the refusing member's
// answer (a MsgSync with only that entry) names this member's ID at
// another address, dead or left at Incarnation. The refusing member keeps
// the ID for that entry either because the holder has been dead or left
// for less than its Config.DeadReclaimTime, or, with signed self-updates,
// because this member's key is not the one bound to the ID (which only
// reaping frees); the joiner cannot tell which. It refutes the
// declaration and retries its join every ProbeInterval meanwhile (a live
// holder is a conflict instead: EventConflict).
type JoinRefusal struct {
	By          Node          // the member that refused
	Held        Node          // the entry it keeps under this member's ID
	Left        bool          // the holder left, rather than was declared dead
	Incarnation Incarnation   // of the death or leave
	At          time.Duration // when the refusal arrived
}

// JoinRefusal returns the latest refusal of this member's join for a dead
// or left holder of its ID, heard since the last Join; ok is false when
// none was, or once a member admitted it.
func (m *Member) JoinRefusal() (r JoinRefusal, ok bool) {
	if m.join.refusal == nil {
		return JoinRefusal{}, false
	}
	return *m.join.refusal, true
}

// noteRefusal records a view transfer from by that left this member
// joining (Step): one naming its ID dead or left at another address is
// a refusal (JoinRefusal), and so is a refusal at this member's own
// address (selfRefusal: its key is not the one bound to the ID).
func (m *Member) noteRefusal(now time.Duration, by Node, ups []Update) {
	for i := range ups {
		u := &ups[i]
		if u.Node.ID != m.self.ID || (u.Node.Addr == m.self.Addr && len(ups) > 1) {
			continue
		}
		if u.Kind == UpdateDead {
			m.join.refusal = &JoinRefusal{By: by, Held: u.Node, Left: u.change() == changeLeave, Incarnation: u.Incarnation, At: now}
			return
		}
		m.join.holder = u.Node
		return
	}
}

// JoinConflict returns the node that holds this member's ID alive or
// suspect at another address, as a member answering the latest Join said
// (the holder's own answer, or a view naming it): the join is refused
// and retried. ok is false when no answer since the last Join said so. An
// EventConflict about this member's ID reports this, and also a claim of
// its ID that this member refused (a newcomer under its ID, gossip naming
// it elsewhere), which does not refuse its join.
func (m *Member) JoinConflict() (holder Node, ok bool) {
	return m.join.holder, m.join.holder.ID != ""
}

// selfRefusal reports whether pkt is a member's refusal of this member's
// join (refuseJoin): a view transfer whole in one packet with only an
// entry under this member's ID. A view always names its sender too.
func (m *Member) selfRefusal(pkt *Packet) bool {
	return pkt.Kind == MsgSync && pkt.Part.IsZero() && len(pkt.Updates) == 1 &&
		pkt.Updates[0].Node.ID == m.self.ID && pkt.From.ID != m.self.ID
}
