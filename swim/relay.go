package swim

import (
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Ping-req relays (SWIM §3.1): a member asked by another to ping a target
// pings it, relays its ack to the asker (the origin), and under Lifeguard
// nacks the origin when the target stays silent (failTimeout).
//
// A ping-req names two addresses, the origin's and the target's, and
// either may be a victim's: a forged ping-req of about 50 bytes drew a
// ping of about 1,330 bytes to an arbitrary target and a relayed ack of
// about 1,290 to the origin, filled with the queue's updates and the
// application's broadcasts (issue 27). So, as for acks (reply.go), for
// an origin this member does not vouch for (not held at that address
// before the ping-req, or received from another address):
//
//   - the relayed ack or nack is bare (no queue, no broadcasts, no
//     notice) and is paid for when the ping-req comes: relayed only if
//     twice the ping-req's bytes, less the view request it drew, cover
//     the bare answer, whose bytes count then in the origin's
//     view-request budget (viewretry.go), whether or not an answer
//     follows. (Reserving it in asksView instead, as for an ack to a
//     ping, left small ping-reqs of joiners without their view request,
//     and joins under loss slower: docs/experiments.md, “SWIM: ping-req
//     relays and senders the view does not hold”.)
//   - the ping to the target carries at most the notice the target
//     should hear (send), never the queue nor the broadcasts;
//   - a ping-req for a target the view did not hold at that address is
//     not relayed: no member the view holds asked for it and none would
//     be pinged, so the relay could only send a stranger's packet to an
//     address of the stranger's choice (in plain mode, without spoofing
//     anything). A member that joined so recently that this member does
//     not hold it asks its other intermediates too.
//
// For an origin the view vouches for, a ping-req is relayed as SWIM's:
// the ping and the answer carry the queue, the ping within twice the
// ping-req's bytes (relayPingLimit), except that the ping to a
// target not verified at the address the ping-req names (verify.go: it
// never showed it receives there), held or not, carries at most its notice, as every
// packet to a member not verified does (verify.go, “sending”). Otherwise
// a vouched origin could plant Alive(ghost@victim) in one packet and draw
// the whole queue to the victim with each ping-req for the ghost (user33
// F3: about 6× its bytes), and so would the members' own ping-reqs for the
// ghost once their probes of it failed (F4).
//
// The relays held are bounded (maxRelays): a ping-req that finds them
// full, or that comes from an origin not vouched for when such origins
// already hold half of them, or from an origin whose ID or address
// already holds maxRelaysPerOrigin of them, or whose IP address (host,
// hostOf) already holds maxRelaysPerHost, is not relayed. The last two
// keep one origin, even a vouched one, from taking the room that members
// whose direct path is cut need (issue 27: an insider's flood of
// ping-reqs for silent targets filled the 128 and made two such members
// declare each other dead); the cap per host keeps an insider that
// announces a vouched member at each of 32 ports of one IP address from
// taking them all so (user37 F10): it takes at most a quarter, and would
// need four IP addresses to fill them. Members that share a host's IP
// address (several on one machine, or behind one NAT address) share its
// quarter too, far more than their own probes hold. Each relay is held until its
// target's ack or its deadline, so a flood of ping-reqs would otherwise
// grow the list, and the scans of every ack and Tick, without bound.
// Refused ping-reqs count in Stats.RelaysRefused; the origin's probe then
// relies on its other intermediates.

// maxRelays bounds the ping-req relays a member holds at once. A member
// receives on average fewer than IndirectChecks ping-reqs per protocol
// period (one per failed probe of the others, spread over the group), each
// held at most about a period, so 128 is far above what a group asks.
const maxRelays = 128

// maxRelaysPerOrigin bounds the relays held for one origin: those whose
// origin has its ID or its address. A member asks a given
// intermediate at most once per probe, and a relay is held until its
// target's ack or at most its probe timeout (Config.ProbeTimeout, by
// default half a protocol period), so a member's own probes hold one or
// two at a time; 4 leaves room for slow targets and short periods.
const maxRelaysPerOrigin = 4

// maxRelaysPerHost bounds the relays held for the origins of one IP
// address (hostOf): a quarter of maxRelays, room for the probes of 8 or
// more members on one host each holding maxRelaysPerOrigin at once, far
// more than a group asks of one intermediate (see maxRelays).
const maxRelaysPerHost = maxRelays / 4

// hostOf is the host part of an address, as the relays count their
// origins by host: the IP address of ip:port (an IPv4-mapped IPv6 address
// as IPv4, without its zone), what precedes the last colon of another
// address (host:port), or the whole address when it has no colon.
func hostOf(addr string) string {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap.Addr().Unmap().WithZone("").String()
	}
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[:i]
	}
	return addr
}

// onPingReq serves a ping-req from the member at origin (pkt.From, its
// address filled from the view when the packet left it out) for target
// (pkt.PingReq.Target, likewise).
func (m *Member) onPingReq(in *inbound, pkt *Packet, origin, t Node) {
	now := in.now
	if t.ID == m.self.ID {
		m.reply(in, origin, pkt, Packet{Kind: MsgAck, To: origin, Ack: Ack{Seq: pkt.PingReq.Seq}})
		return
	}
	answer := Packet{Kind: MsgAck, From: m.self, To: origin}
	bare := answer.Size() // a nack's is the same
	host := hostOf(origin.Addr)
	if !m.relayRoom(in, origin, host) || !in.vouched && bare > m.replyLimit(in, pkt) {
		m.stats.RelaysRefused++
		return
	}
	p := m.peers[t.ID]
	// verified: showed it receives (or configured) at the address named,
	// not only held there because some packet, maybe this origin's, said
	// so (user33 F3). A target not verified is pinged with a nonce, whose
	// ack verifies it (receipt.go).
	verified := in.targetHeld && p != nil && p.verified && p.node.Addr == t.Addr
	seq := m.otherSeq()
	if !verified {
		seq = m.nonce()
	}
	// The relayed ping is held to twice the ping-req's bytes, notice and
	// queue included (relayPingLimit); a ping-req too small to pay even
	// for the bare ping is not relayed.
	ping := Packet{Kind: MsgPing, From: m.self, To: t, Ping: Ping{Seq: seq}}
	limit := m.relayPingLimit(pkt)
	if m.sentBytes(&ping) > 2*m.recvBytes(pkt) {
		m.stats.RelaysRefused++
		return
	}
	if !in.vouched {
		if a := m.viewAskOf(origin); a != nil {
			a.sent += m.sentBytes(&answer)
		}
	}
	// One answer from the origin's budget of those that carry the queue
	// (queuedAnswer) for the relayed ping and its relayed answer
	// together: ping-reqs forged from a verified member's address naming
	// a verified target drew a ping with the whole queue to the target
	// each, 8.8-9× the forged bytes (issue 27, user40 F2).
	queued := in.vouched && m.queuedAnswer(now, m.peers[origin.ID])
	m.probing.relays = append(m.probing.relays, relay{seq: seq, origin: origin, originHost: host, originSeq: pkt.PingReq.Seq,
		target: t.ID, addr: t.Addr, nonce: !verified, sent: now, deadline: now + m.failTimeout(p), nack: pkt.PingReq.Nack,
		vouched: in.vouched, limit: bare, queued: queued})
	// With p's suspicion if this member suspects it (sendWithin); the
	// queue only to a verified target for a vouched origin whose budget
	// allows it; both within limit.
	m.sendWithin(ping, limit, queued && verified)
}

// relayPingLimit bounds, in Packet.Size units, the ping relayed for the
// ping-req pkt: its bytes on the wire are at most twice the ping-req's.
// Anyone can send a ping-req in a vouched member's name from its address
// (a spoofed datagram), naming a real target that acks at once and so
// frees its relay: each forged ping-req drew a ping, and within the
// origin's budget of queued answers (queuedAnswer) one a period carrying
// the whole queue, 2.4× the forged bytes to the target (issue 27, user40
// F2; docs/experiments.md, “SWIM: a relayed ping within twice its
// ping-req”). A real ping-req is about the relayed ping's size, so the
// limit leaves the notice and a few updates of the queue: relays serve
// failed probes, not dissemination.
func (m *Member) relayPingLimit(pkt *Packet) int {
	return 2*m.recvBytes(pkt) - m.cfg.WireOverhead
}

// relayRoom reports whether the relays held leave room for one more for
// the ping-req being stepped with in, from origin at host (hostOf), and
// whether its origin and target allow it (see above).
func (m *Member) relayRoom(in *inbound, origin Node, host string) bool {
	if len(m.probing.relays) >= maxRelays || !in.vouched && !in.targetHeld {
		return false
	}
	same, sameHost, unvouched := 0, 0, 0
	for i := range m.probing.relays {
		r := &m.probing.relays[i]
		if r.origin.ID == origin.ID || r.origin.Addr == origin.Addr {
			same++
		}
		if r.originHost == host {
			sameHost++
		}
		if !r.vouched {
			unvouched++
		}
	}
	return same < maxRelaysPerOrigin && sameHost < maxRelaysPerHost && (in.vouched || unvouched < maxRelays/2)
}

// relayAck relays an ack that answers one of this member's relayed pings
// to the relay's origin.
func (m *Member) relayAck(in *inbound, pkt *Packet) {
	for i := range m.probing.relays {
		r := &m.probing.relays[i]
		if r.seq != pkt.Ack.Seq {
			continue
		}
		if p := m.peers[r.target]; p != nil && p.node.ID == pkt.From.ID {
			p.answered = true
			m.observeRTT(p, in.now-r.sent)
			if r.nonce && !in.otherSource && p.node.Addr == r.addr && (pkt.From.Addr == "" || pkt.From.Addr == r.addr) {
				m.verify(p) // it received the nonce at its address
			}
		}
		m.answerRelay(r, Packet{Kind: MsgAck, To: r.origin, Ack: Ack{Seq: r.originSeq}})
		m.probing.relays = slices.Delete(m.probing.relays, i, i+1)
		return
	}
}

// tickRelays ends the relays whose deadline passed, nacking their origin
// when it asked for a nack.
func (m *Member) tickRelays(now time.Duration) {
	kept := m.probing.relays[:0]
	for _, r := range m.probing.relays {
		if now < r.deadline {
			kept = append(kept, r)
			continue
		}
		m.stats.RelaysExpired++
		if r.nack {
			m.stats.NacksSent++
			m.answerRelay(&r, Packet{Kind: MsgNack, To: r.origin, Nack: Nack{Seq: r.originSeq}})
		}
	}
	m.probing.relays = kept
}

// answerRelay sends pk, the relayed ack or the nack of r, to r's origin:
// as any packet when the origin was vouched for and its budget of
// answers that carry the queue allowed one when the ping-req came
// (r.queued; queuedAnswer, reply.go), with the notice alone when it did
// not, else bare (its bytes were counted when the ping-req came).
func (m *Member) answerRelay(r *relay, pk Packet) {
	if r.vouched {
		if p := m.peers[r.origin.ID]; p == nil || p.node.Addr != r.origin.Addr || r.queued {
			m.send(pk) // the queue only to a verified origin (send)
			return
		}
		m.stats.AnswersUnqueued++
		m.sendWithin(pk, m.cfg.MaxPacketSize, false) // the notice, not the queue (reply.go)
		return
	}
	m.sendWithin(pk, r.limit, false)
}
