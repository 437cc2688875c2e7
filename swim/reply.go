package swim

import "time"

// Answers to senders the view does not vouch for. An ack goes to the
// address its ping claims, which may be a victim's: a forged ping of 48
// bytes drew acks of about 1,050, filled with the queue's updates and the
// application's broadcasts, sent to whatever address the ping named
// (issue 27). So an ack to a sender that this member did not hold at that
// address before the ping came, or that the transport received from
// another address (StepFromOtherSource), carries neither the queue nor
// the broadcasts: only, if they fit within twice the bytes of the packet
// it answers less the view request that packet drew (noteSender), the
// notice that a restarted member refutes (send) and its AckPayload. It
// counts against the sender's view-request budget (viewretry.go), and a
// ping draws a view request only if it pays for the request and the bare
// ack (asksView): the bytes sent to such an address stay within twice the
// bytes received from it, answers included. A bare ack is always sent: it
// is the answer a probe waits for, and it is about the size of the ping
// (the two packets name the same two members). Such a sender learns the
// group from its view request's answer and from the members' probes.
//
// Nor does an ack to a sender the view vouches for carry the queue each
// time: a ping forged from a verified member's own address, in its name,
// is vouched for (the transport sees the address it claims), and each drew
// the whole queue to that member, many times the pings' bytes with the
// queue kept full by forged gossip (issue 27, user39 F2;
// docs/experiments.md, “SWIM: answers that carry the queue, one a
// period”). The answers to one member that carry the queue (the acks of
// its pings and of its ping-reqs for this member; for each of its other
// ping-reqs, the relayed ping to the target and the relayed ack or nack
// together, one answer: relay.go) come one per ProbeInterval on average,
// three in a row at most (queuedAnswer); the others go as to a sender not
// vouched for, bare within twice the ping's bytes, with this member's own
// Alive if queued and it fits (withOwnAlive), or, relayed, with the notice
// alone (Stats.AnswersUnqueued). A member probes a given member once per
// round of its probe order (n periods in a group of n), so the acks of its
// probes keep the queue, and the burst leaves room for the pings it sends
// besides (relayed for others, retried, refutations); what goes bare is
// pings beyond those, forged in its name. With a burst of one, joins under
// loss were slower (docs/experiments.md, “SWIM: answers that carry the
// queue, one a period”).

// queuedBurst is how many answers to one member may carry the queue in
// a row (queuedAnswer) before the rate of one per ProbeInterval holds.
const queuedBurst = 3

// queuedAnswer reports whether an answer to p at now (the ack of its
// ping or of its ping-req for this member, the relayed ack or nack of its
// ping-req), or a message to it (SendTo), may carry the queue, and counts it if so: one per
// ProbeInterval on average, queuedBurst in a row at most (a generic cell
// rate algorithm: queuedAt is when the next one is due, and one may come
// queuedBurst−1 periods early). A member not verified at its address is
// sent no queue anyway (send), and spends nothing.
func (m *Member) queuedAnswer(now time.Duration, p *peer) bool {
	if p == nil || !p.verified {
		return true
	}
	t := m.cfg.ProbeInterval
	if now < p.queuedAt-mulTimer(t, queuedBurst-1) {
		return false
	}
	p.queuedAt = max(p.queuedAt, now) + t
	return true
}

// withOwnAlive returns pk, an answer to a member the view vouches for
// that goes without the queue (queuedAnswer), with this member's own
// Alive added when the queue holds it (a refutation, a new incarnation
// still spreading) and it fits limit (Packet.Size units). The acks that
// carry the queue are how a refutation travels in ModeSWIM: a member
// resuming from a pause answers the pings it missed all at once, each
// sender's with the queue at most once, and without the Alive its
// refutation reached fewer members, and more paused members were
// declared dead (docs/experiments.md, “SWIM: answers that carry the
// queue, one a period”).
func (m *Member) withOwnAlive(pk Packet, limit int) Packet {
	if b := m.queue.byID[m.self.ID]; b != nil && pk.Size()+b.u.Size() <= limit {
		pk.Updates = append(pk.Updates, b.u)
	}
	return pk
}

// vouched reports whether the view held from, the sender of a packet
// being stepped, at its address before the packet's updates were merged,
// and the transport received the packet from that address.
func (m *Member) vouched(in *inbound, from Node) bool {
	p := m.peers[from.ID]
	return !in.otherSource && p != nil && p.node.Addr == from.Addr
}

// reply sends pk, an ack answering pkt from to: as any packet when
// in.queued (with the notice alone when pkt is a challenge from a sender
// in.vouched: challengePing), else without the queue and the broadcasts,
// within twice pkt's bytes less in.asked (in wire bytes: recvBytes,
// sentBytes), and counted in to's view-request budget.
func (m *Member) reply(in *inbound, to Node, pkt *Packet, pk Packet) {
	pk.From = m.self
	if len(pk.AckPayload) > 0 && pk.Size() > m.cfg.MaxPacketSize {
		// An ack the payload would make too large for the transport
		// goes without it (Config.AckPayload), whoever it answers.
		pk.AckPayload = nil
		m.stats.AckPayloadsTooLarge++
	}
	if in.vouched && m.challengePing(pkt) {
		m.sendWithin(pk, m.cfg.MaxPacketSize, false) // the notice, not the queue (receipt.go)
		return
	}
	if in.queued {
		m.send(pk)
		return
	}
	limit := m.replyLimit(in, pkt)
	if in.vouched { // not a challenge's answer: that went above
		m.stats.AnswersUnqueued++
		pk = m.withOwnAlive(pk, limit)
	}
	if pk.Size() > limit {
		pk.AckPayload = nil
	}
	m.sendBare(to, pk, limit)
}

// replyLimit is the size (Packet.Size units) that the answers to pkt,
// stepped with in, from a sender this member does not vouch for, must fit:
// twice pkt's bytes less the view request it drew (in.asked), in wire bytes
// (recvBytes, sentBytes).
func (m *Member) replyLimit(in *inbound, pkt *Packet) int {
	return 2*m.recvBytes(pkt) - in.asked - m.cfg.WireOverhead
}

// sendBare sends pk to to without the queue and the broadcasts, within
// limit (Packet.Size units; the bare packet goes out even above it), and
// counts it in to's view-request budget (viewretry.go).
func (m *Member) sendBare(to Node, pk Packet, limit int) {
	n := len(m.ready.packets)
	queued := false
	m.sendWithin(pk, limit, queued)
	if a := m.viewAskOf(to); a != nil {
		a.sent += m.sentBytes(&m.ready.packets[n])
	}
}

// bareReplySize is the bytes on the wire (sentBytes) of the bare ack that
// this member sends from when it answers pkt at once, or 0 when pkt draws
// no such ack. (A relayed ping-req's answer comes later and is paid for
// when the ping-req is relayed: relay.go.)
func (m *Member) bareReplySize(from Node, pkt *Packet) int {
	if pkt.Kind != MsgPing && !(pkt.Kind == MsgPingReq && pkt.PingReq.Target.ID == m.self.ID) {
		return 0
	}
	ack := Packet{Kind: MsgAck, From: m.self, To: from}
	return m.sentBytes(&ack)
}

// recvBytes is what a received packet counts for in the budgets of
// senders the view does not vouch for: its length on the wire
// (Packet.WireLen) when the transport gave it, at most maxWireLen, else
// its Size plus Config.WireOverhead.
func (m *Member) recvBytes(pkt *Packet) int {
	if pkt.WireLen > 0 {
		return min(pkt.WireLen, maxWireLen)
	}
	return pkt.Size() + m.cfg.WireOverhead
}

// maxWireLen is the most a received packet's Packet.WireLen counts for:
// the largest UDP payload. A larger value, which no datagram has, would
// only overflow the budgets' sums.
const maxWireLen = 65535

// sentBytes bounds the length on the wire of a packet sent: its Size
// (an upper bound of its encoding) plus Config.WireOverhead.
func (m *Member) sentBytes(pk *Packet) int {
	return pk.Size() + m.cfg.WireOverhead
}
