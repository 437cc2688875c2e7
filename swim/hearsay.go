package swim

// Accusations taken as this member's own suspicion rather than as they
// come (docs/algorithms.md, “SWIM: hostile and stale updates”): those of
// a view transfer (applyView) and those gossiped by a sender this member
// does not hold live at the address the packet came from (hearsay). A
// Suspect or Dead carries no proof that the accused heard it; applied as
// it comes, a declaration kills at once, and the accused's refutation
// brings it back as a rejoin.

// accusedLive returns the member that u, a Suspect or Dead (not a leave),
// accuses while this member holds it alive or suspect at the address u
// names; nil for any other update (about this member, about a member not
// held or held down, naming another address: applyUpdate's rules).
func (m *Member) accusedLive(u *Update) *peer {
	if u.Node.ID == m.self.ID || !u.change().accusation() {
		return nil
	}
	p := m.peers[u.Node.ID]
	if p == nil || (p.state != StateAlive && p.state != StateSuspect) || p.node.Addr != u.Node.Addr {
		return nil
	}
	return p
}

// suspectInstead merges an accusation of p at incarnation inc as this
// member's own suspicion timer (From this member), made from hearsay
// (suspicion.hearsay), so that p can refute before anyone declares it
// dead. It is this member's timer, not its evidence: in the Lifeguard
// modes it is sent to the suspect only (at once when verified, else with
// the notice of any packet to it), never gossiped, so other members do
// not take it for this member's independent suspicion and count it as a
// Lifeguard confirmation; a stranger's one datagram to each member made
// every member an accuser and brought the timeout to its minimum (issue
// 27, atk27 F3). In plain SWIM (no confirmations, no immediate sends) it
// is gossiped, the suspect's only way to hear of it. About a member
// already suspect it is never a confirmation (applySuspect); above the
// held incarnation it raises it and keeps the running timer only when the
// packet's sender is held live (a view transfer from a member), and is
// ignored otherwise: a stranger's Suspect one MaxIncarnationJump above
// the last every 100 ms made each of the live suspect's refutations stale
// here, and the timer kept (atk27 F1) declared it dead (rv27,
// TestHearsayRaisesLeaveNoRefutationStale). A member's
// own failed probe of the suspect later makes the suspicion its own word
// (failProbe). At most hearsayPerPeriod such suspicions are made in a
// protocol period (Stats.HearsayDropped past it): each costs an immediate
// send and the suspect's refutation, and a stranger's spray of accusations
// made an 8-member group send 10-11 times the stranger's bytes (atk27
// F15).
func (m *Member) suspectInstead(in *inbound, p *peer, inc Incarnation) {
	u := Update{Kind: UpdateSuspect, Node: p.node, Incarnation: inc, From: m.self.ID}
	if !m.credible(in.now, p, &u) {
		return
	}
	switch {
	case p.state == StateSuspect && u.Incarnation > p.inc && in.liveSender:
		p.inc = u.Incarnation
	case p.state == StateAlive && u.Incarnation >= p.inc:
		if m.queue.hearsaid >= hearsayPerPeriod {
			m.stats.HearsayDropped++
			return
		}
		m.queue.hearsaid++
		p.inc = u.Incarnation
		m.startSuspicion(in.now, p, m.self.ID)
		p.susp.hearsay = true
		if m.cfg.Mode == ModeSWIM {
			m.enqueue(u)
		} else if p.verified {
			m.push(u, []*peer{p}, 0)
		}
	}
}

// hearsayPerPeriod bounds the suspicions made from hearsay and view
// transfers in one protocol period (suspectInstead).
const hearsayPerPeriod = 3

// hearsay merges u, a gossiped accusation of p (accusedLive) in a packet
// whose sender this member did not hold alive or suspect at the address
// the packet came from (inbound.liveSender false: a stranger, a member
// held dead, a packet naming a member but sent from elsewhere), counted in
// Stats.AccusationsUnvouched. Such a sender speaks for no member's probe,
// so the accusation is taken as this member's own suspicion
// (suspectInstead), never as a death: a stranger sending Dead(v) at v's
// incarnation every 100 ms made every member's application see v die and
// rejoin about 48 times in 5 s, in signed groups too (issue 27, user46
// M3). About a member already suspect at that incarnation it is no
// confirmation (Lifeguard's are independent suspicions of members, and a
// stranger could name as many accusers as it likes), and changes
// nothing, nor above it (suspectInstead: a raise would make the suspect's
// refutations stale, and the running timer is kept, atk27 F1).
//
// A real death still spreads at once: the declarer and every member that
// relays the declaration are held live where they send from. A member's
// own leave is no accusation and keeps its rules (signed leaves are
// verified, checkSelfUpdate).
func (m *Member) hearsay(in *inbound, p *peer, u *Update) {
	m.stats.AccusationsUnvouched++
	m.suspectInstead(in, p, u.Incarnation)
}
