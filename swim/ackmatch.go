package swim

import "fmt"

// An ack to a probe's ping may leave out its sender's ID (Ping.MatchBySeq,
// Ack.NoSenderID): the prober knows whom it pinged with the ack's sequence
// number. A probe's round trip then names the target in the ping and no
// one in the ack, as memberlist's does, instead of naming the target in
// both; with the IDs of host names or UUIDs that is most of a probe's
// bytes (docs/experiments.md, “Wire bytes per packet”). Challenge pings
// (a join's, joinchallenge.go, and an unverified member's, receipt.go)
// ask for such acks too: a joiner is challenged by its seed and by every
// member it announces itself to, one ack each. A ping whose ack verifies
// its receiver (Ping.Verifies) still names the receiver in full.
//
// The prober keeps the sequence numbers of its latest sentPingsKept probe
// pings with their targets, and of its challenges, so that a late ack,
// one that comes after its probe ended, is still taken as its sender's (a
// live member's ack, its piggybacked updates and its refutations), as one
// with the sender's ID is. Round numbers and nonces keep the sequence numbers of distinct pings
// apart (probeorder.go, receipt.go); a number found twice, with two
// targets, matches neither.
//
// swim/wire leaves the IDs out of plain packets, and of sealed ones bound
// to their receiver (the receiver's ID is sealed with them as additional
// data), so that a replay of one member's ack answers no other member's
// probe.
//
// The ID filled in is only what the prober expects: the transport still
// checks that the ack came from the host the target is held at (onAck,
// StepFromOtherSource), as it does for an ack that names its sender. A
// forger that knows the round answers for a crashed target no better
// without the ID than with it.

// sentPingsKept is how many probe pings a member remembers: with one probe
// per protocol period, acks up to that many periods late.
const sentPingsKept = 8

type sentPing struct {
	seq uint32
	id  ID
}

// sentPings is a ring of the latest pings of one sort, allocated at the
// first add: probe pings (sentPingsKept of them), or challenge pings
// (challengesKept).
type sentPings struct {
	ring []sentPing
	next int
}

func (s *sentPings) add(keep int, seq uint32, id ID) {
	if s.ring == nil {
		s.ring = make([]sentPing, keep)
	}
	s.ring[s.next] = sentPing{seq: seq, id: id}
	s.next = (s.next + 1) % len(s.ring)
}

// find returns the receiver of the ping with sequence number seq, if one
// receiver had it.
func (s *sentPings) find(seq uint32) (ID, bool) {
	var id ID
	for _, p := range s.ring {
		switch {
		case p.id == "" || p.seq != seq || p.id == id:
		case id != "":
			return "", false
		default:
			id = p.id
		}
	}
	return id, id != ""
}

// challengesKept is how many challenges of unverified members (receipt.go)
// a member remembers: two periods' budget of them (PullsPerPeriod a
// ProbeInterval, counted as sent, not as outstanding), so that a flood of
// challenges drawn by forged packets does not push out one whose ack is
// still due (within a probe timeout), up to maxChallengesKept. They are
// kept apart from the probe pings, which a flood of challenges could
// otherwise push out within one probe. Join challenges need no ring: the
// member keeps each one until its ack comes or its period ends
// (joinchallenge.go), and a sender answering its own joins at once frees
// a slot of that budget per round trip, so a ring of them could be cycled
// within a real joiner's round trip (atk30 F1).
func (m *Member) challengesKept() int {
	return min(max(1, m.cfg.PullsPerPeriod), maxChallengesKept/2) * 2
}

// maxChallengesKept bounds the ring of challenges, whatever
// Config.PullsPerPeriod says (a budget set high to leave pulls unbounded
// would otherwise size it: atk30 F4).
const maxChallengesKept = 1 << 12

// AckSender returns the ID of the member that this member's ping with
// sequence number seq went to, for an ack that leaves its sender's ID out
// (Ack.NoSenderID): among its latest 8 probe pings and, when none of them
// had seq, its join challenges waiting for an ack and its latest
// challenges of unverified members. ok is false when no such ping, or two
// to different members, had seq. Step fills the ID in itself; a transport
// that checks an ack's source against its sender's address calls
// AckSender first.
func (m *Member) AckSender(seq uint32) (id ID, ok bool) {
	if id, ok := m.probing.sentPings.find(seq); ok {
		return id, true
	}
	for _, c := range m.join.challenges {
		switch {
		case c.seq != seq || c.from.ID == id:
		case id != "":
			return "", false
		default:
			id = c.from.ID
		}
	}
	if id != "" {
		return id, true
	}
	return m.probing.sentChallenges.find(seq)
}

// ackSenderFilled returns pkt with its sender's ID filled in when it is an
// ack that left it out (AckSender), or an error wrapping ErrPacket when no
// probe ping of this member's matches it (Stats.AcksUnmatched). Other
// packets are returned as they are. An ack that comes with an address
// other than the one the view holds for the member it matches (a
// transport that filled in the datagram's source without calling
// AckSender first) is then judged by claimsOtherAddress, as a named one.
func (m *Member) ackSenderFilled(pkt *Packet) (*Packet, error) {
	if pkt == nil || pkt.Kind != MsgAck || pkt.From.ID != "" {
		return pkt, nil
	}
	id, ok := m.AckSender(pkt.Ack.Seq)
	if !ok {
		m.stats.AcksUnmatched++
		return nil, fmt.Errorf("%w: ack %d without its sender's ID matches none of the latest probe pings and challenges", ErrPacket, pkt.Ack.Seq)
	}
	q := *pkt
	q.From.ID = id
	return &q, nil
}

// pingedAt reports whether this member's current probe or one of the
// relays it runs sent its ping with sequence number seq to addr.
func (m *Member) pingedAt(addr string, seq uint32) bool {
	if m.pr.active && m.pr.seq == seq && m.pr.addr == addr {
		return true
	}
	for _, r := range m.probing.relays {
		if r.seq == seq && r.addr == addr {
			return true
		}
	}
	return false
}

// claimsOtherAddress reports whether pkt, an ack or a nack, claims another
// address than the one the view holds for its sender (format 1 writes
// one; a decoder reads one anywhere): the transport found it came from
// there, not from the member it names, so Step takes it as
// StepFromOtherSource takes it (atk28 F1: an insider's acks claiming its
// own address kept a crashed member alive). Not an ack from the very
// address this member's ping with its number went to: a relayed ping goes
// where the ping-req names its target, which may be an address the view
// does not hold yet (a member that moved; atk28b F2).
func (m *Member) claimsOtherAddress(pkt *Packet) bool {
	if pkt.Kind != MsgAck && pkt.Kind != MsgNack || pkt.From.Addr == "" {
		return false
	}
	p := m.peers[pkt.From.ID]
	if p == nil || p.node.Addr == pkt.From.Addr {
		return false
	}
	return pkt.Kind == MsgNack || !m.pingedAt(pkt.From.Addr, pkt.Ack.Seq)
}
