package swim

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

// vouched reports whether the view held from, the sender of a packet
// being stepped, at its address before the packet's updates were merged,
// and the transport received the packet from that address.
func (m *Member) vouched(in *inbound, from Node) bool {
	p := m.peers[from.ID]
	return !in.otherSource && p != nil && p.node.Addr == from.Addr
}

// reply sends pk, an ack answering pkt from to: as any packet when
// in.vouched (with the notice alone when pkt is a challenge:
// challengePing), else without the queue and the broadcasts, within twice
// pkt's bytes less in.asked (in wire bytes: recvBytes, sentBytes), and
// counted in to's view-request budget.
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
	if in.vouched {
		m.send(pk)
		return
	}
	limit := m.replyLimit(in, pkt)
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
