package swim

import (
	"fmt"
	"slices"
	"time"
)

// Receiving: Step validates a packet, merges its updates (apply.go) and
// dispatches it by kind.

// Step processes one received packet at now. It returns an error wrapping
// ErrPacket, and changes nothing, for a malformed packet (unknown kind or
// update kind, empty sender ID, over-long ID or address, an update
// without the member's address, a Suspect or Dead update with an empty
// From, a ping, ping-req or join that cannot be answered: see below). A
// packet for another ID is dropped silently (counted in
// Stats.Misdirected); packets to a member that has left are ignored.
//
// An empty From.Addr means "at the address this member holds for
// From.ID": wire format 2 leaves the sender's address out of acks and
// nacks, whose receiver matches them by Seq and From.ID (swim/wire's
// payload layout; docs/algorithms.md, “SWIM: wire format and
// extensions”). A transport that knows where a datagram came from fills
// it in for senders this member does not know (swim/agent does), so that
// the view request such a sender gets (Stats.ViewRequests) reaches it;
// without either address no view is asked. A ping, ping-req or join must
// be answered, so one whose sender's address is empty and not in the view
// is refused with ErrPacket, as is a ping-req whose target has no address
// and is not in the view (with one in the view, the ping goes there).
// Nothing is ever sent to an empty address.
func (m *Member) Step(now time.Duration, pkt *Packet) error {
	return m.step(&inbound{now: now}, pkt)
}

// StepFromOtherSource is Step for a packet that the transport received
// from an address other than the one its sender claims (pkt.From.Addr):
// a datagram from another IP address or port, a stream from another IP
// address. Its sender's claim is only a field of the packet, so it does
// not speak for itself (verify.go): its own Alive is held within the
// unverified quota like relayed gossip, evicts no member from a full
// view, and the packet verifies no member: not its sender, nor, for an
// ack, the member it answers for; an ack answers no probe and completes
// no relay (onAck). A transport should pass an ack that comes from the
// host its sender is held at (the same IP address, from another port) to
// Step, so that a member behind a NAT that remaps its port answers its
// probes and is verified. That leaves a forger on the same host (or
// behind the same NAT address) able to answer for a crashed member, as
// probe numbers are predictable.
func (m *Member) StepFromOtherSource(now time.Duration, pkt *Packet) error {
	return m.step(&inbound{now: now, otherSource: true}, pkt)
}

// inbound is the context of one received packet, passed from Step to the
// functions that merge and answer it.
type inbound struct {
	now time.Duration
	// from is the packet's sender while its updates are merged, and
	// empty otherwise.
	from ID
	// replyTo is, while the updates of a ping or of a ping-req for this
	// member from a sender the view vouches for are merged, its sender:
	// the answer carries this member's Alive, so no separate one is sent
	// there (tellAlive). The answer to any other sender is bare.
	replyTo ID
	// sourceChecked: the transport checked the packet's source host
	// (StepSourceChecked), not its port: a join needs no challenge.
	sourceChecked bool
	// otherSource: the transport received the packet from an address
	// other than the one its sender claims (StepFromOtherSource): its
	// sender does not speak for itself (speaks).
	otherSource bool
	// admitted is the sender of a join whose challenge was answered
	// (challengeAnswered): it is applied without a new challenge.
	admitted ID
	// conflictSelf records that an update named this member's ID at
	// another address: a join in progress is retried.
	conflictSelf bool
	// vouched: before the packet was merged, the view held its sender at
	// the address it claims, and the transport received it from there
	// (reply.go).
	vouched bool
	// liveSender: the sender was vouched and held alive or suspect, not
	// down: an accusation in the packet is evidence that a member probed
	// this one (chargeRefutation).
	liveSender bool
	// queued: the answer sent at once to the packet (an ack) carries the
	// queue; its sender is vouched and its budget of such answers allowed
	// it (queuedAnswer, reply.go).
	queued bool
	// targetHeld: before the packet was merged, the view held a
	// ping-req's target at the address it names (relay.go).
	targetHeld bool
	// brought lists the members the packet's updates added to the view
	// or moved to another address, while they are merged: their address
	// is only the packet's claim (claimedBy).
	brought []ID
	// asked is the bytes of the view request the packet drew (noteSender),
	// counted in the limit of the answer to it (reply.go).
	asked int
	// viewChecked: the packet is a part of a view transfer whose whole
	// Config.MergeFilter accepted (holdViewPart).
	viewChecked bool
	// echoesJoin: the packet is a view transfer (MsgSync) that echoes the
	// token of this member's latest Join (Packet.JoinToken): an answer to
	// that join, not a forger's (verify.go, seedView); with
	// Config.JoinTokenless, one that carries no token.
	echoesJoin bool
	// joinAnswer: the packet answers this member's latest Join, and the
	// state it carries is delivered with RemoteState.Join: the join is
	// pending, or the packet is the seed's own answer (seedAnswer) while
	// the joins are still resent after a view without the token answered
	// the join at once (joinState.askUntil), as the seed's answer was
	// before that view could answer (atk29b F2). Set before the packet is
	// screened: a held state (heldstate.go) is read there.
	joinAnswer bool
}

// step is Step with the packet's context in.
func (m *Member) step(in *inbound, pkt *Packet) error {
	pkt, err := m.ackSenderFilled(pkt)
	if err != nil {
		return err
	}
	if err := validate(pkt); err != nil {
		return err
	}
	from, target, err := m.addresses(pkt)
	if err != nil {
		return err
	}
	if m.claimsOtherAddress(pkt) {
		in.otherSource = true
	}
	in.joinAnswer = m.join.pending || in.now < m.join.askUntil && m.seedAnswer(in, pkt)
	if m.screened(in, from, pkt) {
		return nil
	}
	joiner := pkt.Kind == MsgJoin && m.State(pkt.From.ID) != StateAlive
	// A member whose joins carry no token (Config.JoinTokenless: it
	// writes format 1) takes a view without one as echoing it, as before
	// join tokens: its seeds cannot echo what they were never sent.
	in.echoesJoin = pkt.Kind == MsgSync && (pkt.JoinToken != 0 && pkt.JoinToken == m.join.token || m.cfg.JoinTokenless && pkt.JoinToken == 0)
	in.vouched = m.vouched(in, from)
	if p := m.peers[from.ID]; in.vouched && (p.state == StateAlive || p.state == StateSuspect) {
		in.liveSender = true
	}
	in.queued = in.vouched && m.bareReplySize(from, pkt) > 0 && !m.challengePing(pkt) && m.queuedAnswer(in.now, m.peers[from.ID])
	if pkt.Kind == MsgPingReq {
		p := m.peers[target.ID]
		in.targetHeld = p != nil && p.node.Addr == target.Addr
	}
	m.mergeUpdates(in, pkt)
	m.receiveUser(in, pkt)
	m.noteSender(in, from, pkt)
	switch pkt.Kind {
	case MsgPing:
		m.hearRound(in, from, pkt.Ping.Seq)
		m.reply(in, from, pkt, Packet{Kind: MsgAck, To: from, Ack: Ack{Seq: pkt.Ping.Seq, NoSenderID: pkt.Ping.MatchBySeq}, AckPayload: m.ackPayload()})
	case MsgAck:
		m.onAck(in, from, pkt)
	case MsgNack:
		if !in.otherSource { // a nack from another host than its sender's is no one's
			m.onNack(in.now, pkt)
		}
	case MsgPingReq:
		m.onPingReq(in, pkt, from, target)
	case MsgJoin:
		if m.admitPull(in.now, from, pkt.Digest) {
			m.answerPull(in.now, from, pkt.Digest, pkt.JoinToken, joiner)
			if p := m.peers[from.ID]; joiner && p != nil {
				p.joinedUntil = in.now + m.cfg.ProbeInterval
			}
		}
	case MsgSync:
		m.onView(in, from, pkt)
	}
	m.challenge(in, from, pkt)
	return nil
}

// challenge credits the ledger of the sender of pkt (earn) and sends it a
// challenge ping (challengeSender) when it is held, unverified, at the
// address pkt came from as far as the transport can tell, and, for the
// challenge, pkt is not an ack (an answer to this member's
// ping with a nonce verifies it, onAck; others are no first contact) nor
// a join whose challenge it answered (challengeAnswered verifies it).
func (m *Member) challenge(in *inbound, from Node, pkt *Packet) {
	s := m.peers[pkt.From.ID]
	if s == nil || s.verified || in.otherSource || from.Addr != s.node.Addr {
		return
	}
	m.earn(s, from, pkt)
	if pkt.Kind == MsgAck || pkt.From.ID == in.admitted {
		return
	}
	m.challengeSender(in.now, s, pkt.Kind == MsgPing)
}

// addresses returns pkt's sender and ping-req target with their addresses
// filled in from the view where the packet leaves them out, or an error
// wrapping ErrPacket for a packet that must be answered at an address
// neither gives. A ping-req's target is pinged: without its address (no
// writer leaves it out), at the one in the view, else refused.
func (m *Member) addresses(pkt *Packet) (from, target Node, err error) {
	from = pkt.From
	if from.Addr == "" {
		if p := m.peers[from.ID]; p != nil {
			from.Addr = p.node.Addr
		} else if pkt.Kind == MsgPing || pkt.Kind == MsgPingReq || pkt.Kind == MsgJoin {
			return from, target, fmt.Errorf("%w: %v from %q without an address, and %q is not in the view", ErrPacket, pkt.Kind, from.ID, from.ID)
		}
	}
	target = pkt.PingReq.Target
	if pkt.Kind == MsgPingReq && target.Addr == "" && target.ID != m.self.ID {
		p := m.peers[target.ID]
		if p == nil {
			return from, target, fmt.Errorf("%w: ping-req from %q for %q without an address, and %q is not in the view", ErrPacket, from.ID, target.ID, target.ID)
		}
		target.Addr = p.node.Addr
	}
	return from, target, nil
}

// screened reports whether the valid packet pkt from from (its address
// filled) is taken care of before its updates are merged: ignored (this
// member left, the packet is for another ID or sent under this member's
// own, the application's MergeFilter refused a view), the ack of a join
// challenge, or a join held for a challenge or refused.
func (m *Member) screened(in *inbound, from Node, pkt *Packet) bool {
	if m.st == left {
		return true
	}
	if pkt.To.ID != "" && pkt.To.ID != m.self.ID || pkt.To.ID == "" && pkt.ToCheck != 0 && pkt.ToCheck != m.idCheck {
		m.stats.Misdirected++
		return true
	}
	self := pkt.From.ID == m.self.ID
	if (pkt.Kind == MsgSync || pkt.Kind == MsgJoin) && m.cfg.MergeFilter != nil && !self && !in.viewChecked {
		if viewPart(pkt) {
			m.holdViewPart(in, from, pkt) // the filter sees the whole transfer
			return true
		}
		if m.cfg.MergeFilter(from, pkt.Updates) != nil {
			m.stats.MergesRefused++
			m.viewRefused(pkt.From.ID)
			if pkt.Kind == MsgSync {
				m.seedViewRefused(from, pkt.JoinToken)
			}
			return true
		}
		if pkt.Kind == MsgSync && len(pkt.State) > 0 && m.holdState(in, pkt) {
			return true
		}
		if pkt.Kind == MsgSync && len(pkt.State) == 0 {
			m.viewAccepted(in.now, pkt.From.ID) // a view whole in one packet
		}
	}
	if pkt.Kind == MsgAck && m.challengeAnswered(in.now, from, pkt) {
		return true
	}
	if pkt.Kind == MsgJoin && m.st == running && !self && m.challenged(in, from, pkt) {
		return true
	}
	if pkt.Kind == MsgJoin && m.st == running && m.refuseJoin(in.now, from, pkt.Updates, pkt.JoinToken) {
		return true
	}
	if self && pkt.Kind == MsgSync && m.join.pending && m.st == running && pkt.From.Addr != "" && pkt.From.Addr != m.self.Addr {
		// The answer of a member that holds this ID itself and refused
		// this member's join (refuseJoin): a conflict, the join is
		// retried. Only a seed's answer to this join refuses it
		// (refusesJoin); anyone can send a view under this ID.
		m.conflict(in.now, pkt.From, m.self)
		if m.refusesJoin(in, pkt) {
			m.join.holder = pkt.From
		}
	}
	return self
}

// mergeUpdates merges pkt's updates: gossip, or a view transfer (MsgSync).
// An accusation of a member held live, gossiped by a sender not held live
// at the address the packet came from, is hearsay: this member's own
// suspicion, never a death.
func (m *Member) mergeUpdates(in *inbound, pkt *Packet) {
	gossip := pkt.Kind != MsgSync
	if in.queued {
		// The answer carries the queue, so this member's Alive, only to
		// a sender the view vouches for, within its budget (reply.go).
		in.replyTo = pkt.From.ID
	}
	in.from, in.conflictSelf = pkt.From.ID, false
	m.noteJoinSeed(in, pkt)
	if gossip {
		m.heardAgain(pkt.Updates)
	}
	for i := range pkt.Updates {
		u := &pkt.Updates[i]
		if !gossip {
			m.applyView(in, *u)
		} else if p := m.accusedLive(u); p != nil && !in.liveSender {
			m.hearsay(in, p, u)
		} else {
			m.applyUpdate(in, *u, true)
		}
	}
	in.replyTo, in.from = "", ""
}

// noteSender takes pkt, whose updates are merged, as a sign of life of its
// sender from (its address filled) when the view holds it at that address,
// and asks an unknown sender for its view.
func (m *Member) noteSender(in *inbound, from Node, pkt *Packet) {
	now := in.now
	s := m.peers[pkt.From.ID]
	switch {
	case s != nil && from.Addr != "" && from.Addr != s.node.Addr:
		// A node at another address under a held ID: not the member the
		// entry names, so no heartbeat of it. One held alive or suspect
		// there is told who holds its ID (a process paused past its
		// death, resumed after a restart reclaimed the ID elsewhere),
		// and reads the conflict at once, not at the next anti-entropy
		// exchange. A join is answered by refuseJoin, a view needs none.
		if (s.state == StateAlive || s.state == StateSuspect) && pkt.Kind != MsgJoin && pkt.Kind != MsgSync {
			m.accuseBack(&inbound{now: now, from: pkt.From.ID, otherSource: in.otherSource}, s, from)
		}
	case s != nil:
		// A sign of life, not a proof: a datagram's source is whatever
		// its sender wrote, and a stream (StepSourceChecked) proves the
		// host, not the claimed port (issue 27, user40 F1). The packet
		// draws a challenge, whose ack verifies (receipt.go, challenge).
		m.heard(now, s)
	case in.otherSource:
		// Received from another address than the one it claims: the
		// request would go to an address that did not send it.
	case m.asksView(now, from, pkt):
		size := m.askViewSize(from)
		m.sync.nextAskView = now + m.cfg.ProbeInterval
		m.stats.ViewRequests++
		m.askView(from)
		m.askedView(now, from, m.recvBytes(pkt), size)
		in.asked = size
	default:
		m.heardFromAsked(from, m.recvBytes(pkt))
	}
}

// asksView reports whether this member asks from, the unknown sender of
// pkt, for its view. A protocol packet from a member this member does not
// know comes from one that is in the group but whose Alive never reached
// this member (two members that joined at about the same time): its view
// names it with its incarnation. At most once per ProbeInterval, whoever
// the senders. (A sender believed dead gets the Dead update on the answer
// instead, and refutes.) A joiner does not ask the seed that challenges
// its join (a ping from one of its seeds' addresses): the view follows the
// ack. Nor is a sender asked when the request (this member's Alive, with
// its metadata and proof) would take the bytes sent to it past twice the
// bytes received from it (viewretry.go): the sender's address is only
// what the packet claims, so a small packet forged from a victim's
// address would make every member it reaches send the victim several
// times its bytes (a ping of 50 bytes drew an ack and a request of 500
// with 400 bytes of metadata). A first packet must therefore be at least
// half the request's size, with the bare ack to a ping (reply.go). Such a
// sender is learnt from the gossip that announces it, or from its own
// larger packets. The caller asks only about a packet received from the
// address it claims.
func (m *Member) asksView(now time.Duration, from Node, pkt *Packet) bool {
	return from.Addr != "" && pkt.Kind != MsgJoin && pkt.Kind != MsgSync && m.st == running && now >= m.sync.nextAskView &&
		!(m.join.pending && pkt.Kind == MsgPing && slices.Contains(m.join.seeds, from.Addr)) &&
		m.viewAskPaid(from, m.recvBytes(pkt), m.askViewSize(from)+m.bareReplySize(from, pkt))
}

// askViewSize bounds the bytes on the wire of askView's request to to
// (sentBytes).
func (m *Member) askViewSize(to Node) int {
	ask := m.askViewPacket(to)
	return m.sentBytes(&ask)
}

// onView ends a join answered by the view pkt from from (answersJoin),
// unless an update in it named this member's ID at another address (the
// join is then retried), and announces the joined member to the view's
// members.
func (m *Member) onView(in *inbound, from Node, pkt *Packet) {
	if m.join.pending && m.selfRefusal(pkt) {
		in.conflictSelf = true // a refusal at this member's own address
	}
	// A view naming this member's ID elsewhere answers the join only from
	// a seed, echoing the join's token; from anyone else it is an
	// EventConflict (aboutSelf) and the join goes on.
	answers := m.join.pending && m.answersJoin(in, from, pkt)
	if in.conflictSelf {
		answers = m.join.pending && m.refusesJoin(in, pkt)
	}
	joined := answers && !in.conflictSelf
	if answers {
		m.join.pending = in.conflictSelf
	}
	switch {
	case answers && m.join.pending:
		m.noteRefusal(in.now, from, pkt.Updates)
	case !m.join.pending:
		m.join.refusal, m.join.holder = nil, Node{}
	}
	if joined {
		m.join.announceUntil = in.now + m.cfg.ProbeInterval
	}
	m.mergePush(in, from, pkt, joined)
	if in.now < m.join.announceUntil {
		m.announceJoin(pkt.From.ID)
	}
}

// refusesJoin reports whether the view pkt, naming this member's ID at
// another address, refuses its pending join: it echoes the join's token
// (refuseJoin echoes it), comes from where it says (not
// StepFromOtherSource), and comes from one of the addresses joined
// through, or from elsewhere once such refusals have come for
// joinFallbackPeriods periods (a seed behind a NAT or a load balancer
// refuses from the address it advertises; answersJoin has the same
// fallback for its views). A stranger's forged view naming the joiner's
// ID elsewhere made Join fail with a conflict no member had, and stopped
// its resends (issue 27, atk27 F5): without the token, which only the
// seeds were sent, no view refuses. A seed writing wire format 1, which
// cannot echo the token, refuses no join: the joiner sees the
// EventConflict and keeps trying.
func (m *Member) refusesJoin(in *inbound, pkt *Packet) bool {
	if pkt.JoinToken == 0 || pkt.JoinToken != m.join.token || in.otherSource {
		return false
	}
	if slices.Contains(m.join.seeds, pkt.From.Addr) {
		return true
	}
	if !m.join.otherRefusal {
		m.join.otherRefusal, m.join.otherRefusalAfter = true, in.now+mulTimer(m.cfg.ProbeInterval, joinFallbackPeriods)
		return false
	}
	return in.now >= m.join.otherRefusalAfter
}

func validate(pkt *Packet) error {
	if pkt == nil {
		return fmt.Errorf("%w: nil packet", ErrPacket)
	}
	if pkt.Kind < MsgPing || pkt.Kind > MaxMessageKind {
		return fmt.Errorf("%w: unknown message kind %d", ErrPacket, pkt.Kind)
	}
	if pkt.From.ID == "" {
		return fmt.Errorf("%w: %v from an empty member ID", ErrPacket, pkt.Kind)
	}
	if tooLong(pkt.From) || tooLong(pkt.To) || tooLong(pkt.PingReq.Target) {
		return fmt.Errorf("%w: member ID or address longer than 255 bytes", ErrPacket)
	}
	if pkt.Kind == MsgPingReq && pkt.PingReq.Target.ID == "" {
		return fmt.Errorf("%w: ping-req without target", ErrPacket)
	}
	for i := range pkt.Broadcasts {
		b := &pkt.Broadcasts[i]
		if len(b.Data) == 0 || len(b.Data) > MaxBroadcastLen {
			return fmt.Errorf("%w: broadcast %d is %d bytes, want 1 to %d", ErrPacket, i, len(b.Data), MaxBroadcastLen)
		}
		if b.Origin == "" || len(b.Origin) > MaxIDLen || len(b.Key) > MaxBroadcastKeyLen {
			return fmt.Errorf("%w: broadcast %d: origin of %d bytes (want 1 to %d) or key of %d (at most %d)",
				ErrPacket, i, len(b.Origin), MaxIDLen, len(b.Key), MaxBroadcastKeyLen)
		}
	}
	if pkt.Kind == MsgUser && len(pkt.User) == 0 {
		return fmt.Errorf("%w: empty user message", ErrPacket)
	}
	if p := pkt.Part; pkt.Kind == MsgSync && !p.IsZero() && (len(pkt.Updates) == 0 || uint64(p.Offset)+uint64(len(pkt.Updates)) > uint64(p.Total)) {
		return fmt.Errorf("%w: view part of %d entries at %d of a %d-entry transfer, want 1 or more entries within the total",
			ErrPacket, len(pkt.Updates), p.Offset, p.Total)
	}
	for i := range pkt.Updates {
		u := &pkt.Updates[i]
		if len(u.Meta) > MaxMetaLen {
			return fmt.Errorf("%w: update %d: metadata of %d bytes, at most %d", ErrPacket, i, len(u.Meta), MaxMetaLen)
		}
		if u.Kind < UpdateAlive || u.Kind > UpdateDead {
			return fmt.Errorf("%w: update %d: unknown kind %d", ErrPacket, i, u.Kind)
		}
		if u.Node.ID == "" {
			return fmt.Errorf("%w: update %d: empty member ID", ErrPacket, i)
		}
		if u.Node.Addr == "" {
			// Every writer names the member's address in an update (wire
			// format 2 leaves addresses out of packet headers only): an
			// addressless member would be probed at an empty address.
			return fmt.Errorf("%w: update %d: %v of %q without an address", ErrPacket, i, u.Kind, u.Node.ID)
		}
		if tooLong(u.Node) || len(u.From) > MaxIDLen {
			return fmt.Errorf("%w: update %d: member ID or address longer than 255 bytes", ErrPacket, i)
		}
		if u.From == "" && u.Kind != UpdateAlive {
			// An anonymous suspicion would count as an independent
			// confirmation (Lifeguard) and a declaration names its declarer.
			return fmt.Errorf("%w: update %d: %v of %q without From", ErrPacket, i, u.Kind, u.Node.ID)
		}
	}
	return nil
}

func tooLong(n Node) bool { return len(n.ID) > MaxIDLen || len(n.Addr) > MaxAddrLen }
