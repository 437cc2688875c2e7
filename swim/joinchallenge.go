package swim

import (
	"slices"
	"time"
)

// Join challenges: a join (MsgJoin) from a source this member has not
// reached is answered first with one bare ping to the address it names,
// and only the ack from that address, under the joiner's ID and with the
// ping's random sequence number, has the join applied and answered with
// the view. A join's sender address is whatever the packet claims (in
// plain mode, the datagram's source, which anyone can forge), and the
// answer to a join is this member's whole view and application state,
// tens of times the join's size, and the member it announces is probed
// by the whole group: forged joins naming a victim's address would make a
// group send the victim many times what the forger sent, then probe the
// forged members there for good. A challenge ping is about the join's
// size (the join carries the sender's node twice, in its header and its
// Alive; the ping, the same node as receiver and this member's as
// sender, without updates), a member at the victim's address drops it as
// misdirected (another ID), nothing else follows, and at most
// Config.PullsPerSender challenges wait for one address at a time, so
// forged joins make this member send the victim no more than twice the
// bytes they carried (a challenge over twice its join's size is not sent),
// and admit none of their members. A real joiner pays one round
// trip.
//
// A source needs no challenge when its ID is held alive or suspect at
// that address and answered a challenge there (or was configured there:
// Bootstrap), or when the transport checked the source host
// (StepSourceChecked, AnswerStreamJoin: swim/agent's joins over TCP,
// whose handshake proves the host, not the claimed port; the joiner is
// not verified by it, and AnswerStreamJoin answers it on the stream, not
// at the claimed port: streamjoin.go). Being heard
// from (verify.go) is not enough: a forged ping or gossip under a fake ID
// from the victim's address would make that ID heard.
//
// The challenge's sequence number is drawn from the member's random
// source, not its probe counter, which a member pinged by this one can
// read and predict; it is odd, so that it is never taken for a round of
// the probe order (probeorder.go).

// joinChallenge is a join waiting for the ack of the ping sent to its
// sender.
type joinChallenge struct {
	from  Node
	seq   uint32
	until time.Duration
	join  Packet // the join, applied once the ack comes
}

// StepSourceChecked is Step for a packet whose transport checked that it
// came from the host its sender claims (swim/agent: a packet on a TCP
// stream from that IP address, the handshake proving the host receives
// what is sent there; the stream's own port is ephemeral). A join
// applied this way gets no join challenge. It proves the host, not the
// claimed port: the packet is a sign of life of its sender, which it
// does not verify (issue 27, user40 F1: streams from one host verified
// ghosts at any port of it); a held unverified sender draws the usual
// challenge ping at its claimed address, whose ack verifies it
// (receipt.go), and its bytes are credited to its ledger.
func (m *Member) StepSourceChecked(now time.Duration, pkt *Packet) error {
	return m.step(&inbound{now: now, sourceChecked: true}, pkt)
}

// challenged reports whether the join pkt from from (its address filled)
// waits for a challenge instead of being applied now, and sends the
// challenge. At most PullsPerPeriod challenges wait at once, PullsPerSender
// per address, each for one ProbeInterval; a join from a sender already
// challenged waits for that challenge's ack. A join whose challenge would
// be more than twice its size (a join under a short ID to a member with a
// long ID and address) is refused: a forger picks the join's size, and
// the bound on what it makes this member send is that factor. Each
// refused join counts in Stats.PullsRefused; the joiner gets in through
// a join its transport checked (swim/agent resends an unanswered join
// over a stream).
func (m *Member) challenged(in *inbound, from Node, pkt *Packet) bool {
	now := in.now
	if from.ID == in.admitted || in.sourceChecked || m.join.noChallenge {
		return false
	}
	if p := m.peers[from.ID]; p != nil && p.reached != "" && p.reached == from.Addr && p.node.Addr == from.Addr &&
		(p.state == StateAlive || p.state == StateSuspect) {
		return false
	}
	m.join.challenges = slices.DeleteFunc(m.join.challenges, func(c joinChallenge) bool { return now >= c.until })
	perAddr := 0
	for _, c := range m.join.challenges {
		if c.from == from {
			m.stats.PullsRefused++
			return true
		}
		if c.from.Addr == from.Addr {
			perAddr++
		}
	}
	ping := Packet{Kind: MsgPing, From: m.self, To: from, Ping: Ping{MatchBySeq: true, Verifies: true}}
	if len(m.join.challenges) >= m.cfg.PullsPerPeriod || perAddr >= m.cfg.PullsPerSender || ping.Size() > 2*pkt.Size() {
		m.stats.PullsRefused++
		return true
	}
	// The join is kept without application data (fdkit's joins carry
	// none; a forged one's could be large): its updates, digest and
	// token.
	c := joinChallenge{from: from, seq: m.rng.Uint32() | 1, until: now + m.cfg.ProbeInterval,
		join: Packet{Kind: MsgJoin, From: from, To: pkt.To, Updates: slices.Clone(pkt.Updates), Digest: pkt.Digest, JoinToken: pkt.JoinToken}}
	m.join.challenges = append(m.join.challenges, c)
	m.stats.JoinChallenges++
	ping.Ping.Seq = c.seq
	m.ready.packets = append(m.ready.packets, ping) // its ack, without IDs, is matched by AckSender
	return true
}

// challengeAnswered applies the join whose challenge the ack pkt (from
// from, its address filled) answers, and reports whether it did.
func (m *Member) challengeAnswered(now time.Duration, from Node, pkt *Packet) bool {
	// An ack without its sender's address (wire format 2 leaves it out)
	// from an ID the view holds elsewhere (a conflicting claim) had the
	// view's address filled in by Step; the random sequence number, which
	// only the challenge's receiver has seen, identifies it.
	i := slices.IndexFunc(m.join.challenges, func(c joinChallenge) bool {
		return c.seq == pkt.Ack.Seq && c.from.ID == from.ID && (c.from.Addr == from.Addr || pkt.From.Addr == "") && now < c.until
	})
	if i < 0 {
		return false
	}
	join := m.join.challenges[i].join
	from = join.From
	m.join.challenges = slices.Delete(m.join.challenges, i, i+1)
	err := m.step(&inbound{now: now, admitted: from.ID}, &join) // validated when it came
	if p := m.peers[from.ID]; err == nil && p != nil && p.node.Addr == from.Addr {
		m.verify(p) // it answered at that address
		p.reached = from.Addr
	}
	return true
}
