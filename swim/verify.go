package swim

import "slices"

// Verified members: a member that showed this member it receives at its
// address (its ack, from there and under its ID, echoing the random
// sequence number of a ping this member sent it: a challenge, a probe, a
// relayed ping; receipt.go), that an intermediate vouched for (an ack
// relayed from it), that answered a join challenge (joinchallenge.go),
// that acknowledged a stream ping this member dialled to its address
// (stream.go), that the seed of
// this member's join listed in its answer (a view that echoes the join's
// token, Packet.JoinToken: seedView), or that Bootstrap configured.
// A packet from its address alone is a sign of life, not a proof: its
// source is whatever its sender wrote, and one spoofed datagram per ghost
// verified ghosts at a victim's address, which then drew what verified
// members draw (issue 27, user38 F2: 8-10× the attacker's bytes; F3: 200
// of them, refreshed, hid a real crash for over 120 s). Such a packet
// draws one bare challenge ping instead (receipt.go). So does a packet
// on a stream from its IP address (StepSourceChecked): the handshake
// proves the host, not the claimed port, and streams from one host
// verified ghosts at any port of it (issue 27, user40 F1: 10.5× the
// attacker's bytes; 64 of them hid a crash for over 60 s). Anyone can make a member hold new
// members it has only been told of: in plain mode any packet, with signed
// self-updates any key holder, can announce Alive members by the
// thousands. Those members must not dilute the probing of the members
// this member knows, nor stretch the timeouts that grow with the group:
//
//   - probing: the probes of unverified members that go unanswered take
//     at most one probe in max(unverifiedCost, v+1), v the verified live
//     members (unverifiedProbeCost, nextTarget): about one per round over
//     the known members, whatever the number of unverified ones. A crash
//     among the known members is then detected within (v+1)/v times the
//     usual wait for a probe (4/3 with 3 of them, 33/32 with 32). An
//     unverified member that answers its probe becomes verified and gives
//     the budget back (verify): it is a member, and its probe one of the
//     round-robin's, so that the members of a group merging with this
//     member's, all told of at once and all real, are probed in their
//     turns, not one per round over the known members. One that does not
//     answer is suspected, after one more probe when it was heard from
//     at its address and its ledger pays for the ping (failProbe,
//     receipt.go; the detector gate retries only verified members,
//     gated), and declared dead as any other;
//   - group size: the n of the log n formulas (suspicion timeout,
//     retransmissions, the anti-entropy interval) counts unverified
//     members up to the number of verified ones (groupSize): a group that
//     only grew by announcements at most doubles its n, one more log10(2)
//     in the formulas, not log10(16,384/n).
//
//   - holding: at most unverifiedQuota unverified members are live in the
//     view at once, as many as the members this member heard from, itself
//     included (the group it knows: another group of that size, merging,
//     fits whole), and at least unverifiedFloor (admitUnverified). An Alive that would add or
//     revive one more is ignored (Stats.MembersRefused; adding, it
//     schedules a settling exchange, settleLater, which brings the
//     refused once room is made, as when a group of 10 merges with one of
//     150: swim/sim TestMergeTwoGroupsFullView), unless the member
//     sent it itself (from the address it claims, as far as the transport
//     can tell: StepFromOtherSource) or it is in the join seed's view: a
//     flood of forged gossip holds a bounded part of the table, memory and
//     queue, however large MaxMembers, and its ghosts leave as their probes
//     fail. A real member refused this way is admitted when it is heard
//     from directly (it probes this member within about n periods) or when
//     a ghost's place is freed.
//
//   - sending: a packet to a member not verified carries nothing from
//     the queues, neither updates nor application broadcasts, only what
//     its kind carries (the ping of a probe or a relay's; this member's
//     Alive in a refutation or a join announcement, the refutation's
//     never to an accuser not verified that did not send the accusation
//     itself, tellAlive, and its announcement only when no verified
//     member is eligible, to one such member per protocol period at
//     most, announceAlive; an eager push's one update; the application's
//     message of SendTo) and the notice the member should hear (send);
//     neither the drain loop nor a push to random members sends it
//     anything (targets). Otherwise a member announced at a victim's
//     address, by anyone in plain mode, would draw up to MaxPacketSize
//     with each probe, relayed ping and drain round (issue 27, user33 F4:
//     about 40× the attacker's bytes over real sockets). A real member is
//     verified by its answer to its first challenge or probe (a round
//     trip after its first packet) and gets the queue from then on; a
//     joiner learns the group from its seed's view and from the answers
//     to its own probes meanwhile
//     (docs/experiments.md, “SWIM: nothing queued to members not
//     verified”).
//
//   - what is sent to or about it: a member this member was only told of
//     costs the address it is announced at what a real member needs to
//     be verified, and no more (issue 27, user37 F6: ghosts planted by
//     one datagram at a victim's address drew 30-40× its bytes from a
//     group, growing with the group). Its probe's ping (and stream
//     probe) stays: a real member answers it and is verified. Once it
//     was heard from at its address, its pings are paid from its ledger
//     (receipt.go). A failed
//     probe of it asks no intermediate to ping it (sendPingReqs): it was
//     never heard from, so nobody vouches for a path to it. Its
//     suspicion is not pushed to it (failProbe), and it is not probed
//     again while suspect (nextTarget): a real one hears the suspicion
//     with the notice of any packet from a member that verified it (its
//     seed, the members it probed), and is verified here when it probes
//     this member (its ping draws a challenge, whose ack verifies it),
//     within about n protocol periods. No push to random
//     members goes to it (targets): they fell back to members only told
//     of when too few verified ones were eligible. Its stale Alive,
//     relayed (or sent from another address than its own), gets the
//     accusation back to the relay only (accuseBack);
//     named as a suspicion's source or a declarer, it is pushed no
//     confirmation (suspecters) and no leave (correctLeft).
//     Dead, it gets no reconnect ping (tickReconnect), nor an isolated
//     member's view request (isolated): nothing says it ever lived
//     (docs/experiments.md, “SWIM: what a ghost costs its victim”).
//
// A member is verified at an address: one whose entry moves to another
// address (a dead or left member's ID reclaimed, a revival tie;
// readdress) is unverified there until it answers a challenge or probe
// there (receipt.go). A member
// that left, moved by anyone's gossip to a victim's address and revived,
// kept its verification and drew full packets to the victim (issue 27,
// user37 F2: 76-120× the attacker's bytes).
//
// A member revived at the address it was verified at stays verified
// there, whoever told of the revival (revive): verification proves
// receipt at an address, and is not proved again while a member stays at
// it, alive or dead. Most members learn that a member falsely declared
// dead refuted by gossip; unverified, they probed it gated and without
// the queue, and suspected it more (measured and not kept: swim/sim's
// interval false positives 605 to 612 in ModeSWIM, 407 to 428 in
// ModeLifeguard; docs/experiments.md, “SWIM: a member revived at its
// verified address stays verified”). What that leaves: a forger who
// revives, by gossip at rising incarnations, a dead member whose address
// another host took since, draws to that host what a verified member
// draws until its death is declared again, once per revival; the host
// must be at a former member's address, the same exposure as a verified
// member whose host went away before its death was declared.
//
// Relayed gossip does not vouch, nor do several relays together: a flood
// spreads by gossip like a real join announcement, so every member would
// hear each fake from several relays. A real member is verified by each
// member within about n protocol periods, when it probes them (the
// challenge its ping draws) or they probe it.

// unverifiedFloor is the least number of unverified live members a view
// may hold (unverifiedQuota): a join storm through one seed of up to 64
// members never meets the quota.
const unverifiedFloor = 64

// unverifiedQuota returns how many unverified live members the view may
// hold: one more than the verified live ones (this member), at least
// unverifiedFloor.
func (m *Member) unverifiedQuota() int {
	return max(unverifiedFloor, 1+m.live-m.unverified)
}

// admitUnverified reports whether the unverified member u announces may be
// made live (added, or revived from Dead or Left): u is the sender's own
// Alive, or an entry of the join seed's view (view: a view transfer), or
// the unverified live members are under unverifiedQuota.
func (m *Member) admitUnverified(in *inbound, u *Update, view bool) bool {
	return m.speaks(in, u.Node.ID) || m.seedView(in, view) || m.unverified < m.unverifiedQuota()
}

// speaks reports whether id is the packet's sender, from the address it
// claims as far as the transport can tell (not StepFromOtherSource): an
// update about id is then the sender's own.
func (m *Member) speaks(in *inbound, id ID) bool {
	return in.from == id && !in.otherSource
}

// answerable reports whether q, the packet's sender, may be sent an
// answer pushed at once (accuseBack, correctLeft): it is verified, or the
// packet came from the address it claims as far as the transport can
// tell (not StepFromOtherSource). A forger naming a ghost at a victim's
// address as the sender drew the answer there from every member it sent
// one to.
func (m *Member) answerable(in *inbound, q *peer) bool {
	return q.verified || m.speaks(in, q.node.ID)
}

// unverifiedCost is the least probe budget an unverified member's probe
// takes (unverifiedProbeCost).
const unverifiedCost = 3

// unverifiedProbeCost is the probe budget an unverified member's probe
// takes: one probe in unverifiedProbeCost at most goes to an unverified
// member. It is one more than the verified live members, at least
// unverifiedCost, so that each known member keeps its turn in every round.
func (m *Member) unverifiedProbeCost() int {
	return max(unverifiedCost, m.live-m.unverified+1)
}

// verify marks p verified, unless another verified live member is held
// at p's address: one address, one socket, speaks for one member, so that
// a host answering at one address for many member IDs it announced gets
// one of them verified, not one per protocol period (the refund below),
// each raising the unverified quota and taking a turn from the known
// members. p answering the current probe, which took the probe budget of
// an unverified member, gives the budget back (nextTarget).
func (m *Member) verify(p *peer) {
	if p.verified {
		return
	}
	if q := m.verifiedAt[p.node.Addr]; q != nil && q != p && q.verified && q.node.Addr == p.node.Addr && (q.state == StateAlive || q.state == StateSuspect) {
		return
	}
	m.verifiedAt[p.node.Addr] = p
	p.verified = true
	p.chal, p.chalUntil = 0, 0 // no challenge is needed any more (receipt.go)
	if p.state == StateAlive || p.state == StateSuspect {
		m.unverified--
	}
	if p == m.pr.target && m.pr.charged > 0 {
		m.probing.unverifiedTokens = min(m.probing.unverifiedTokens+m.pr.charged, m.pr.charged)
		m.pr.charged = 0
	}
}

// readdress moves p to n, its node at the address an update names (a
// dead or left member's ID reclaimed, reclaim; a revival tie, reviveTie).
// p's verification holds for the address it was verified at (verify): at
// another address p is unverified again, counted as such while live, and
// no longer holds its old address in verifiedAt. Otherwise a member that
// left or died, moved by anyone's gossip to a victim's address and
// revived there, would draw the queue and the application's broadcasts
// to the victim with every probe, relay and drain round (issue 27, user37
// F2).
func (m *Member) readdress(p *peer, n Node) {
	if n.Addr != p.node.Addr && p.verified {
		if m.verifiedAt[p.node.Addr] == p {
			delete(m.verifiedAt, p.node.Addr)
		}
		p.verified = false
		if p.state == StateAlive || p.state == StateSuspect {
			m.unverified++
		}
	}
	if n.Addr != p.node.Addr {
		// The challenge went to the old address, and the ledger is that
		// address's (receipt.go).
		p.chal, p.chalUntil, p.credit, p.direct, p.pinged = 0, 0, 0, false, false
	}
	p.node = n
}

// vouch verifies p, just made live, when the packet being applied is the
// view that answered this member's join (noteJoinSeed): the seed vouches
// for the members it lists. view is false for gossip: what the seed
// relays in the same period is others' word, not its view (a flood of
// forged Alive members, relayed by the seed just after the join, was
// verified).
func (m *Member) vouch(in *inbound, p *peer, view bool) {
	if m.seedView(in, view) {
		m.verify(p)
	}
}

// vouchHeld is vouch for p, already held live at the address the update
// names, when a view that could not vouch came from a seed's address
// during this join, before its answer or between the answer's parts
// (joinState.unvouched, noteJoinSeed): a seed writing wire format 1
// answered by datagram, its answer on a stream vouching later
// (StepJoinStreamAnswer), or a forger's view, spoofed from a seed's
// address or naming it from elsewhere, listed real members. Without such
// a view the members held before the seed's answer were heard of by
// gossip, brought by another member's view (a push-pull, a view asked of
// an unknown sender) or were this member's own group (a merge), and stay
// as they were until they answer a probe: vouched for whenever held,
// such members were verified without a probe in swim/sim's group
// formation, which reshuffled the later runs, and
// TestMergeTwoGroupsFullView's 150 + 10 merge at sim seed 2 went past
// its 300 s.
func (m *Member) vouchHeld(in *inbound, p *peer, view bool) {
	if m.join.unvouched {
		m.vouch(in, p, view)
	}
}

// seedView reports whether the packet being applied is a view transfer
// (view) from the seed that answered this member's join, within a protocol
// period of its first one (noteJoinSeed), received from the address the
// seed claims and echoing the join's token (Packet.JoinToken): one naming
// the seed from elsewhere is a forger's (StepFromOtherSource), which would
// otherwise have every member it lists vouched for while the seed's real
// view is awaited or being merged, and so is one without the token, even
// from the seed's address (issue 27, user39 F3: a view spoofed from the
// seed's address, sent in the join challenge's round trip, answered the
// join and vouched for the ghosts it listed). The token is drawn from the
// member's random source (New), which others cannot predict, and only the
// members the join went to see it.
func (m *Member) seedView(in *inbound, view bool) bool {
	return view && in.echoesJoin && in.from != "" && !in.otherSource && in.from == m.join.seed && in.now < m.join.seedUntil
}

// noteJoinSeed records, for a view transfer (MsgSync) received while
// joining from one of the addresses joined through and echoing the join's
// token (Packet.JoinToken), its sender as the seed
// whose view answers the join: that packet and the rest of the view, the
// sender's transfers within one protocol period, vouch for the members
// they list. A view from elsewhere vouches for nothing: a member that
// picked the joiner for its push-pull, or a forger racing the seed's
// answer, is not the member the joiner chose to trust; nor does a view
// that names a seed's address but arrived from another one
// (StepFromOtherSource: the claimed sender is a field of the packet).
// While the joins are still resent after a view without the token
// answered (joinState.askUntil: answersJoin), such a view is still the
// seed's, and each one starts its period anew (a Config.JoinTokenless
// member's seed answers every resend without a token); one that carries
// the token ends those resends, as the seed's own answer.
func (m *Member) noteJoinSeed(in *inbound, pkt *Packet) {
	if pkt.Kind == MsgSync && !in.echoesJoin && (m.join.pending || in.now < m.join.askUntil || in.now < m.join.seedUntil) && slices.Contains(m.join.seeds, pkt.From.Addr) {
		m.join.unvouched = true // vouchHeld
	}
	if pkt.Kind != MsgSync || !in.echoesJoin || in.otherSource || !slices.Contains(m.join.seeds, pkt.From.Addr) {
		return
	}
	asking := in.now < m.join.askUntil
	if !m.join.pending && !asking {
		return
	}
	if m.join.seed != pkt.From.ID || asking {
		m.join.seed, m.join.seedUntil = pkt.From.ID, in.now+m.cfg.ProbeInterval
	}
	if pkt.JoinToken != 0 {
		m.join.askUntil = 0
	}
}

// joinFallbackPeriods is how many protocol periods of views from members
// not joined through a pending join waits for its seed's (answersJoin),
// and how long the joins are still resent after a view without the
// token answered it.
const joinFallbackPeriods = 3

// answersJoin reports whether a view from from answers this member's
// pending join: it comes from one of the addresses joined through and
// echoes the join's token (Packet.JoinToken), or views from elsewhere, or
// without the token, have come for joinFallbackPeriods protocol periods
// (a seed that advertises an address other than the one dialled, behind a
// NAT or a load balancer, is taken at its word then). A view from
// elsewhere alone leaves the join pending and its attempts going on, so
// that the seed's own view, the only one that vouches beyond the
// unverified quota, still arrives, however long the seed's pull bound
// holds it back in a join storm: taken as the answer, it ended the join
// with the seed's view never asked for again. A view received from another
// address than its sender claims (StepFromOtherSource) answers no join,
// whatever it claims: a forger's view would complete a Join through an
// address where no member listens. (A seed whose datagrams leave from
// another address than it advertises still answers over a stream, which
// the joiner dialled.)
//
// A view from a seed's address without the token is a seed's that writes
// wire format 1, which cannot carry it, or a forger's spoofed from there
// (user39 F3). When its entry for its sender states no version range
// (format1View: a format-1 writer's; every format-2 writer states one),
// or when this member's own joins carry no token (Config.JoinTokenless:
// no seed can echo one), it answers the join at once, so that Joining
// turns false and Join returns without waiting joinFallbackPeriods
// (usr28 F2: fdswim's first attempts, shorter than three periods, ended
// with "no member answered" and a join through a format-1 seed took
// 6.5 s at a 1 s period). Any other view without the token answers as a
// view from elsewhere does, after joinFallbackPeriods. What such a view
// lists is merged; it vouches for nothing (seedView), unless the joins
// carry no token, when it vouches as the seed's did before join tokens.
//
// Answering at once does not end the resends (joinState.askUntil): a
// forger can write a range-less view as easily as a format-1 seed, and
// had the first such view from a seed's address ended them, one spoofed
// view arriving before the seed's answer, with that single answer lost,
// left the joiner holding only unverified members (atk28c), where the
// join waiting for its fallback would have kept asking. So the joins are
// still resent, every ProbeInterval, until a view echoing the token comes
// (noteJoinSeed: the seed's own answer, which vouches) or
// joinFallbackPeriods pass, as long as the fallback would have kept them
// going: as many joins and answers as before, only Join no longer waits
// for them. A Config.JoinTokenless member has no token whose echo could
// end them sooner: nothing in a format-1 view tells the seed's answer
// from a forger's, so it keeps asking for the whole joinFallbackPeriods,
// and the answer to each resend vouches as the seed's (noteJoinSeed), so
// that a seed's answer lost behind a forger's view is asked for again
// and counted; the resends cost what the fallback's did, and a seed that
// has admitted the joiner answers them as the pulls of a live member.
func (m *Member) answersJoin(in *inbound, from Node, pkt *Packet) bool {
	now := in.now
	if in.otherSource {
		return false
	}
	if slices.Contains(m.join.seeds, from.Addr) {
		if in.echoesJoin && pkt.JoinToken != 0 {
			return true
		}
		if pkt.JoinToken == 0 && (in.echoesJoin || format1View(pkt)) {
			m.join.askUntil = now + mulTimer(m.cfg.ProbeInterval, joinFallbackPeriods)
			return true
		}
	}
	if m.join.seedRefused {
		return false
	}
	if !m.join.otherView {
		m.join.otherView, m.join.otherBefore = true, now+mulTimer(m.cfg.ProbeInterval, joinFallbackPeriods)
		return false
	}
	return now >= m.join.otherBefore
}

// format1View reports whether the view transfer pkt was written in wire
// format 1, which has no field for a join token: its entry for its
// sender (a seed's view lists the seed) states no version range, which
// every format-2 writer's does (Update.Versions, Config.Versions). A
// forger may write one too; such a view answers a join at once but
// vouches for nothing and ends no resends (answersJoin).
func format1View(pkt *Packet) bool {
	for _, u := range pkt.Updates {
		if u.Node.ID == pkt.From.ID {
			return u.Kind == UpdateAlive && u.Versions.IsZero()
		}
	}
	return false
}

// seedViewRefused records that the MergeFilter refused a view transfer
// from from, echoing token (Packet.JoinToken). One from an address joined
// through, echoing the join's token, shows the seed answering from the
// address dialled, so no view from elsewhere answers the pending join any
// more (answersJoin): the seed's group, which the filter refused, is not
// joined through another of its members.
func (m *Member) seedViewRefused(from Node, token uint64) {
	if m.join.pending && token != 0 && token == m.join.token && slices.Contains(m.join.seeds, from.Addr) {
		m.join.seedRefused = true
	}
}

// groupSize is the n of the log n formulas: this member, the verified live
// members, and the unverified ones up to as many as the verified (see
// above). It is NumAlive while unverified members are fewer than verified
// ones.
func (m *Member) groupSize() int {
	known := m.live - m.unverified
	return 1 + known + min(m.unverified, known)
}
