package swim

import (
	"math"
	"slices"
	"time"
)

// Eager dissemination (Config.GossipFanout, Lifeguard modes). Besides
// being queued for piggybacking, some updates go out at once in MsgGossip
// packets, outside the retransmission limit:
//
//   - a suspicion this member raises, from its own failed probe or from
//     hearsay (suspectInstead): to the suspect only (the buddy system
//     without waiting for someone's next probe, so that a live suspect
//     refutes the moment it reads it);
//   - a confirmation (this member's own failed probe of a member it already
//     suspects, one of the first K): to the members known to suspect it,
//     whose Lifeguard timers it shortens, and to GossipFanout random
//     members;
//   - a declaration by this member's own suspicion timeout: to
//     GossipFanout random members;
//   - a refutation (a newer Alive) that ends a suspicion this member held,
//     not one made from hearsay (never gossiped, so no other member's timer
//     to race): forwarded to GossipFanout random members, once (it no
//     longer holds the suspicion afterwards), so refutations race the
//     suspecters' timers;
//   - a leave this member knows of, to the sender and the declarer of a
//     Dead heard about the leaver (correctLeft): at most two packets per
//     Dead heard;
//   - a declaration heard about a member this member suspected too, from
//     before the packet that carries it (corroborated; a packet carrying
//     both the suspicion and the declaration is not): forwarded to GossipFanout random members, once (the
//     member is dead here afterwards), so that a crash reaches the whole
//     group in a few hops rather than in drain-loop rounds;
//   - this member's own leave (Leave): to GossipFanout random members;
//   - the drain loop (GossipInterval, default every 200 ms): while the
//     dissemination queue holds Alive updates, leaves or declarations,
//     they go to GossipFanout random members in one MsgGossip each,
//     suspicions never
//     (drainQueue); without the loop (GossipInterval 0), every
//     declaration still queued goes out once per protocol period instead
//     (gossipDeaths).
//
// Suspicions heard from others are not forwarded at once, nor declarations
// about a member this member still trusted: an accusation costs at most
// GossipFanout+K+1 immediate packets from the member that makes it, whatever
// the group size, until other members corroborate it. Refutations and
// corroborated declarations spread from member to member at once, at most
// GossipFanout packets per member that held the suspicion, and at most
// 4·GossipFanout forwarded packets per protocol period (forwardsPerFanout).
// Other declarations spread at the pace of the drain loop (drainQueue).
//
// Why declarations are forwarded: measured in bench/memberlist with the
// probe periods staggered, a crash reached the last of 32 or 64 members
// about 0.75 s after the first declaration when only the drain loop
// carried it, against about 0.25 s for memberlist, whose gossip loop
// carries every accusation (docs/experiments.md, “Corroborated forwarding
// of declarations”). Past the suspicion timeout a paused member cannot be
// told from a crashed one, so the faster spread also makes more members
// adopt a declaration made just before such a member resumes; below the
// timeout nothing changes, as suspicions are still not forwarded.

// eager reports whether this member disseminates eagerly.
func (m *Member) eager() bool {
	return m.cfg.Mode != ModeSWIM && m.cfg.GossipFanout > 0
}

// forwardsPerFanout bounds the packets a member forwards in one protocol
// period (refutations and corroborated declarations passed on, leaves
// corrected, accusations sent back by accuseBack): at most
// forwardsPerFanout·max(GossipFanout, 1), 8 by default. Forwarding is the only
// eager send that spreads from member to member; without a bound, a member
// that keeps hearing refutations of suspicions it held (a non-transitive
// partition, where half the group suspects the other half) sent a number
// of packets per period that grew with the group size (42 at N = 1024 in
// swim/sim). What is not forwarded is still piggybacked. In the Lifeguard
// interval experiment (fdswim sim lifeguard) this bound changes nothing
// below the suspicion timeout; a bound of 2·GossipFanout raised
// Lifeguard's false positives there by up to 45 %.
const forwardsPerFanout = 4

// forwardBudget is the per-period bound on forwarded packets,
// forwardsPerFanout·max(GossipFanout, 1). A fanout above MaxMembers (more
// members than any view holds: a mistyped or hostile setting) counts as
// MaxMembers: the product overflowed for a fanout of 2^61 or more, and a
// budget of zero or less silently stopped every forward and accusation sent
// back.
func (m *Member) forwardBudget() int {
	return forwardsPerFanout * min(max(m.cfg.GossipFanout, 1), m.cfg.MaxMembers, math.MaxInt/forwardsPerFanout)
}

// forward is push for an update this member passes on because of one it
// heard, within the per-period bound on forwarded packets.
func (m *Member) forward(in *inbound, u Update, to []*peer, fanout int) {
	if !m.eager() {
		return
	}
	budget := m.forwardBudget() - m.queue.forwarded
	if budget <= 0 {
		return
	}
	to = m.targets(u, to, fanout, in.from)
	if len(to) > budget {
		to = to[:budget]
	}
	m.queue.forwarded += len(to)
	for _, p := range to {
		m.sendGossip(p, u)
	}
}

// push sends u at once to the members in to and to fanout random alive or
// suspect members (targets) other than u's subject, the sender of the packet being
// processed and the members in to. Does nothing unless eager.
func (m *Member) push(u Update, to []*peer, fanout int) {
	if !m.eager() {
		return
	}
	for _, p := range m.targets(u, to, fanout, "") {
		m.sendGossip(p, u)
	}
}

// targets returns to followed by up to fanout random alive or suspect
// members this member verified (verify.go), other than u's subject,
// sender (the sender of the packet being processed, if any) and the
// members in to. An eager push went to members only told of when too few
// verified ones were eligible, as in a small group: every ghost announced
// at a victim's address then drew each declaration, with its own notice,
// from every member there (issue 27, user37 F6). What is not pushed is
// piggybacked, and the drain loop sends verified members only too.
func (m *Member) targets(u Update, to []*peer, fanout int, sender ID) []*peer {
	if fanout > 0 {
		more := m.pickKnown(fanout, func(p *peer) bool {
			return p.verified && (p.state == StateAlive || p.state == StateSuspect) &&
				p.node.ID != u.Node.ID && p.node.ID != u.From && p.node.ID != sender && !slices.Contains(to, p)
		})
		to = append(slices.Clip(to), more...)
	}
	return to
}

// suspecters returns the live members known to suspect p (the first
// suspecter and the confirmers heard of) that this member verified
// (verify.go), this member excluded. A suspicion names its source, and
// anyone could name a ghost at a victim's address there: each member that
// confirmed the suspicion pushed it there (issue 27, user37 F6).
func (m *Member) suspecters(p *peer) []*peer {
	var to []*peer
	for _, id := range append([]ID{p.susp.from}, p.susp.confirmers...) {
		if q := m.peers[id]; q != nil && q != p && q.verified && (q.state == StateAlive || q.state == StateSuspect) && !slices.Contains(to, q) {
			to = append(to, q)
		}
	}
	return to
}

// sendGossip sends p a MsgGossip carrying u, and p's own suspicion when p
// is suspected (buddy system, as send: notice). Nothing is sent when u alone does not fit
// MaxPacketSize (IDs and addresses near their maximum): u is piggybacked
// anyway, and a MsgGossip without it would say nothing.
func (m *Member) sendGossip(p *peer, u Update) {
	pk := Packet{Kind: MsgGossip, From: m.self, To: p.node, Updates: []Update{u}}
	if pk.Size() > m.cfg.MaxPacketSize {
		return
	}
	if v, ok := m.notice(p.node.ID); ok && p.node.ID != u.Node.ID &&
		pk.Size()+v.Size() <= m.cfg.MaxPacketSize {
		pk.Updates = append(pk.Updates, v)
	}
	m.stats.GossipsSent++
	m.ready.packets = append(m.ready.packets, pk)
}

// gossipDeaths (GossipInterval 0 only: the drain loop replaces it) sends,
// at the start of a protocol period, the declarations
// (Dead, not leaves) waiting in the dissemination queue to GossipFanout
// random alive or suspect members it verified (targets), in one
// MsgGossip per member (as many as fit MaxPacketSize), each packet
// counting as one transmission of what it carries toward the
// λ·ceil(log10(n+1)) limit. It does nothing unless eager or when no
// declaration is queued, so the steady state costs nothing.
//
// Why: piggybacking moves a declaration about one hop per period in each
// direction of a probe, so the last members of a group of 64 heard of a
// crash about 2 s after the first declaration (swim/sim kill), where
// memberlist's gossip loop (every 200 ms to 3 members) took 0.2 s. Forwarding
// every Dead heard at once, as memberlist does in effect, floods the group in
// milliseconds but multiplies by 5–10 the members that declare dead a
// member paused longer than the suspicion timeout before it resumes and
// refutes (fdswim sim lifeguard, 12 s pauses). One gossip per period,
// whoever heard it, is the middle: it roughly doubles the spreading rate of
// a declaration (a ping, an ack and two gossips per period instead of a
// ping and an ack) without flooding; docs/experiments.md, “Dissemination of
// a death”, has the measured trade-off. (That measurement predates
// corroborated forwarding, which applies without the loop too: a member
// that held the dead member Suspect passes a declaration on at once.)
func (m *Member) gossipDeaths() {
	if !m.eager() || len(m.queue.items) == 0 {
		return
	}
	var dead []*bcast
	for _, b := range m.queue.items {
		if b.u.change() == changeDead {
			dead = append(dead, b)
		}
	}
	if len(dead) == 0 {
		return
	}
	to := m.pickKnown(m.cfg.GossipFanout, func(p *peer) bool {
		return p.verified && (p.state == StateAlive || p.state == StateSuspect) // targets
	})
	for _, p := range to {
		pk := Packet{Kind: MsgGossip, From: m.self, To: p.node}
		budget := m.cfg.MaxPacketSize - pk.Size()
		for _, b := range dead {
			if s := b.u.Size(); s <= budget && b.u.Node.ID != p.node.ID {
				pk.Updates = append(pk.Updates, b.u)
				budget -= s
				b.tx++
			}
		}
		if len(pk.Updates) > 0 {
			m.stats.GossipsSent++
			m.ready.packets = append(m.ready.packets, pk)
		}
	}
	m.dropTransmitted()
}

// draining reports whether the drain loop has work: eager dissemination
// with a GossipInterval, a running member, another member alive or
// suspect to send to, and a queued update other than a suspicion
// (drainQueue does not send those) or an application broadcast. Without a live member the queue
// cannot drain, and the loop asks for no tick (a member alone, or the
// last of its group, would otherwise wake every GossipInterval for
// nothing).
func (m *Member) draining() bool {
	if !m.eager() || m.cfg.GossipInterval == 0 || m.st != running || m.live == 0 {
		return false
	}
	room := m.gossipRoom()
	for _, b := range m.queue.items {
		if b.u.Kind != UpdateSuspect && b.u.Size() <= room {
			return true
		}
	}
	return m.broadcastsToDrain(room)
}

// queuedDeath reports whether the dissemination queue holds a declaration
// (a Dead, not a leave).
func (m *Member) queuedDeath() bool {
	return slices.ContainsFunc(m.queue.items, func(b *bcast) bool { return b.u.change() == changeDead })
}

// gossipRoom is the room for updates and broadcasts in a gossip packet to
// a member named as this one is. A queued update or broadcast larger
// (long metadata learnt from a member with a larger MaxPacketSize, or
// through a stream) is skipped at every round and never counted as sent:
// it must not keep the loop ticking for nothing.
func (m *Member) gossipRoom() int {
	hdr := Packet{Kind: MsgGossip, From: m.self, To: m.self}
	return m.cfg.MaxPacketSize - hdr.Size()
}

// broadcastsToDrain reports whether an application broadcast waits that
// a gossip packet could carry (within BroadcastBudget and room).
func (m *Member) broadcastsToDrain(room int) bool {
	if len(m.app.queue) == 0 {
		return false
	}
	budget := room
	if b := m.cfg.BroadcastBudget; b > 0 {
		budget = min(budget, b)
	}
	budget -= broadcastSection
	for _, q := range m.app.queue {
		if q.b.Size() <= budget {
			return true
		}
	}
	return false
}

// drainQueue is the drain loop (Config.GossipInterval): on each round of a
// fixed grid of GossipInterval starting with the member, while the
// dissemination queue holds updates, it sends to GossipFanout random alive
// or suspect members it verified (verify.go) one MsgGossip each, filled as a piggyback is (least
// sent first, within MaxPacketSize, each copy counting as one transmission
// toward the λ·ceil(log10(n+1)) limit), after the notice the receiver
// should hear about itself. It carries Alive updates (join announcements,
// refutations, metadata), leaves and declarations, never suspicions
// (a round that carries a declaration goes to members heard from,
// pickKnown), with the application
// broadcasts waiting (Broadcast) in the room left, so that a broadcast
// goes out within GossipInterval rather than with the next protocol
// period's ping (up to a ProbeInterval later); suspicions ride on pings and
// acks and the eager sends of this file only, because suspicions spread by
// the loop let members' timers shrink to the minimum on confirmations heard
// from everywhere, and members paused 9 s (below the timeout) were declared
// dead ten times as often in the Lifeguard mode (docs/experiments.md,
// “Dissemination of a death”). Rounds fall on the grid: an update queued
// between two grid points waits for the next one (a Tick late by less than
// GossipInterval still runs the round it was due for, a later one skips
// it), so a member sends at most one round per GossipInterval.
//
// Why: piggybacked on a ping and an ack per period, a group's queue takes
// seconds to empty after it forms (4.4 s at N = 32, 12–14 s at N = 128 in
// swim/sim, TestQueueDrainAfterJoin), so steady-state packets keep
// carrying join announcements nobody needs, and a declaration reaches the
// last members 1.2–1.7 s after the first (fdswim sim kill). The number of
// transmissions of each update is unchanged (the same limit); they are
// spent sooner, in fuller packets. memberlist's gossip loop plays this
// role (every 200 ms to 3 members, every kind of update).
//
// Declarations go every round: corroborated forwarding (applyDead) floods
// a declaration at once through the members that suspected the dead
// member, but a flood in which each member passes it to GossipFanout (2)
// random others misses about e^−2 of them (13 %); the loop reaches those.
// Measured in a group of 64 joined through one seed (swim/sim, 300
// crashes), the last member declared a crash 0.19 s after the first on
// average with declarations in every round, 0.35 s with them in every
// second round, and members paused past the suspicion timeout were not
// declared more often (docs/experiments.md, “Declarations in every drain
// round”).
func (m *Member) drainQueue(now time.Duration) {
	iv := m.cfg.GossipInterval
	if !m.eager() || iv == 0 || now < m.queue.nextRound {
		return
	}
	late := now - m.queue.nextRound
	m.queue.nextRound += (late/iv + 1) * iv // the grid advances on every Tick
	if late >= iv || !m.draining() {
		// A slot missed while idle (or not running), or nothing to send.
		return
	}
	keep := func(u *Update) bool { return u.Kind != UpdateSuspect }
	pick := m.pick
	if m.queuedDeath() {
		pick = m.pickKnown // declarations: to members heard from (pickKnown)
	}
	to := pick(m.cfg.GossipFanout, func(p *peer) bool {
		return (p.state == StateAlive || p.state == StateSuspect) && p.verified
	})
	for _, p := range to {
		pk := Packet{Kind: MsgGossip, From: m.self, To: p.node}
		var ups []Update
		if v, ok := m.notice(p.node.ID); ok && pk.Size()+v.Size() <= m.cfg.MaxPacketSize {
			ups = []Update{v}
		}
		n := len(ups)
		pk.Updates = m.piggybackIf(ups, m.cfg.MaxPacketSize-pk.Size(), keep, p)
		pk.Broadcasts = m.attachBroadcasts(p.node.ID, m.cfg.MaxPacketSize-pk.Size())
		if len(pk.Updates) == n && len(pk.Broadcasts) == 0 {
			continue // nothing from the queues: the notice alone rides on the next ping
		}
		m.stats.GossipsSent++
		m.ready.packets = append(m.ready.packets, pk)
	}
}
