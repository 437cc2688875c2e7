package swim

import "time"

// Verified members: a member this member has heard from directly (a packet
// it sent, an answer to a probe), that an intermediate vouched for (an ack
// relayed from it), that the seed of this member's join listed in its
// answer, or that Bootstrap configured. Anyone can make a member hold new
// members it has only been told of: in plain mode any packet, with signed
// self-updates any key holder, can announce Alive members by the
// thousands. Those members must not dilute the probing of the members
// this member knows, nor stretch the timeouts that grow with the group:
//
//   - probing: an unverified member takes at most one probe in
//     unverifiedCost (nextTarget), so the known members keep at least
//     (unverifiedCost−1)/unverifiedCost of the probes whatever the number
//     of unverified ones, and a crash among them is still detected within
//     unverifiedCost/(unverifiedCost−1) times the usual wait for a probe.
//     An unverified member that answers its probe becomes verified; one
//     that does not is suspected and declared dead as any other;
//   - group size: the n of the log n formulas (suspicion timeout,
//     retransmissions, the anti-entropy interval) counts unverified
//     members up to the number of verified ones (groupSize): a group that
//     only grew by announcements at most doubles its n, one more log10(2)
//     in the formulas, not log10(16,384/n).
//
// Relayed gossip does not vouch: a flood spreads by gossip like a real
// join announcement, so every member would hear each fake from several
// relays. A real member is verified by each member within about n
// protocol periods, when it probes them.

// unverifiedCost is the probe budget an unverified member's probe takes:
// one probe in unverifiedCost at most goes to an unverified member.
const unverifiedCost = 3

// verify marks p verified.
func (m *Member) verify(p *peer) {
	if p.verified {
		return
	}
	p.verified = true
	if p.state == StateAlive || p.state == StateSuspect {
		m.unverified--
	}
}

// vouch verifies p, just made live, when the packet being applied is the
// view that answered this member's join (noteJoinSeed): the seed vouches
// for the members it lists.
func (m *Member) vouch(in *inbound, p *peer) {
	if in.from != "" && in.from == m.joinSeed && in.now < m.joinSeedTo {
		m.verify(p)
	}
}

// noteJoinSeed records, for a view transfer (MsgSync) received while
// joining, its sender as the seed whose view answers the join: that packet
// and the rest of the view, the sender's transfers within one protocol
// period, vouch for the members they list.
func (m *Member) noteJoinSeed(now time.Duration, pkt *Packet) {
	if pkt.Kind == MsgSync && m.joining && m.joinSeed != pkt.From.ID {
		m.joinSeed, m.joinSeedTo = pkt.From.ID, now+m.cfg.ProbeInterval
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
