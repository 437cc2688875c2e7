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
// Bootstrap) is answered at that address as by Step, and nil is returned:
// the stream's end tells the caller to expect nothing on it. An older
// joiner, which closes its join stream without reading it, is answered
// so once it has acked this member's challenge ping.
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
	if err := m.step(&inbound{now: now, sourceChecked: true}, join); err != nil || verified {
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
