package swim

import "time"

// Verification by proof of receipt (verify.go). A member is verified at an
// address when it shows that it receives what is sent there: it acks, from
// that address and under its ID, a ping of this member's whose sequence
// number was drawn from the member's random source (nonce). The address a
// packet comes from proves nothing in plain mode: a datagram's source is
// whatever its sender writes, and one spoofed datagram per ghost, from the
// victim's address the ghost claims, verified the ghost, which then drew
// the queue, ping-reqs and pushes there (issue 27, user38 F2: 8-10× the
// attacker's bytes), and took a known member's probe turn for good (F3:
// 200 refreshed ghosts hid a real crash for over 120 s). So a packet from
// an unverified member's own address is a sign of life (heard) and draws
// one bare challenge ping (challengeSender); its ack, or the ack of this
// member's probe of it, which carries a nonce too (startProbe), verifies
// it (onAck). A round's probe number (2r, probeorder.go) is predictable,
// so only pings to verified members carry it.
//
// The challenges are bounded so that spoofed packets make this member
// send their claimed address no more than twice their bytes: one per
// member outstanding at a time, for a probe timeout (peer.chalUntil); one
// only when the packet that draws it pays for it and for the bare ack it
// draws (reply.go) within twice its bytes; and at most PullsPerPeriod per
// ProbeInterval from all senders together, like the join challenges
// (joinchallenge.go). A challenge is bare: no queue, no notice; and so is
// the ack that answers it (challengePing).

// nonce returns a sequence number from the member's random source, 3
// modulo 4: odd, so that it is never taken for a round of the probe order
// (hearRound), and apart from otherSeq's (1 modulo 4), so that the
// receiver can tell a challenge (challengePing).
func (m *Member) nonce() uint32 {
	return m.rng.Uint32() | 3
}

// challengePing reports whether pkt is a ping as this package sends to a
// member it has not verified (a challenge, a probe or relayed ping with a
// nonce): bare, numbered 3 modulo 4. Its sender holds this member
// unverified, and the ack it waits for goes without the queue (reply):
// a member that announces itself to many at once (a merging group's seed
// telling the other group's members, join.go) is challenged by all of them
// at once, and acks carrying its queue spent the retransmissions of the
// other group's Alives on members that knew them: 80 + 80 members merged
// in 2.5 min instead of 2 s (swim/sim TestMergeTwoGroupsFullView). No
// other ping is numbered 3 modulo 4 (rounds are even, otherSeq's 1
// modulo 4), except in ShuffledProbes, whose pings are numbered by one
// counter: there a challenge cannot be told from a probe, and its ack
// carries the queue as any other.
func (m *Member) challengePing(pkt *Packet) bool {
	return !m.cfg.ShuffledProbes && pkt.Kind == MsgPing && pkt.Ping.Seq&3 == 3 && len(pkt.Updates) == 0 && len(pkt.Broadcasts) == 0
}

// challengeSender sends s, the unverified live sender of pkt held at the
// address pkt came from, one bare ping with a nonce (challenge), unless
// one to s is outstanding, pkt does not pay for it, or this period's
// challenges are spent.
func (m *Member) challengeSender(now time.Duration, s *peer, pkt *Packet) {
	if m.st != running || s.verified || (s.state != StateAlive && s.state != StateSuspect) || now < s.chalUntil {
		return
	}
	ping := Packet{Kind: MsgPing, From: m.self, To: s.node}
	if m.sentBytes(&ping)+m.bareReplySize(s.node, pkt) > 2*m.recvBytes(pkt) {
		return
	}
	if now >= m.probing.chalPeriodEnd {
		m.probing.chalPeriodEnd, m.probing.chals = now+m.cfg.ProbeInterval, 0
	}
	if m.probing.chals >= m.cfg.PullsPerPeriod {
		m.stats.VerifyChallengesRefused++
		return
	}
	m.probing.chals++
	s.chal, s.chalUntil = m.nonce(), now+m.probeTimeout(s)
	ping.Ping.Seq = s.chal
	m.stats.VerifyChallenges++
	m.ready.packets = append(m.ready.packets, ping)
}

// challengeAcked verifies s, whose ack from its address echoes the nonce
// of the challenge sent to s (challengeSender), late or not: it shows s
// received it there (onAck).
func (m *Member) challengeAcked(s *peer) {
	s.chal, s.chalUntil = 0, 0
	m.verify(s)
}
