package swim

import (
	"math"
	"time"
)

// ID names a member. It is chosen by the member itself, is unique in the
// group, and survives restarts (a restarted member keeps its ID and refutes
// what the group believed about its previous life with a higher incarnation).
// IDs are at most MaxIDLen bytes.
type ID string

// MaxIDLen and MaxAddrLen bound the length in bytes of an ID and of an
// address; New rejects longer ones and a decoder should too.
const (
	MaxIDLen   = 255
	MaxAddrLen = 255
)

// Incarnation is a member's incarnation number (SWIM §4.2; docs/algorithms.md,
// “SWIM suspicion and incarnations”). It starts at 0 and only the member itself
// increases it, to refute a suspicion. Arithmetic saturates at math.MaxUint64
// instead of wrapping, so a corrupt or hostile update can pin a member's number
// at the maximum but can never make a newer incarnation compare as older.
type Incarnation uint64

// MaxIncarnation is the largest incarnation; Next saturates there.
const MaxIncarnation = Incarnation(math.MaxUint64)

// MaxIncarnationJump bounds how far above the incarnation stored for a
// member (or, for a member's own ID, its current incarnation) an update may
// claim to be: an update further above is implausible, since honest
// incarnations rise by one per refutation, and is refused
// (Stats.Implausible). Without the bound, one crafted Suspect or Dead at
// MaxIncarnation kills a member for good: its refutation saturates at the
// same number and loses. With it, pushing a member to the limit by
// accusations takes at least 2^64/2^20 = 2^44 crafted updates, each answered
// by a refutation.
//
// The bound is relative to the stored incarnation, so it needs the stored
// incarnation to rise only by the member's own word: without signed
// self-updates, forged Alive(l, 2^20) then Alive(l, 2^21) make another
// member store 2^21 and accept Suspect(l, 2^21), which l, at 0, refuses as
// implausible and never refutes. With Config.SigningKey only Alive updates
// signed by l raise what others store and accusations above it are taken at
// it, so every accepted accusation is within l's own window and refutable
// (docs/algorithms.md, “SWIM: hostile and stale updates”).
const MaxIncarnationJump = Incarnation(1 << 20)

// maxAccusationJump bounds an accusation (a Suspect or a Dead that is not
// a leave) the way MaxIncarnationJump bounds a member's own word, at half
// of it: the refutation of an accusation accepted at one member, one above
// it, must be an Alive that every other member accepts, also those that
// never saw the accusation and store the member's incarnation from before.
// With the same bound for both, one forged Suspect exactly
// MaxIncarnationJump above made the suspect's refutation implausible at
// every other member, which then kept the member's old incarnation and,
// at its next false suspicion, held a live member dead (usr27's F1). At
// half, a refutation is within MaxIncarnationJump of what every member
// stores that saw the member's previous refutation.
const maxAccusationJump = MaxIncarnationJump / 2

// jumpBound is how far above the stored incarnation an update of change c
// may claim to be: MaxIncarnationJump for a member's own word (an Alive or
// a leave), maxAccusationJump for another member's accusation.
func jumpBound(c change) Incarnation {
	if c.accusation() {
		return maxAccusationJump
	}
	return MaxIncarnationJump
}

// Next returns i+1, or MaxIncarnation when i is already the maximum.
func (i Incarnation) Next() Incarnation {
	if i == MaxIncarnation {
		return i
	}
	return i + 1
}

// MessageKind says which protocol message a Packet carries.
type MessageKind uint8

// Message kinds. The numbering is part of the wire format's contract: never
// renumber, only append.
const (
	// MsgPing is a direct probe (Packet.Ping). The receiver answers with an
	// Ack carrying the same Seq.
	MsgPing MessageKind = iota + 1
	// MsgAck answers a Ping, or relays the target's answer to the member
	// that sent a PingReq (Packet.Ack).
	MsgAck
	// MsgNack is Lifeguard's negative acknowledgement: an intermediate of a
	// PingReq with Nack set tells the requester that its own ping of the
	// target went unanswered (Packet.Nack).
	MsgNack
	// MsgPingReq asks the receiver to probe PingReq.Target on the sender's
	// behalf (SWIM's indirect probe, Packet.PingReq).
	MsgPingReq
	// MsgJoin asks the receiver, a known member, to admit the sender: the
	// sender's Alive update travels in Packet.Updates and the receiver
	// answers with one or more MsgSync packets.
	MsgJoin
	// MsgSync carries the sender's whole membership view as updates, in as
	// many packets as the size limit needs. It answers a MsgJoin; it
	// carries no body. A MsgJoin from a member already in the group is an
	// anti-entropy pull: with a view digest (Packet.Digest) the receiver
	// answers only when its own view differs, and then also asks for the
	// sender's (a MsgJoin without digest); see Member.Step.
	MsgSync
	// MsgGossip carries only updates and gets no answer (eager
	// dissemination, Lifeguard modes; see Config.GossipFanout and the
	// package doc): a member sends it at once with a suspicion it raises
	// (to the suspect), its own confirmation (to the suspecters and
	// GossipFanout random members), its own declaration and a refutation
	// that ended a suspicion it held (to GossipFanout random members), its
	// own leave (to GossipFanout random members) and another's (to members
	// still declaring the leaver dead), and a declaration heard about a
	// member it suspected too (to GossipFanout random members). Suspicions
	// heard from others are not forwarded.
	MsgGossip
	// MsgUser carries one application message (Packet.User) from the
	// sender's application to the receiver's, best effort, with the usual
	// piggybacked updates; it gets no answer. Wire format 2 and later.
	MsgUser
)

// MaxMessageKind is the highest message kind this version knows; a
// decoder reports higher kinds as unknown (from a later version).
const MaxMessageKind = MsgUser

// String returns the kind's name.
func (k MessageKind) String() string {
	switch k {
	case MsgPing:
		return "ping"
	case MsgAck:
		return "ack"
	case MsgNack:
		return "nack"
	case MsgPingReq:
		return "ping-req"
	case MsgJoin:
		return "join"
	case MsgSync:
		return "sync"
	case MsgGossip:
		return "gossip"
	case MsgUser:
		return "user"
	}
	return "unknown"
}

// Node is a member's identity on the network: its ID and the transport
// address ("host:port" for UDP) its packets are sent to.
type Node struct {
	ID   ID
	Addr string
}

// Ping is a direct probe. Seq is chosen by the sender and echoed in the Ack.
//
// MatchBySeq says that the sender matches the answer by Seq alone (a
// probe's ping or a challenge, Member.AckSender): the Ack may leave out
// its sender's ID (Ack.NoSenderID). A receiver that predates it ignores
// it and answers with its ID, as before.
//
// Verifies says that the ack will verify the receiver at the address
// (a join challenge, the challenge or the probe of a member held
// unverified: its Seq is a nonce): an encoding must name the receiver in
// full, never by its check (Packet.ToCheck), which is unkeyed. A forger
// can pick an ID whose check equals a real member's, claim that member's
// address for it, and the real member, taking the check for its own,
// would answer the challenge and verify the forged ID there (rev30). It
// is the sender's instruction to its encoder, not sent.
type Ping struct {
	Seq        uint32
	MatchBySeq bool
	Verifies   bool
}

// Ack acknowledges the Ping (or, relayed by an intermediate, the PingReq)
// whose Seq it echoes.
//
// NoSenderID, set on the answer to a Ping with MatchBySeq, lets the
// encoding leave out the sender's ID (swim/wire writes it empty in plain
// packets and in sealed ones bound to their receiver, wire.EnvelopeBound;
// other sealed ones name it), so that a probe's round trip names the
// target once, as memberlist's does. The
// receiver fills the ID in from the ping it sent with Seq (Step,
// Member.AckSender); the Packet a Member builds always has its From.
type Ack struct {
	Seq        uint32
	NoSenderID bool
}

// Nack tells the sender of the PingReq whose Seq it echoes that the
// intermediate's ping of the target got no answer within its probe timeout
// (Lifeguard §IV-A).
type Nack struct {
	Seq uint32
}

// PingReq asks the receiver to ping Target and to relay an Ack with Seq to
// the sender if the target answers, or, when Nack is true, a Nack with Seq if
// it does not answer in time.
type PingReq struct {
	Seq    uint32
	Target Node
	Nack   bool
}

// UpdateKind says what an Update asserts about a member.
type UpdateKind uint8

// Update kinds; the numbering is part of the wire contract.
const (
	// UpdateAlive asserts that the member is alive in the given incarnation
	// (a join, or a refutation by the member itself).
	UpdateAlive UpdateKind = iota + 1
	// UpdateSuspect asserts that From suspects the member in the given
	// incarnation.
	UpdateSuspect
	// UpdateDead asserts that From declared the member failed (SWIM's
	// Confirm) in the given incarnation. When From equals the member's own
	// ID the member left voluntarily.
	UpdateDead
)

// String returns the kind's name.
func (k UpdateKind) String() string {
	switch k {
	case UpdateAlive:
		return "alive"
	case UpdateSuspect:
		return "suspect"
	case UpdateDead:
		return "dead"
	}
	return "unknown"
}

// Update is one piggybacked membership assertion (SWIM §4.1,
// infection-style dissemination): Kind about member Node in Incarnation,
// raised by From (the suspecter or declarer; the member itself for Alive and
// for a leave).
//
// Meta and Versions travel in the update's extension section (wire format
// 2; docs/algorithms.md, “SWIM: wire format and extensions”). Meta is the
// member's metadata as of Incarnation, at most MaxMetaLen bytes of any
// value (a string so that an Update stays comparable; it need not be
// UTF-8); it is meaningful on Alive updates and carried on the others so
// that a view entry states it whatever the member's state. Versions is the
// range of wire formats the member reads, zero when not advertised.
type Update struct {
	Kind        UpdateKind
	Node        Node
	Incarnation Incarnation
	From        ID
	// Proof is the member's own signature of an Alive or a leave, with
	// signed self-updates (Config.SigningKey); empty otherwise, and for
	// Suspect and Dead.
	Proof    Proof
	Meta     string
	Versions VersionRange
}

// MaxMetaLen bounds a member's metadata in bytes (memberlist's
// MetaMaxSize is also 512): large enough for a few labels or an address
// list, small enough that an Alive update with it still rides on a probe.
const MaxMetaLen = 512

// VersionRange is the range of wire-format versions a member reads, Min to
// Max inclusive; the zero value means "not advertised" (a member speaking
// wire format 1, which has no field for it). The swim core only stores,
// relays and reports it; the wire codec defines the versions.
type VersionRange struct {
	Min, Max uint8
}

// DefaultVersions is the range of wire formats that this module's
// swim/wire reads (wire.Versions; the swim package cannot import it, and a
// test of swim/wire checks that the two agree).
var DefaultVersions = VersionRange{Min: 1, Max: 2}

// IsZero reports whether the range was not advertised.
func (v VersionRange) IsZero() bool { return v.Min == 0 && v.Max == 0 }

// Contains reports whether v includes version n.
func (v VersionRange) Contains(n uint8) bool { return v.Min <= n && n <= v.Max }

// IsLeave reports whether u announces a voluntary leave: a Dead update whose
// From is the member itself.
func (u Update) IsLeave() bool { return u.change() == changeLeave }

// change is what an update asserts about its member, with a leave told
// apart from a declaration: the wire carries a leave as a Dead from the
// member itself, and this is the one place that knows it.
type change uint8

const (
	changeAlive   change = iota + 1 // the member is alive (its own word)
	changeSuspect                   // From suspects the member
	changeDead                      // From declared the member failed
	changeLeave                     // the member left (its own word)
)

func (u Update) change() change {
	switch u.Kind {
	case UpdateAlive:
		return changeAlive
	case UpdateSuspect:
		return changeSuspect
	case UpdateDead:
		if u.From == u.Node.ID {
			return changeLeave
		}
		return changeDead
	}
	return 0
}

// selfAsserted reports whether c is the member's own word about itself (an
// Alive or a leave), which only it may sign (Config.SigningKey).
func (c change) selfAsserted() bool { return c == changeAlive || c == changeLeave }

// accusation reports whether c is another member's word against the
// member: a suspicion or a declaration.
func (c change) accusation() bool { return c == changeSuspect || c == changeDead }

// Packet is one datagram: a protocol message and the updates piggybacked on
// it, plus the application's data: User (the body of a MsgUser),
// Broadcasts (application broadcasts piggybacked on any kind, each of 1 to
// MaxBroadcastLen bytes of data) and State (the application's state, on
// MsgSync packets; see Config.LocalState). The three need wire format 2. Only the body field named by Kind is meaningful (Ping for MsgPing, Ack
// for MsgAck, Nack for MsgNack, PingReq for MsgPingReq; MsgJoin and MsgSync
// have no body). From is the sender; To is the intended receiver, whose Addr
// the transport sends to. To.ID may be empty when the sender does not know
// it (a join through an address); a receiver drops a packet whose non-empty
// To.ID is not its own (a different member now at that address). ToCheck,
// when not 0, stands for To.ID where an encoding left the ID out (swim/wire
// leaves a long ID out of every packet but acks, nacks and pings that ask
// for an ack naming their sender, and sends its check, IDCheck):
// a receiver whose own ID's check differs drops the packet, as it drops
// one for another ID (Stats.Misdirected).
type Packet struct {
	Kind    MessageKind
	From    Node
	To      Node
	ToCheck uint32
	Ping    Ping
	Ack     Ack
	Nack    Nack
	PingReq PingReq
	Updates []Update

	User       []byte
	Broadcasts []Broadcast
	State      []byte
	// AckPayload is the application's payload on an ack (MsgAck;
	// Config.AckPayload), 1 to MaxAckPayloadLen bytes, wire format 2.
	AckPayload []byte
	// WireLen is, on a received packet, the length in bytes of the
	// datagram or frame it was decoded from, envelope included, as the
	// transport read it; 0 when unknown. It is not encoded. The state
	// machine credits a sender it does not vouch for with these bytes
	// (Config.WireOverhead), or with Size plus Config.WireOverhead when
	// WireLen is 0 or negative; a WireLen above 65,535 (the largest UDP
	// payload) counts as 65,535.
	WireLen int
	// Part places User in a larger application message carried by
	// several MsgUser packets on one stream (swim/agent's SendReliable),
	// and a MsgSync's updates in a view transfer cut into several packets
	// (Offset the index of its first entry, Total the transfer's entries;
	// Config.MergeFilter sees the whole); zero for a message or view whole
	// in one packet. Wire format 2.
	Part Part
	// Digest summarizes the sender's view, on the MsgJoin that starts an
	// anti-entropy exchange and on the MsgSync carrying its application
	// state (swim/heldstate.go); zero otherwise and in wire format 1.
	Digest ViewDigest
	// JoinToken is, on a joiner's MsgJoin (Member.Join), a random
	// number it drew for that join, and on the MsgSync packets that
	// answer the join, the same number echoed: only a view that echoes
	// it answers the join and vouches for the members it lists
	// (swim/verify.go). Zero otherwise, and in wire format 1 (whose views
	// answer a join as views from elsewhere do: Member.Joining).
	JoinToken uint64
}

// MaxBroadcastLen bounds the data of one application broadcast, in bytes;
// with the packet's header it must also fit one datagram.
const MaxBroadcastLen = 1024

// Part is where a MsgUser packet's User bytes lie in a message of Total
// bytes, or a MsgSync packet's updates in a view transfer of Total
// entries: from Offset, 0 ≤ Offset < Total. The zero Part is none.
type Part struct {
	Offset, Total uint32
}

// IsZero reports whether p is the zero Part (a message whole in one
// packet).
func (p Part) IsZero() bool { return p.Total == 0 }

// MaxAckPayloadLen bounds Packet.AckPayload, in bytes (Config.AckPayload):
// room for a network coordinate and more, while an ack stays one datagram.
const MaxAckPayloadLen = 512

// State is a member's state in a membership view.
type State uint8

// Member states.
const (
	// StateAlive: the member is believed to be working.
	StateAlive State = iota + 1
	// StateSuspect: a probe of the member failed (here or elsewhere) and the
	// suspicion timeout runs; the member is still probed.
	StateSuspect
	// StateDead: the member was declared failed; it is no longer probed and
	// comes back only with a higher incarnation.
	StateDead
	// StateLeft: the member left voluntarily.
	StateLeft
)

// String returns the state's name.
func (s State) String() string {
	switch s {
	case StateAlive:
		return "alive"
	case StateSuspect:
		return "suspect"
	case StateDead:
		return "dead"
	case StateLeft:
		return "left"
	}
	return "unknown"
}

// EventKind says what changed in the membership view.
type EventKind uint8

// Membership event kinds.
const (
	// EventJoin: a member became known, or came back after Dead or Left
	// with a higher incarnation.
	EventJoin EventKind = iota + 1
	// EventSuspect: a member became suspected.
	EventSuspect
	// EventAlive: a suspected member was cleared (it refuted the suspicion
	// with a higher incarnation).
	EventAlive
	// EventDead: a member was declared failed, by this member's suspicion
	// timeout or by a Dead update from another member.
	EventDead
	// EventLeave: a member left voluntarily.
	EventLeave
	// EventConflict: two nodes claim one ID (a member started with an ID
	// already in use). Node is the node that claimed the ID; Held is the
	// one this member keeps under it (this member itself when the claim is
	// about its own ID). The claim is refused: a joiner is not admitted, an
	// update naming the ID at the other address is ignored.
	EventConflict
	// EventStreamOnly warns that a probe of Node got no datagram ack,
	// direct or relayed, but was answered over the stream fallback
	// (Config.StreamProbe): the member is up and not suspected, but
	// datagrams to or from it are lost (a firewall dropping UDP). At most
	// one per member per StreamOnlyEventEvery.
	EventStreamOnly
	// EventUpdate: a live member's metadata changed (it raised its
	// incarnation with new metadata; Event.Meta holds the new value), or
	// its address did: two nodes revived its ID at once from one
	// declaration and the one at the lower address is kept (Event.Node).
	EventUpdate
)

// String returns the kind's name.
func (k EventKind) String() string {
	switch k {
	case EventJoin:
		return "join"
	case EventSuspect:
		return "suspect"
	case EventAlive:
		return "alive"
	case EventDead:
		return "dead"
	case EventLeave:
		return "leave"
	case EventConflict:
		return "conflict"
	case EventStreamOnly:
		return "stream-only"
	case EventUpdate:
		return "update"
	}
	return "unknown"
}

// Event is one change of the local membership view, reported by
// Member.Ready. At is the instant (the now of the Tick or Step that caused
// it); From is who raised the suspicion or declaration (this member's own ID
// when its own probe or timeout did).
type Event struct {
	Kind        EventKind
	Node        Node
	Incarnation Incarnation
	From        ID
	At          time.Duration
	// Held is, for EventConflict, the node this member keeps under the
	// contested ID; zero for the other kinds.
	Held Node
	// Meta is the member's metadata (bytes in a string) for EventJoin,
	// EventAlive and EventUpdate; empty for the other kinds.
	Meta string
}
