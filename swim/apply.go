package swim

import (
	"slices"
	"time"
)

// applyUpdate merges one update into the local view with SWIM's precedence rules
// (SWIM §4.2; docs/algorithms.md, “SWIM suspicion and incarnations”), for
// member l, local entry in incarnation j and update incarnation i:
//
//   - Alive(l, i) overrides Suspect(l, j) and Alive(l, j) when i > j, and
//     Dead(l, j) or Left(l, j) when i > j (a rejoin or a refuted
//     declaration);
//   - Suspect(l, i) overrides Alive(l, j) when i ≥ j; over Suspect(l, j),
//     j ≤ i, it is a confirmation (Lifeguard) and raises the incarnation
//     to i, keeping the running suspicion timer;
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
// More rules keep the view safe against stale, replayed and crafted
// updates (docs/algorithms.md, “SWIM: hostile and stale updates”):
//
//   - with signed self-updates (Config.SigningKey), an Alive or leave that
//     would change the view needs a valid proof under the key bound to the
//     member (checkSelfUpdate), and an accusation above the stored
//     incarnation is taken at it, so only the member raises its number;
//   - an update more than MaxIncarnationJump above the stored incarnation
//     (an accusation: more than half of it, maxAccusationJump) is refused
//     as implausible (Stats.Implausible);
//   - the stored incarnation never decreases, in any state: Dead(l, i) or
//     Left(l, i) over Dead(l, j) or Left(l, j), i > j, stores i;
//   - an Alive(l, i) no newer than a Suspect, Dead or Left held at j ≥ i
//     sends that accusation back at once to the packet's sender and to l
//     (accuseBack), so l refutes without waiting for a reconnect ping;
//   - a Suspect or Dead (not a leave) about a member held alive or
//     suspect, in a view transfer or gossiped in a packet whose sender is
//     not held alive or suspect at the address it came from, enters as this
//     member's own suspicion timer, told to the suspect (gossiped in plain
//     SWIM only), never as an instant death (applyView, hearsay,
//     suspectInstead; the caller, mergeUpdates, applies the rule);
//   - an update naming a live member's ID at another address is a
//     conflicting claim: refused, with EventConflict (conflict);
//   - an update naming a dead or left member's ID at another address
//     applies only above the stored incarnation, and an Alive only once
//     the member has been down for Config.DeadReclaimTime (reclaim).
//
// Updates about this member itself trigger refutation. Applied updates are
// queued for dissemination when gossip is true (false for a join's view
// transfer, which is old news to the group).
func (m *Member) applyUpdate(in *inbound, u Update, gossip bool) {
	if u.Node.ID == m.self.ID {
		m.aboutSelf(in, u)
		return
	}
	p := m.peers[u.Node.ID]
	if !m.credible(in.now, p, &u) || !m.sameNode(in, p, &u, gossip) {
		return
	}
	switch u.change() {
	case changeAlive:
		m.applyAlive(in, p, u, gossip)
	case changeSuspect:
		m.applySuspect(in.now, p, u, gossip)
	case changeDead:
		m.applyDead(in, p, u, gossip)
	case changeLeave:
		m.applyLeave(in.now, p, u, gossip)
	}
}

// credible reports whether u about p (nil: not known) passes the checks
// that do not depend on the view's state: a plausible incarnation, an
// address the transport accepts (Config.ValidAddr) when it is not the one
// held, the application's AliveFilter, and with signed self-updates a valid proof
// for an Alive or leave that would change the view. An accusation above
// the stored incarnation is lowered to it when self-updates are signed:
// only the member raises its incarnation, and an accusation above what it
// asserted is one it may never hear of or refute.
func (m *Member) credible(now time.Duration, p *peer, u *Update) bool {
	// The jump bound keeps forged updates from pushing a member's
	// incarnation to the limit. A self-signed Alive or leave is the
	// member's own word, whose proof the signed check below verifies: it
	// is taken however far it jumps, since a member a chain of
	// accusations pushed up (each refuted, the refutations superseding
	// each other in its queue) may announce only its last, beyond the
	// bound of a member that missed the others (atk27q's F1). Only under
	// the key already bound to the member (ownProof): a first key is not
	// taken on a jump.
	ownWord := m.signed() && u.change().selfAsserted() && m.ownProof(p, u)
	if p != nil && u.Incarnation > p.inc && u.Incarnation-p.inc > jumpBound(u.change()) && !ownWord {
		m.stats.Implausible++
		return false
	}
	if m.cfg.ValidAddr != nil && (p == nil || u.Node.Addr != p.node.Addr) && m.cfg.ValidAddr(u.Node.Addr) != nil {
		m.stats.AddrsRefused++
		return false
	}
	if u.Kind == UpdateAlive && m.cfg.AliveFilter != nil && changes(p, u) && m.cfg.AliveFilter(*u) != nil {
		m.stats.AlivesRefused++
		return false
	}
	if !m.signed() {
		return true
	}
	switch {
	case u.change().selfAsserted():
		if changes(p, u) && !m.checkSelfUpdate(now, p, u) {
			return false
		}
	case p != nil && u.Incarnation > p.inc:
		u.Incarnation = p.inc
		m.stats.AccusationsCapped++
	}
	return true
}

// sameNode reports whether u names p's node (p nil: a new member), so that
// it is merged by the precedence rules; an update naming p's ID at another
// address is handled here. About a live member it is a conflicting claim,
// or a tie between two revivals (reviveTie); stale ones (an Alive at or
// below the stored incarnation, an accusation below it: an old address
// still in flight, such as a reclaimed ID's previous life) are ignored
// silently. About a dead or left member it is a reclaim of the ID.
func (m *Member) sameNode(in *inbound, p *peer, u *Update, gossip bool) bool {
	if p == nil || u.Node.Addr == p.node.Addr {
		return true
	}
	if p.state == StateDead || p.state == StateLeft {
		return m.reclaim(in, p, u)
	}
	if u.Incarnation > p.inc || (u.Kind != UpdateAlive && u.Incarnation == p.inc) {
		m.conflict(in.now, u.Node, p.node)
	} else if u.Kind == UpdateAlive && u.Incarnation == p.inc && p.revived && u.Node.Addr < p.node.Addr &&
		in.now-p.downSince >= m.cfg.DeadReclaimTime {
		m.reviveTie(in.now, p, u, gossip)
	}
	return false
}

// applyAlive merges Alive(l, i) about p (nil: a new member): it overrides
// any state held at j < i.
func (m *Member) applyAlive(in *inbound, p *peer, u Update, gossip bool) {
	now := in.now
	if p == nil {
		m.addMember(in, u, gossip)
		return
	}
	if u.Incarnation <= p.inc {
		m.staleAlive(in, p, &u)
		if u.Node.Addr == p.node.Addr && (p.state == StateAlive || p.state == StateSuspect) {
			m.vouchHeld(in, p, !gossip)
		}
		return
	}
	if (p.state == StateDead || p.state == StateLeft) && !p.verified && !m.admitUnverified(in, &u, !gossip) {
		m.stats.MembersRefused++
		return
	}
	prev := p.state
	// A suspicion made from hearsay was not gossiped (suspectInstead): no
	// other member's timer to race.
	heldOwn := prev == StateSuspect && !p.susp.hearsay
	metaChanged := !u.Versions.IsZero() && u.Meta != p.meta
	p.revived = prev == StateDead || prev == StateLeft
	if p.revived {
		p.downSince = p.since
	}
	if p.node.Addr != u.Node.Addr {
		in.brought = append(in.brought, u.Node.ID)
	}
	m.readdress(p, u.Node)
	p.inc, p.since, p.proof = u.Incarnation, now, u.Proof
	if !u.Versions.IsZero() { // else relayed through wire format 1: keep what is known
		p.meta, p.versions = u.Meta, u.Versions
	}
	switch prev {
	case StateSuspect:
		m.clearSuspicion(p)
		p.state = StateAlive
		m.emit(EventAlive, p, u.From, now)
	case StateDead, StateLeft:
		m.revive(in, p, u.From, gossip)
	case StateAlive:
		if metaChanged {
			m.emit(EventUpdate, p, u.From, now)
		}
	}
	if prev == StateAlive || prev == StateSuspect {
		m.vouchHeld(in, p, !gossip) // as for one held at an equal incarnation, above
	}
	if gossip {
		m.heard(now, p)
	}
	m.gossip(u, gossip)
	if gossip && heldOwn {
		// This member held the suspicion that u refutes: pass the
		// refutation on at once, racing the others' timers.
		m.forward(in, u, nil, m.cfg.GossipFanout)
	}
}

// addMember adds the member u announces, if the view has room for it.
func (m *Member) addMember(in *inbound, u Update, gossip bool) {
	if !m.admitUnverified(in, &u, !gossip) {
		m.stats.MembersRefused++
		// Room comes as the unverified members answer their probes or
		// die: a settling exchange then brings what was refused (a small
		// group merging with a large one, verify.go).
		m.settleLater(in.now)
		return
	}
	if !m.makeRoom(m.speaks(in, u.Node.ID)) {
		m.stats.MembersRefused++
		return
	}
	p := &peer{node: u.Node, state: StateAlive, inc: u.Incarnation, since: in.now, proof: u.Proof,
		meta: u.Meta, versions: u.Versions}
	if m.signed() {
		p.key = string(u.Proof.Key())
	}
	m.peers[u.Node.ID] = p
	in.brought = append(in.brought, u.Node.ID)
	m.all = append(m.all, p)
	m.live++
	m.unverified++
	m.vouch(in, p, !gossip)
	m.insertInList(p)
	if gossip {
		m.heard(in.now, p)
		m.settleLater(in.now)
	}
	m.emit(EventJoin, p, u.From, in.now)
	m.gossip(u, gossip)
}

// staleAlive handles an Alive about p no newer than the entry: it may
// still bring a version range and metadata missed at this incarnation, or
// a proof for an entry from Bootstrap; about a member held suspect, dead
// or left at that incarnation it is answered with the accusation, which x
// never heard.
func (m *Member) staleAlive(in *inbound, p *peer, u *Update) {
	m.learnMeta(in.now, p, u)
	if p.state != StateAlive {
		m.accuseBack(in, p, p.node)
	} else if u.Incarnation == p.inc && p.proof == "" && u.Proof != "" && m.signed() &&
		u.Node == p.node && m.checkSelfUpdate(in.now, p, u) {
		p.proof = u.Proof // an entry from Bootstrap: now it can be passed on
	}
}

// revive makes the dead or left p, whose entry already holds the new
// Alive, live again; heard by gossip, it schedules the settling exchange
// (settleLater), as a member first heard of does.
func (m *Member) revive(in *inbound, p *peer, from ID, gossip bool) {
	p.state = StateAlive
	m.live++
	if !p.verified {
		m.unverified++
	}
	m.vouch(in, p, !gossip)
	m.removeTomb(p)
	m.insertInList(p)
	if gossip {
		// A rumour like a join's (a healed partition's refutations, a
		// rejoin), with the same residue: settle (sync.go).
		m.settleLater(in.now)
	}
	m.emit(EventJoin, p, from, in.now)
}

// applySuspect merges Suspect(l, i) about p: it overrides Alive(l, j) for
// i ≥ j; over a suspicion at j ≤ i it is a confirmation (Lifeguard),
// whose first K are gossiped again. A suspicion at i > j raises the held
// incarnation to i and keeps the running suspicion, its start, deadline
// and confirmations, as memberlist's suspectNode keeps its timer: a fresh
// timer at the maximum timeout for each accusation one incarnation higher
// let anyone delay the declaration of a crashed member for ever (issue
// 27, atk27 F1). A suspicion made this member's own (From this member)
// is sent to the suspect at once.
func (m *Member) applySuspect(now time.Duration, p *peer, u Update, gossip bool) {
	if p == nil {
		return
	}
	own := u.From == m.self.ID
	switch {
	case p.state == StateAlive && u.Incarnation >= p.inc:
		p.inc = u.Incarnation
		m.startSuspicion(now, p, u.From)
		m.gossip(u, gossip)
		if own && p.verified {
			m.push(u, []*peer{p}, 0) // the suspect hears it at once (failProbe)
		}
	case p.state == StateSuspect && u.Incarnation >= p.inc:
		raised := u.Incarnation > p.inc
		p.inc = u.Incarnation
		// This member's own confirmation comes from its own failed probe
		// (failProbe); one carrying its ID from elsewhere (a view
		// transfer, hearsay, its own relayed back) is no evidence.
		confirmed := !own && p.susp.confirm(now, u.From) && len(p.susp.confirmers) <= p.susp.k
		if confirmed || raised {
			m.gossip(u, gossip) // Lifeguard: re-gossip the first K, and the new incarnation
		}
	}
}

// applyDead merges Dead(l, i), a declaration by another member, about p:
// it overrides Alive(l, j) and Suspect(l, j) for i ≥ j, and raises a Dead
// or Left held at j < i to i. Over a leave at j ≥ i it is answered with
// the leave (correctLeft).
func (m *Member) applyDead(in *inbound, p *peer, u Update, gossip bool) {
	if p == nil {
		return
	}
	if p.state == StateLeft && u.Incarnation <= p.inc {
		m.correctLeft(in, p, u, gossip)
		return
	}
	if u.Incarnation < p.inc {
		return
	}
	switch p.state {
	case StateAlive, StateSuspect:
		// A suspicion that began at this instant came with the
		// declaration (one packet can carry both): not a corroboration.
		held := p.state == StateSuspect && p.susp != nil && p.susp.start < in.now
		m.kill(in.now, p, u, gossip)
		if gossip && held {
			// This member suspected p too, before this packet: pass the
			// declaration on at once (corroborated forwarding), so that
			// the group learns of a crash in a few hops instead of the
			// drain loop's rounds.
			m.forward(in, u, nil, m.cfg.GossipFanout)
		}
	case StateDead:
		if u.Incarnation > p.inc {
			// A declaration of a later life: keep the higher number, so
			// that an Alive between the two stays stale.
			p.inc, p.deadFrom = u.Incarnation, u.From
			m.gossip(u, gossip)
		}
	case StateLeft:
		m.raiseLeft(p, u, gossip)
	}
}

// applyLeave merges Left(l, i), the member's own leave, about p: it
// overrides Alive(l, j), Suspect(l, j) and Dead(l, j) for i ≥ j, and
// raises a Left held at j < i to i.
func (m *Member) applyLeave(now time.Duration, p *peer, u Update, gossip bool) {
	if p == nil || u.Incarnation < p.inc {
		return
	}
	switch p.state {
	case StateAlive, StateSuspect:
		m.takeDown(now, p, u)
		p.state, p.proof = StateLeft, u.Proof
		m.emit(EventLeave, p, u.From, now)
		m.gossip(u, gossip)
	case StateDead:
		m.leftAfterDead(now, p, u, gossip)
	case StateLeft:
		if u.Incarnation > p.inc {
			m.raiseLeft(p, u, gossip)
		}
	}
}

// raiseLeft records u, a leave or declaration above the incarnation of
// the leave p holds, keeping p left.
func (m *Member) raiseLeft(p *peer, u Update, gossip bool) {
	p.inc, p.deadFrom, p.proof = u.Incarnation, u.From, u.Proof
	m.gossip(u, gossip)
}

// accuseBack answers a stale Alive about p, which this member holds
// Suspect, Dead or Left in a later incarnation: whoever relayed the Alive
// missed the accusation, and p itself may not know of it (a member cut off
// by a partition, or restarted with a lower incarnation). The accusation
// goes at once, in MsgGossip packets, to the packet's sender and to p, in
// every mode, within the per-period bound on forwarded packets
// (forwardsPerFanout): p refutes on reading it.
//
// at is where p is told: its stored node, or the node that claims p's ID
// from another address (reclaim). It is told only when it sent the packet
// itself, from the address it claims as far as the transport can tell
// (not StepFromOtherSource: a forger could name a victim's address), or
// this member verified p there (verify.go): a member never
// heard from, only relayed, may not exist, and a ghost at a victim's
// address drew the accusation there from every member that a relay of
// its stale Alive reached (issue 27, user37 F6). A real one hears it from
// the members that verified it.
func (m *Member) accuseBack(in *inbound, p *peer, at Node) {
	u := m.viewUpdate(p)
	var to []*peer
	if in.from == at.ID && !in.otherSource || p.verified && p.node.Addr == at.Addr {
		to = append(to, &peer{node: at})
	}
	// A suspicion made from hearsay is told to the suspect only
	// (suspectInstead): to the sender it would be this member's word.
	hearsay := p.state == StateSuspect && p.susp.hearsay
	if q := m.peers[in.from]; q != nil && q != p && !hearsay && m.answerable(in, q) && (q.state == StateAlive || q.state == StateSuspect) {
		to = append(to, q)
	}
	for _, q := range to {
		if m.queue.forwarded >= m.forwardBudget() {
			return
		}
		m.queue.forwarded++
		m.stats.AccusationsReturned++
		m.sendGossip(q, u)
	}
}

// leftAfterDead records a member's own leave over a Dead that others
// declared in the same incarnation or earlier: the leave is the member's
// own word, and ranking Left above Dead makes the two final states totally
// ordered, so every view converges on the same one whichever arrives first
// (a member that declared the leaver dead ends with Left, as the rest of
// the group). It emits EventLeave.
func (m *Member) leftAfterDead(now time.Duration, p *peer, u Update, gossip bool) {
	m.removeTomb(p)
	p.state = StateLeft
	p.inc, p.since, p.deadFrom, p.proof = u.Incarnation, now, u.From, u.Proof
	m.emit(EventLeave, p, u.From, now)
	m.gossip(u, gossip)
}

// correctLeft answers a Dead heard about p, which this member knows left
// in that incarnation or later: whoever sent or declared it missed the
// leave, whose retransmissions (the leaver's and everyone's) may be over,
// and would keep Dead until an anti-entropy exchange. The leave is queued
// again (unless it still is) and, in the eager modes, sent at once to the
// packet's sender and to the declarer if this member verified it
// (verify.go: a Dead names its declarer, and anyone could name a ghost at
// a victim's address there; issue 27, user37 F6). Each Dead heard costs
// at most two packets, and a corrected member gossips the leave, never
// the Dead again.
// A view transfer (gossip false) needs no answer: the exchange's pull
// carries this member's view.
func (m *Member) correctLeft(in *inbound, p *peer, u Update, gossip bool) {
	if !gossip {
		return
	}
	left := m.viewUpdate(p)
	if b := m.queue.byID[p.node.ID]; b == nil || b.u != left {
		m.enqueue(left)
	}
	var to []*peer
	for _, id := range []ID{in.from, u.From} {
		if q := m.peers[id]; q != nil && m.answerable(in, q) && (q.state == StateAlive || q.state == StateSuspect) && !slices.Contains(to, q) {
			to = append(to, q)
		}
	}
	m.forward(in, left, to, 0)
}

// kill moves the live p to Dead as declared by u.
func (m *Member) kill(now time.Duration, p *peer, u Update, gossip bool) {
	m.takeDown(now, p, u)
	p.state = StateDead
	p.inTomb = true
	m.tomb = append(m.tomb, p)
	m.emit(EventDead, p, u.From, now)
	m.gossip(u, gossip)
}

// takeDown takes the live p out of the live members at u's incarnation,
// before it is marked dead or left.
func (m *Member) takeDown(now time.Duration, p *peer, u Update) {
	if p.state == StateSuspect {
		m.clearSuspicion(p)
	}
	p.inc, p.since, p.deadFrom, p.blind = u.Incarnation, now, u.From, false
	m.live--
	if !p.verified {
		m.unverified--
	}
	if m.probing.forceNext == p {
		m.probing.forceNext = nil
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

// changes reports whether u, an Alive or a leave about p (nil: not known),
// would change the view: an Alive that names a new member or raises the
// incarnation, a leave at or above the stored incarnation that is not
// already held. Only those need a proof (checkSelfUpdate): stale ones
// change nothing, and checking them would cost a signature check per
// gossiped copy.
func changes(p *peer, u *Update) bool {
	if u.Kind == UpdateAlive {
		return p == nil || u.Incarnation > p.inc
	}
	return p != nil && (u.Incarnation > p.inc || (u.Incarnation == p.inc && p.state != StateLeft))
}

// reviveTie settles two nodes that both revived p's ID from the same
// declaration (Dead or Left at j), each with an Alive at j+1 from its own
// address: two restarts of one crashed member at once (flapping pods), or
// a member wrongly declared dead resuming at its old address while a
// restart reclaims the ID from a new one. Without a rule each member would
// keep the Alive it heard first and ignore the other as stale, and the
// group would split for good. The lower address wins everywhere, whatever the order:
// u, at a lower address than p's, takes the entry (state and incarnation
// unchanged), and the loser is reported as a conflict; the loser reads the
// winner's Alive about its own ID as a conflict too (aboutSelf). A holder
// that was not revived at this incarnation (never declared dead there) is
// never displaced, nor one revived less than DeadReclaimTime after its
// declaration: that window protects a member wrongly declared dead that
// resumed at its address. See docs/algorithms.md, “SWIM: hostile and stale
// updates” (ID conflicts).
func (m *Member) reviveTie(now time.Duration, p *peer, u *Update, gossip bool) {
	if m.signed() && !m.checkSelfUpdate(now, p, u) {
		return
	}
	m.conflict(now, p.node, u.Node)
	m.readdress(p, u.Node)
	p.answered, p.proof = false, u.Proof
	if !u.Versions.IsZero() {
		p.meta, p.versions = u.Meta, u.Versions
	}
	m.emit(EventUpdate, p, u.From, now)
	m.gossip(*u, gossip)
}
