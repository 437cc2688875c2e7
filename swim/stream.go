package swim

import (
	"fmt"
	"time"
)

// The stream fallback probe (memberlist's TCP ping; docs/algorithms.md,
// “SWIM: stream fallback probe”). When a probe's direct ping times out, a
// member with Config.StreamProbe set asks its caller, alongside the
// ping-reqs, to ping the target once over a reliable stream (TCP): a
// StreamProbe in Ready. The caller answers with StreamAck when the target
// acknowledged over the stream before the probe's deadline. The probe's
// verdict still waits for the end of the protocol period, so that a
// datagram ack (direct or relayed) that arrives in time wins: only when no
// datagram ack came and the stream ack did is the probe a stream-only
// success. Then the target is not suspected, its detector hears it, the
// local health multiplier is left unchanged (the member is reachable, but
// the datagram path to it is not), Stats.StreamOnly counts it and, at most
// once per StreamOnlyEventEvery per member, an EventStreamOnly warns that
// only the stream reaches it (a firewall dropping UDP, an MTU black hole).

// StreamOnlyEventEvery is the least time between two EventStreamOnly
// events about one member; Stats.StreamOnly counts every stream-only probe.
const StreamOnlyEventEvery = time.Minute

// StreamProbe asks the caller to ping To over a reliable stream and, if To
// acknowledges before Deadline (an instant on the member's clock: the end of
// the protocol period, after which the answer is useless), to call
// Member.StreamAck with To.ID and Seq. Updates are what To should hear
// with any packet sent to it (its own suspicion or declaration, the buddy
// system's rule; see send): the stream ping carries them, so that a member
// that datagrams do not reach still learns that it is suspected and
// refutes. The receiver applies them as a MsgGossip (no datagram answer).
type StreamProbe struct {
	To       Node
	Seq      uint32
	Deadline time.Duration
	Updates  []Update
}

// StreamAck reports that id acknowledged, over a reliable stream, the
// StreamProbe with seq. An answer for a probe that already ended (a
// datagram ack came first, or the period is over) only shows that the
// target accepts streams (peer.noStream); one from a member other than the
// probe's target is ignored.
func (m *Member) StreamAck(now time.Duration, id ID, seq uint32) {
	if m.st == left || !m.pr.stream || m.pr.seq != seq || m.pr.target == nil || m.pr.target.node.ID != id {
		return
	}
	// Late or not, the target accepts streams: its refusals count again.
	m.pr.target.streamRefused, m.pr.target.noStream = false, false
	if !m.pr.active {
		return
	}
	m.pr.streamAcked = true
	// A retried probe ends as soon as every intermediate has nacked
	// (onNack); with the stream ack in, it may end now if they all have.
	if m.pr.retry && m.pr.expectNacks > 0 && m.pr.nacks == m.pr.expectNacks {
		m.endStreamOnly(now)
	}
}

// streamOverhead is what a stream ping costs on the wire beyond its
// packet's bytes, as charged to the ledger of an unverified target
// (receipt.go): the frame's 4-byte length prefix and the headers of the
// connection's four segments this member sends at least (SYN 60 bytes,
// the handshake's ACK, the data and the FIN 52 each: IPv4 and TCP with
// the options Linux sends).
const streamOverhead = 4 + 60 + 3*52

// requestStreamProbe asks the caller for a stream ping of the current
// probe's target, once per probe. A target not verified gets it only
// when it was heard from at its address (peer.direct: a member never
// heard from there did not show that its datagrams are lost) and its
// ledger pays for the ping's bytes and streamOverhead, which it is
// charged (issue 27, user40 F4: a ghost's every failed probe opened a
// connection to its address, unpaid).
func (m *Member) requestStreamProbe() {
	if !m.cfg.StreamProbe || m.pr.stream {
		return
	}
	t := m.pr.target
	sp := StreamProbe{To: t.node, Seq: m.pr.seq, Deadline: m.pr.endAt}
	if u, ok := m.notice(sp.To.ID); ok {
		sp.Updates = []Update{u}
	}
	if !t.verified {
		ping := Packet{Kind: MsgPing, From: m.self, To: t.node, Ping: Ping{Seq: sp.Seq}, Updates: sp.Updates}
		cost := m.sentBytes(&ping) + streamOverhead
		if !t.direct || !pays(t, cost) {
			m.stats.StreamProbesUnpaid++
			return
		}
		t.credit -= cost
	}
	m.pr.stream = true
	m.stats.StreamProbes++
	m.ready.streams = append(m.ready.streams, sp)
}

// endStreamOnly ends the current probe as a stream-only success: no
// datagram ack came, the stream ack did.
func (m *Member) endStreamOnly(now time.Duration) {
	t := m.pr.target
	m.pr.active = false
	m.stats.StreamOnly++
	t.retried = false
	m.acked(now)
	if t.state != StateAlive && t.state != StateSuspect {
		return
	}
	m.heard(now, t)
	m.verify(t)
	if !t.streamWarned || now-t.streamWarnAt >= StreamOnlyEventEvery {
		t.streamWarned, t.streamWarnAt = true, now
		m.emit(EventStreamOnly, t, m.self.ID, now)
	}
}

// StreamFailed reports that the StreamProbe with seq got no answer: the
// connection was refused or reset, or the deadline passed. It lets a probe
// that is only waiting for the stream end early (the detector gate's
// retry, once every intermediate has nacked); calling it is optional.
// A failure before the deadline is taken as "nothing listens there"
// (pathsDone), unless the member was heard from within a protocol period
// of an earlier such failure: it then lives without accepting streams (started without a
// stream listener, or behind a firewall that rejects them), and its
// refusals say nothing.
func (m *Member) StreamFailed(now time.Duration, id ID, seq uint32) {
	if m.st == left || !m.pr.active || !m.pr.stream || m.pr.seq != seq || m.pr.target.node.ID != id || m.pr.streamAcked {
		return
	}
	m.pr.streamFailed = true
	if now < m.pr.endAt {
		m.pr.streamRefused = true
		m.pr.target.streamRefused, m.pr.target.refusedAt = true, now
	}
	m.pathsDone(now)
}

// streamPending reports whether the current probe waits for the stream
// fallback's answer.
func (m *Member) streamPending() bool {
	return m.pr.stream && !m.pr.streamAcked && !m.pr.streamFailed
}

// AnswerStreamPing processes a ping that arrived over a stream, for the
// caller to write the returned ack back on that stream. The updates the
// ping carries (the prober's buddy notice) are applied as a MsgGossip
// would be, with no datagram answer; the ack carries this member's own
// Alive (with any refutation they caused), so that a prober that suspects
// it learns the refutation even when no datagram of this member gets out.
// It returns an error wrapping ErrPacket, and changes nothing, for a packet
// that is not a valid ping to this member.
func (m *Member) AnswerStreamPing(now time.Duration, ping *Packet) (Packet, error) {
	return m.answerStreamPing(&inbound{now: now}, ping)
}

// AnswerStreamPingFromOtherSource is AnswerStreamPing for a stream that
// came from an address other than the one the ping's sender claims (as
// StepFromOtherSource for a datagram): the ping's updates are applied as
// from another source, so that the sender's own Alive among them does not
// speak for itself (verify.go). Without it, one process could open a
// stream per forged member, each ping from that member carrying its
// Alive, and have every one admitted beyond the unverified quota and
// verified.
func (m *Member) AnswerStreamPingFromOtherSource(now time.Duration, ping *Packet) (Packet, error) {
	return m.answerStreamPing(&inbound{now: now, otherSource: true}, ping)
}

// answerStreamPing is AnswerStreamPing with the stream's context in.
func (m *Member) answerStreamPing(in *inbound, ping *Packet) (Packet, error) {
	if err := validate(ping); err != nil {
		return Packet{}, err
	}
	if m.st == left {
		return Packet{}, ErrLeft
	}
	if ping.Kind != MsgPing || ping.To.ID != m.self.ID || ping.From.ID == m.self.ID {
		return Packet{}, fmt.Errorf("%w: a stream ping must be a ping from another member to this one", ErrPacket)
	}
	if len(ping.Updates) > 0 {
		g := *ping
		g.Kind = MsgGossip
		if err := m.step(in, &g); err != nil {
			return Packet{}, err
		}
	}
	return Packet{Kind: MsgAck, From: m.self, To: ping.From, Ack: Ack{Seq: ping.Ping.Seq},
		Updates: []Update{m.selfAlive()}, AckPayload: m.ackPayload()}, nil
}
