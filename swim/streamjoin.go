package swim

import (
	"fmt"
	"slices"
	"time"
)

// Joins over a stream (issue 27, user40 F1's reflection): a transport that
// received a join on a stream from the IP address its sender claims
// proves the host, not the claimed port, which anyone on that host (or
// behind the same NAT address) may name. Answered at the claimed address,
// such a join made a member send its whole view, tens of times the
// join's size, to another port of the sender's host. AnswerStreamJoin
// answers it on the stream instead, which reaches the sender itself.

// AnswerStreamJoin processes a join (MsgJoin) that arrived over a stream
// from the IP address its sender claims, and returns the packets for the
// caller to write back on that stream, in order: the answer to the join
// (the application state, the view, a refusal of a conflicting ID, a
// request for the sender's view) that Step would send to the sender's
// claimed address. The join needs no join challenge (joinchallenge.go).
// Its sender is not verified by it: its bytes are credited to its ledger
// and it draws the usual challenge ping at its claimed address (receipt.go),
// whose ack verifies it; whatever else goes to that address stays within
// the rules for unverified members.
//
// A sender already held alive or suspect at the claimed address and
// verified there by a challenge or probe ack (or configured there,
// Bootstrap) is answered on the stream too when its join carries a token
// (Packet.JoinToken): the answer read back on a stream its sender dialled
// is one only this member could write, and vouches for what it lists as
// a token's echo does, even from a member writing wire format 1, whose
// datagrams cannot echo it (StepJoinStreamAnswer). A join without a token
// from such a sender is answered at its address as by Step, and nil is
// returned: the stream's end tells the caller to expect nothing on it. An
// older joiner, which sends no token and closes its join stream without
// reading it, is answered so once it has acked this member's challenge
// ping (every joiner that sends tokens reads the stream's answer).
//
// It returns an error wrapping ErrPacket, and changes nothing, for a
// packet that is not a valid join to this member, and ErrLeft after
// Leave.
func (m *Member) AnswerStreamJoin(now time.Duration, join *Packet) ([]Packet, error) {
	if err := validate(join); err != nil {
		return nil, err
	}
	if m.st == left {
		return nil, ErrLeft
	}
	if join.Kind != MsgJoin || join.From.ID == m.self.ID {
		return nil, fmt.Errorf("%w: a stream join must be a join from another member", ErrPacket)
	}
	from, _, err := m.addresses(join)
	if err != nil {
		return nil, err
	}
	first, verified := len(m.ready.packets), m.heldVerified(from)
	if err := m.step(&inbound{now: now, sourceChecked: true}, join); err != nil || verified && join.JoinToken == 0 {
		return nil, err
	}
	// The answer is what the join appended for its sender that only a
	// join draws: views, state, refusal (MsgSync) and view requests
	// (MsgJoin). A challenge ping and gossip stay datagrams, paid by the
	// sender's ledger.
	var reply []Packet
	kept := m.ready.packets[:first]
	for _, p := range m.ready.packets[first:] {
		if (p.Kind == MsgSync || p.Kind == MsgJoin) && p.To.ID == from.ID && p.To.Addr == from.Addr {
			p.Updates = slices.Clone(p.Updates) // the caller's, read on another goroutine
			reply = append(reply, p)
			continue
		}
		kept = append(kept, p)
	}
	clear(m.ready.packets[len(kept):])
	m.ready.packets = kept
	return reply, nil
}

// heldVerified reports whether from (its address filled) is held alive or
// suspect at its address and verified (verify.go): it acked a ping of
// this member's with a nonce there, or was configured there.
func (m *Member) heldVerified(from Node) bool {
	p := m.peers[from.ID]
	return p != nil && p.verified && p.node.Addr == from.Addr && (p.state == StateAlive || p.state == StateSuspect)
}

// StepJoinStreamAnswer is StepSourceChecked for a packet read back on a
// stream this member dialled to pkt.From.Addr to write a join carrying
// token (swim/agent: a join resent to a seed over a stream, whose answer
// it reads: AnswerStreamJoin). A view transfer (MsgSync) that carries no
// token, from an address of the latest Join, is taken as echoing token
// when token is that Join's: a view without the token (a seed writing
// wire format 1, which has no field for it) answers the join as the
// seed's own answer, vouches for the members it lists (verify.go,
// seedView), ends the join's resends (joinState.askUntil), releases a
// merging push held for it (mergePush) and has its state delivered as a
// join's, as a datagram echoing the token does. The stream is the proof
// a token's echo gives on a datagram: the joiner opened it to the seed's
// address, whose listener is the seed, and a forger who did not see the
// join cannot write into it (one on the path between them can, as it can
// read the token). The caller must check that the frames it passes came
// from the member at the address dialled (pkt.From.Addr is it); any other
// packet, a view echoing a token of its own, or a token not the latest
// Join's, is stepped as by StepSourceChecked.
func (m *Member) StepJoinStreamAnswer(now time.Duration, token uint64, pkt *Packet) error {
	if pkt != nil && pkt.Kind == MsgSync && pkt.JoinToken == 0 && token != 0 && token == m.join.token &&
		slices.Contains(m.join.seeds, pkt.From.Addr) {
		echo := *pkt // the caller's packet is not written into
		echo.JoinToken = token
		pkt = &echo
	}
	return m.step(&inbound{now: now, sourceChecked: true}, pkt)
}
