package swim

import (
	"crypto/ed25519"
	"slices"
)

// Refutation (SWIM §4.2): an update about this member itself that accuses
// it is answered by a higher incarnation, sent at once to the accusers in
// the Lifeguard modes.

// aboutSelf handles an update about this member: a suspicion or
// declaration in the current incarnation or later (or an Alive claiming a
// later one) is refuted with a higher incarnation, unless the member is
// leaving. An older suspicion or declaration comes from a member that missed
// the refutation and that everyone else now ignores: the current Alive is
// announced again (unless it is still being gossiped), without a new
// incarnation, so that this member corrects it.
//
// An update more than MaxIncarnationJump above the current incarnation (an
// accusation: more than maxAccusationJump) is refused as implausible, as
// every other member refuses it. An Alive or Suspect naming this member's ID at
// another address is a conflicting claim (EventConflict), never refuted:
// refuting it would raise the incarnation for a node that is not this one.
// A Dead or leave naming it at another address says that node is down: at
// or above this member's incarnation it is refuted, so that this member,
// restarted on a new address, can reclaim its ID (Config.DeadReclaimTime);
// a join in progress is retried after either. With
// signed self-updates, an Alive or leave about this member at or above its
// incarnation without its own valid proof is ignored (Stats.BadProofs): no
// signed member holds it, so there is nothing to refute.
func (m *Member) aboutSelf(in *inbound, u Update) {
	now := in.now
	if m.st != running {
		return
	}
	implausible := u.Incarnation > m.inc && u.Incarnation-m.inc > jumpBound(u.change())
	if u.Node.Addr != m.self.Addr {
		in.conflictSelf = true // a join in progress is retried
		if u.Kind != UpdateDead {
			m.conflict(now, u.Node, m.self)
			return
		}
		// Another node held this ID and was declared dead or left: this
		// member (restarted on a new address) claims the ID by refuting
		// the declaration from its own address, once, above the
		// declared incarnation; the others take it once the entry has
		// been down for DeadReclaimTime (reclaim).
		if implausible {
			m.stats.Implausible++
		} else if u.Incarnation >= m.inc {
			m.refute(in, u.Incarnation, u.Kind)
		}
		return
	}
	if implausible {
		m.stats.Implausible++
		return
	}
	if m.signed() && u.change().selfAsserted() && u.Incarnation >= m.inc &&
		!verifyProof(m.cfg.SigningKey.Public().(ed25519.PublicKey), &u) {
		// Not this member's word, and refused by every signed member: no
		// one holds it, nothing to refute.
		m.stats.BadProofs++
		return
	}
	switch u.Kind {
	case UpdateAlive:
		if u.Incarnation <= m.inc {
			m.restateMeta(in, &u) // others may hold a previous life's metadata
			return
		}
	case UpdateSuspect, UpdateDead:
		if u.Incarnation < m.inc {
			if !m.selfQueued() {
				m.enqueue(m.selfAlive())
			}
			m.tellAccusers(in, u.From)
			return
		}
	}
	if m.refute(in, u.Incarnation, u.Kind) && u.Kind != UpdateAlive {
		m.tellAccusers(in, u.From)
	}
}

// tellAccusers tells the accuser and the sender of the accusing packet
// (tellAlive), once when they are the same member.
func (m *Member) tellAccusers(in *inbound, accuser ID) {
	m.tellAlive(in, accuser)
	if in.from != accuser {
		m.tellAlive(in, in.from)
	}
}

// tellAlive sends this member's current Alive at once, in a ping, to the
// member id that suspects it or declared it dead, or that sent the packet
// with the suspicion or declaration (which it believes: a member that kept a
// restarted member dead answers its probes with the Dead notice), at most
// once per incarnation and member, instead of leaving the refutation to
// piggybacking alone: a suspecter hears it before its suspicion timer
// fires even when it probes elsewhere. A member sent this member's Alive
// at once announcePerPeriod times in the current protocol period
// (sendAlive) is not sent it again in that period (Stats.AliveDeferred):
// the queue carries the later incarnation; forged accusations naming a
// member as their accuser drew one ping to that member each (issue 27,
// user46 M5). Not to the sender of the packet being
// answered when the view vouches for it (the answer carries the Alive,
// newest of the least sent; inbound.replyTo), and not in ModeSWIM (plain
// SWIM refutes by piggybacking only). The ping goes to the address the
// view holds for id, and not at all when only the packet being merged
// gave that address (claimedBy: the accuser's or the sender's own Alive
// in the accusing packet, which may name a victim's address), unless the
// packet is the join seed's view; nor to a member the view has not
// verified (verify.go, “sending”), unless it sent the packet from the
// address the view holds for it (inbound.vouched): a forged suspicion
// naming as its accuser a member that an earlier packet planted at a
// victim's address drew this member's Alive, metadata included, to the
// victim (issue 27, user37 F1).
func (m *Member) tellAlive(in *inbound, id ID) {
	if m.cfg.Mode == ModeSWIM || id == "" || id == m.self.ID || id == in.replyTo {
		return
	}
	p := m.peers[id]
	if p == nil || m.claimedBy(in, id) || !p.verified && !(id == in.from && in.vouched) {
		return
	}
	told := m.toldThisIncarnation()
	if told[id] {
		return
	}
	if p.toldIn == m.queue.period+1 && p.toldN >= announcePerPeriod {
		// Sent it enough in this period (forged accusations naming it
		// as their accuser): the queue carries the rest.
		m.stats.AliveDeferred++
		return
	}
	told[id] = true
	m.sendAlive(p)
}

// claimedBy reports whether the view holds id at an address that only the
// packet being merged with in gave (inbound.brought: added or moved by
// it), unless the packet is a part of the join seed's view, which vouches
// for its members (seedView).
func (m *Member) claimedBy(in *inbound, id ID) bool {
	return id != "" && slices.Contains(in.brought, id) && !m.seedView(in, true)
}

// toldThisIncarnation returns the set of members sent this member's Alive
// directly, emptied when the incarnation changed since it was filled.
func (m *Member) toldThisIncarnation() map[ID]bool {
	if m.queue.toldInc != m.inc {
		m.queue.toldInc = m.inc
		clear(m.queue.told)
	}
	if m.queue.told == nil {
		m.queue.told = make(map[ID]bool)
	}
	return m.queue.told
}

// sendAlive pings p with this member's Alive as the first update, and the
// queue if p is verified (verify.go, “sending”).
func (m *Member) sendAlive(p *peer) {
	m.stats.AliveSent++
	if p.toldIn != m.queue.period+1 {
		p.toldIn, p.toldN = m.queue.period+1, 0
	}
	p.toldN++
	m.send(Packet{Kind: MsgPing, To: p.node, Ping: Ping{Seq: m.otherSeq()},
		Updates: []Update{m.selfAlive()}})
}

// announceAlive sends this member's new Alive at once to up to
// IndirectChecks random alive or suspect members other than replyTo (the
// sender answered with the Alive, if any) and those skip reports (nil:
// none); not in ModeSWIM. So a refutation starts spreading from several
// members in the same period. They are chosen among the members the view
// has verified (verify.go, “sending”), and among the others only when no
// verified one is eligible, then one: a view holding ghosts at a victim's
// address (up to the unverified quota), each forged suspicion or
// metadata restatement drew the Alive, metadata included, mostly to the
// victim (issue 27, user37 F1). A member that holds none verified (a
// restart that learnt its view from a push-pull, not from its join's
// seed) still tells one, at most announceUnverifiedPerPeriod in a
// protocol period, so that its refutation or new metadata does not wait
// for a probe's answer to verify a member. Before, up to IndirectChecks
// random members were told, and one member not verified per period at
// most: one forged suspicion per period still drew an Alive to the victim
// each time, 2.1-4.6× the attacker's bytes (docs/experiments.md,
// “Refutations and restatements to members not verified (F1)”).
func (m *Member) announceAlive(replyTo ID, skip func(ID) bool) {
	if m.cfg.Mode == ModeSWIM || len(m.list) == 0 {
		return
	}
	k := m.cfg.IndirectChecks
	told := m.toldThisIncarnation()
	ok := func(p *peer) bool {
		return (p.state == StateAlive || p.state == StateSuspect) && !told[p.node.ID] && p.node.ID != replyTo && (skip == nil || !skip(p.node.ID))
	}
	var to []*peer
	if m.unverified == 0 {
		for tries := 0; len(to) < k && tries < 4*k; tries++ {
			if p := m.list[m.rng.IntN(len(m.list))]; ok(p) {
				told[p.node.ID] = true
				to = append(to, p)
			}
		}
	} else {
		to = m.pickVerified(k, ok)
		if len(to) == 0 && m.queue.announcedUnverified < announceUnverifiedPerPeriod {
			to = m.pickInto(nil, 1, ok, false)
			m.queue.announcedUnverified += len(to)
		}
		for _, p := range to {
			told[p.node.ID] = true
		}
	}
	for _, p := range to {
		m.sendAlive(p)
	}
}

// announcePerPeriod is how many refutations and restatements in one
// protocol period are announced at once (announceBounded).
const announcePerPeriod = 3

// announceUnverifiedPerPeriod is how many members not verified
// announceAlive sends this member's Alive to in one protocol period, when
// no verified member is eligible.
const announceUnverifiedPerPeriod = 1

// selfAlive is this member's Alive in its current incarnation.
func (m *Member) selfAlive() Update {
	u := Update{Kind: UpdateAlive, Node: m.self, Incarnation: m.inc, From: m.self.ID,
		Meta: m.meta, Versions: m.cfg.Versions}
	u.Proof = m.selfProof(u)
	return u
}

// selfQueued reports whether an update about this member waits in the
// dissemination queue.
func (m *Member) selfQueued() bool { return m.queue.byID[m.self.ID] != nil }

// refute raises the incarnation above accused (saturating) and gossips
// Alive; Lifeguard counts the refutation of a suspicion or a declaration
// against the local health, at most once per protocol period and only
// when a live member it holds sent the accusing packet (chargeRefutation). It is not
// announced to the sender answered with the Alive (inbound.replyTo), nor
// to a member held at an address only the packet gave (claimedBy).
func (m *Member) refute(in *inbound, accused Incarnation, kind UpdateKind) bool {
	inc := m.inc.Next()
	if accused >= inc {
		inc = accused.Next()
	}
	m.inc = inc
	m.stats.Refutations++
	m.chargeRefutation(in.now, kind, m.heldAccusation(in))
	m.enqueue(m.selfAlive())
	return m.announceBounded(in, in.replyTo, func(id ID) bool { return m.claimedBy(in, id) })
}

// heldAccusation reports whether the packet of in is evidence of a
// member's word: its sender is held alive or suspect at the address the
// packet came from (inbound.liveSender), or it is a part of the join
// seed's view (seedView).
func (m *Member) heldAccusation(in *inbound) bool {
	return in.liveSender || m.seedView(in, true)
}

// announceBounded announces this member's new Alive at once
// (announceAlive) and reports true, within a budget per protocol period
// (between two probe timers): announcePerPeriod announcements, and one
// only for a packet that is no member's word (heldAccusation false: a
// stranger, a member held dead, StepFromOtherSource). Past it the Alive
// rides the dissemination queue only, where it supersedes the older
// Alives of this member still queued, and the drain loop sends it within
// a GossipInterval (Stats.AliveDeferred); the caller then tells no
// accuser at once either. A forger's accusations at rising incarnations,
// each refuted, drew IndirectChecks pings apiece: a stranger's Suspect
// every 5 ms made the victim send about 70 times its usual bytes (issue
// 27, user46 M5). Honest groups refute or restate more than once in a
// period after losses, pauses and partitions: in the simulator's golden
// runs 17 of 288 periods with one had two or three, none more.
func (m *Member) announceBounded(in *inbound, replyTo ID, skip func(ID) bool) bool {
	if m.cfg.Mode == ModeSWIM || len(m.list) == 0 {
		return true
	}
	if !m.heldAccusation(in) {
		if m.queue.unheldAnnounced {
			m.stats.AliveDeferred++
			return false
		}
		m.queue.unheldAnnounced = true
	}
	if m.queue.announced >= announcePerPeriod {
		m.stats.AliveDeferred++
		return false
	}
	m.queue.announced++
	m.announceAlive(replyTo, skip)
	return true
}
