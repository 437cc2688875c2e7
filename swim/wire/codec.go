package wire

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/fdkit/fdkit/swim"
)

// Codec turns swim packets into sealed datagrams and back: Marshal plus
// Security.Seal on the way out, Security.Open plus Unmarshal on the way in.
// It is safe for concurrent use if its Keyring is not replaced.
type Codec struct {
	sec    *Security
	max    int
	enc    encoding
	replay *replayGuard // nil in plain mode
	local  swim.ID      // CodecConfig.LocalID

	unknownFields atomic.Uint64
	plainAccepted atomic.Uint64
	formats       [Version + 1]atomic.Uint64
}

// CodecConfig configures a Codec.
type CodecConfig struct {
	// Security seals and opens packets; required (see Security).
	Security *Security
	// MaxPacketSize bounds whole datagrams, envelope included, in bytes.
	// Default 1,400 (DefaultMaxPacketSize); at least 128.
	MaxPacketSize int
	// Replay configures the replay check of sealed packets (see
	// ReplayConfig); unused in plain mode.
	Replay ReplayConfig
	// LocalID is the ID of the member this codec sends and receives for
	// (swim.Config.ID). With a keyring and format 2, its sealed probe
	// pings ask for an ack bound to it (packet tag 8), which it opens:
	// sealed with its ID as additional data (EnvelopeBound), such an ack
	// names neither member, and DecodeDatagram fills in the sender from
	// the ping. A probe's round trip then names the target once, in the
	// ping, as a plain one does (docs/algorithms.md, “SWIM: wire format
	// and extensions”). It answers such pings of others with bound acks.
	// Decode its datagrams with DecodeDatagram, which fills in a bound
	// ack's sender: Decode refuses bound acks, so no probe would be
	// answered. Default "": sealed acks name both members, as before.
	LocalID swim.ID
	// Version is the wire format written, MinVersion to Version; 0 means
	// Version. The decoder reads every format whatever this says. Set 1
	// while a group still has members that read only format 1 (fdkit
	// before the extension sections): they refuse format 2 packets as an
	// unknown version. Format 1 carries no metadata, version range,
	// application broadcasts, state or user messages (see MarshalVersion).
	// Members show the range each member reads (swim.Update.Versions, as
	// advertised in its Alive), so that an operator raises the format once
	// every member reads it, as with memberlist's ProtocolVersion.
	Version byte
	// ExtraTag, when not 0, adds to every packet's and every update's
	// extension section an entry with this tag and 3 bytes of content: a
	// stand-in for a field that a later version adds, for testing that a
	// group mixing versions works (this version's decoders skip and count
	// it). It must be above the tags this version knows (at least 16).
	// Format 2 only.
	ExtraTag uint16
}

// NewCodec validates cfg and returns a Codec.
func NewCodec(cfg CodecConfig) (*Codec, error) {
	if err := cfg.Security.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxPacketSize == 0 {
		cfg.MaxPacketSize = DefaultMaxPacketSize
	}
	if cfg.MaxPacketSize < 128 || cfg.MaxPacketSize > 65507 {
		return nil, fmt.Errorf("wire: MaxPacketSize %d out of range [128, 65507]", cfg.MaxPacketSize)
	}
	if room := PayloadRoom(cfg.Security, cfg.MaxPacketSize); room < MinPayload {
		// Encode reads a payload limit of 0 or less as none, and wrote
		// datagrams over MaxPacketSize (atk29 F3).
		env := cfg.MaxPacketSize - room
		label := ""
		if cfg.Security.Label != "" {
			label = fmt.Sprintf(", a %d-byte label included; or shorten the label", len(cfg.Security.Label))
		}
		return nil, fmt.Errorf("wire: MaxPacketSize %d leaves %d bytes of payload after the envelope's %d, want at least %d: MaxPacketSize %d or more%s",
			cfg.MaxPacketSize, max(room, 0), env, MinPayload, env+MinPayload, label)
	}
	if cfg.Version == 0 {
		cfg.Version = Version
	}
	if cfg.Version < MinVersion || cfg.Version > Version {
		return nil, fmt.Errorf("wire: Version %d, this codec writes formats %d to %d", cfg.Version, MinVersion, Version)
	}
	if cfg.ExtraTag != 0 && (cfg.ExtraTag < 16 || cfg.Version < 2) {
		return nil, fmt.Errorf("wire: ExtraTag %d needs format 2 and a tag of at least 16", cfg.ExtraTag)
	}
	if err := nodeProblem(swim.Node{ID: cfg.LocalID}, false); err != nil {
		return nil, fmt.Errorf("wire: CodecConfig.LocalID: %w", err)
	}
	c := &Codec{sec: cfg.Security, max: cfg.MaxPacketSize, enc: encoding{v: cfg.Version, extra: cfg.ExtraTag}, local: cfg.LocalID}
	if !cfg.Security.Plain {
		g, err := newReplayGuard(cfg.Replay)
		if err != nil {
			return nil, err
		}
		c.replay = g
	}
	return c, nil
}

// MinPayload is the least payload room, in bytes, a Codec accepts: a bare
// ping between members with 8-byte IDs and 21-byte addresses, rounded up.
const MinPayload = 64

// MaxPayload is the largest payload, in bytes, that fits a datagram once
// sealed: MaxPacketSize minus the envelope overhead (the cluster label's
// header included) and, when encrypted, the 8-byte sealed timestamp of the
// replay check. A codec with a keyring that sends plain for now
// (Security.SetSendPlain) keeps the sealed bound, so that turning sealing
// on needs no change of the protocol's packet size. Give it to the swim
// state machine as its packet size limit.
func (c *Codec) MaxPayload() int { return PayloadRoom(c.sec, c.max) }

// PayloadRoom is the largest payload, in bytes, that a datagram of
// maxPacketSize bytes holds under sec: what a Codec's MaxPayload is (the
// envelope, the cluster label's header and, with a keyring, the sealed
// timestamp taken off), for checking a configuration before making one.
// sec must not be nil (Security.Validate).
func PayloadRoom(sec *Security, maxPacketSize int) int {
	n := maxPacketSize - sec.Overhead()
	if !sec.Plain {
		n -= timestampSize
	}
	return n
}

// bindsAcks reports whether this codec asks for, opens and sends acks
// bound to their receiver: a keyring, a LocalID and format 2.
func (c *Codec) bindsAcks() bool {
	return c.replay != nil && c.local != "" && c.enc.v >= 2
}

// MaxPacketSize is the datagram bound in bytes.
func (c *Codec) MaxPacketSize() int { return c.max }

// Encode marshals p with as many of its updates as fit and seals it. It
// returns the datagram and the number of updates included. With LocalID
// set, a sealed ping that matches by seq (swim.Ping.MatchBySeq: a probe's
// or a challenge) asks for a bound ack (packet tag 8), and a sealed ack without its sender's ID
// (swim.Ack.NoSenderID, set only in answer to such a ping: decode) is
// bound to its receiver (EnvelopeBound) and names neither member.
func (c *Codec) Encode(p *swim.Packet) ([]byte, int, error) {
	var head []byte
	sealed := c.sec.sealing() // once: the timestamp goes in sealed packets only
	if c.replay != nil && sealed {
		head = binary.BigEndian.AppendUint64(make([]byte, 0, c.max), uint64(c.replay.stamp()))
	}
	enc := c.enc
	enc.sealed = sealed
	var to swim.ID
	if sealed && c.bindsAcks() {
		enc.matchBound = true
		if p.Kind == swim.MsgAck && p.Ack.NoSenderID && p.To.ID != "" {
			enc.bound, to = true, p.To.ID
		}
	}
	payload, n, err := marshal(head, p, c.MaxPayload(), enc)
	if err != nil {
		return nil, 0, err
	}
	pkt, err := c.sec.seal(make([]byte, 0, len(payload)+c.sec.Overhead()), payload, sealed, to)
	return pkt, n, err
}

// Version is the wire format the codec writes.
func (c *Codec) Version() byte { return c.enc.v }

// CodecStats counts what a Codec's Decode saw in the packets it accepted.
type CodecStats struct {
	// UnknownFields counts extension entries skipped because their tag
	// is unknown to this version (fields a later version added).
	UnknownFields uint64
	// Formats counts accepted packets by wire format: Formats[1] format 1,
	// Formats[2] format 2 (index 0 is unused).
	Formats [Version + 1]uint64
	// PlainAccepted counts plain packets accepted by a codec with a
	// keyring while Security.SetAcceptPlain is on: while it grows, some
	// member still sends plain (Security.SetSendPlain), so accepting plain
	// cannot be turned off yet.
	PlainAccepted uint64
}

// Stats returns the counters; safe for concurrent use.
func (c *Codec) Stats() CodecStats {
	s := CodecStats{UnknownFields: c.unknownFields.Load(), PlainAccepted: c.plainAccepted.Load()}
	for i := range s.Formats {
		s.Formats[i] = c.formats[i].Load()
	}
	return s
}

// Decode opens and unmarshals a datagram and, when sealed, checks it
// against replay. Errors wrap the Security errors (ErrAuth for packets
// sealed with an unknown key), ErrReplay, or are a *DecodeError.
// Extension entries of unknown tags are skipped and counted in Stats. An
// ack bound to this member is refused: it needs DecodeDatagram.
func (c *Codec) Decode(pkt []byte) (*swim.Packet, error) {
	p, _, err := c.decode(pkt, 0, nil)
	return p, err
}

// DecodeDatagram is Decode for a datagram that may be an ack without its
// sender's ID: a plain one (swim.Ack.NoSenderID), or one bound to this
// member (the answer to one of its sealed probe pings or challenges, see
// CodecConfig.LocalID), which names neither member. ackSender, called
// with the ack's sequence number, names the member that this member's
// ping with that number went to (swim.Member.AckSender); the ack is
// returned with its From.ID filled in, and a bound one is checked against
// that member's replay window. One that ackSender matches to no member
// answers nothing; it is returned with an empty From.ID, a bound one
// unchecked for replay, for the state machine to count (swim.Stats
// AcksUnmatched). ackSender is called on the caller's goroutine, before
// DecodeDatagram returns; nil refuses bound acks, as Decode does.
func (c *Codec) DecodeDatagram(pkt []byte, ackSender func(seq uint32) (swim.ID, bool)) (*swim.Packet, error) {
	p, _, err := c.decode(pkt, 0, ackSender)
	return p, err
}

// DecodeFrame is Decode for the frames of one inbound stream, in order:
// prev is the timestamp DecodeFrame returned for the stream's previous
// frame (0 for the first, or after plain frames, which carry none). A
// frame after a sealed one is not checked against its sender's replay
// window, only for a timestamp above prev, within MaxSkew of the clock
// and not before this codec started: a long stream interleaved with the
// sender's other streams and datagrams, or delayed by backpressure after
// sealing, would otherwise see its frames fall below the window's floor
// (which rises to the clock less Window) and be refused as replayed. The
// stream's first frame gets Decode's whole check, so a replayed stream is
// refused at its start, and a later frame cannot be one sealed before it.
func (c *Codec) DecodeFrame(pkt []byte, prev int64) (*swim.Packet, int64, error) {
	return c.decode(pkt, prev, nil)
}

func (c *Codec) decode(pkt []byte, prev int64, ackSender func(uint32) (swim.ID, bool)) (*swim.Packet, int64, error) {
	if len(pkt) > c.max {
		return nil, 0, &DecodeError{Field: "datagram", Err: ErrOversize, Detail: fmt.Sprintf("%d bytes, limit %d", len(pkt), c.max)}
	}
	var self swim.ID
	if c.bindsAcks() {
		self = c.local
	}
	payload, env, err := c.sec.open(pkt, self)
	if err != nil {
		return nil, 0, err
	}
	if env == EnvelopePlain {
		// Plain mode, or a plain packet accepted while encryption is
		// being turned on (Security.SetAcceptPlain): no timestamp, and
		// a plain sender's payload bound.
		p, info, err := UnmarshalInfo(payload, c.max-c.sec.labelLen()-Overhead(false))
		if err != nil {
			return nil, 0, err
		}
		if !c.sec.Plain {
			c.plainAccepted.Add(1)
		}
		c.matchBySeq(p, info, false)
		if p.Kind == swim.MsgAck && p.From.ID == "" && ackSender != nil {
			if id, ok := ackSender(p.Ack.Seq); ok {
				p.From.ID = id
			}
		}
		c.count(info)
		return p, 0, nil
	}
	if len(payload) < timestampSize {
		return nil, 0, &DecodeError{Field: "timestamp", Err: ErrTruncated, Detail: fmt.Sprintf("%d bytes of sealed payload, want at least %d", len(payload), timestampSize)}
	}
	ts := int64(binary.BigEndian.Uint64(payload))
	p, info, err := UnmarshalInfo(payload[timestampSize:], c.MaxPayload())
	if err != nil {
		return nil, 0, err
	}
	bound := env == EnvelopeBound
	if err := checkSealedIDs(p, bound); err != nil {
		return nil, 0, err
	}
	c.matchBySeq(p, info, true)
	if bound {
		// An ack to this member's probe ping (checkSealedIDs): from
		// whom that ping, with its number, went to.
		if ackSender == nil || prev != 0 {
			return nil, 0, &DecodeError{Offset: 2, Field: "from id", Err: ErrMalformed, Detail: "a bound ack names no sender: it is read as a datagram, by DecodeDatagram with an ackSender (the prober's record of its pings)"}
		}
		p.To.ID = c.local
		id, ok := ackSender(p.Ack.Seq)
		if !ok {
			c.count(info)
			return p, 0, nil
		}
		p.From.ID = id
	}
	if prev == 0 {
		err = c.replay.check(p.From.ID, ts)
	} else {
		err = c.replay.checkAfter(ts, prev)
	}
	if err != nil {
		return nil, 0, err
	}
	c.count(info)
	return p, ts, nil
}

// matchBySeq decides whether the answer to the ping p may leave out its
// sender's ID (swim.Ping.MatchBySeq), in the envelope this codec answers
// with. A plain answer, when this codec sends plain for now, to a ping
// that asked for any answer without IDs: packet tag 7, a receiver check
// (tag 9, which a probe ping that does not verify its receiver carries in
// place of a long receiver ID), or,
// in a sealed ping, tag 8. A sealed answer, bound to the prober, to a
// sealed ping with tag 8 when this codec binds acks. Tag 8 in a plain ping
// is ignored. A plain ping from a member that seals nothing for now
// (encryption being turned on) gets a sealed ack that names both members
// from a codec that seals, which every version opens; a sealed ping of an
// earlier version asks for neither. The answer is encoded in the envelope
// of the moment (Encode): should SetSendPlain change between a ping and
// its answer (in swim/agent, within one turn of its loop), that one ack
// may be sealed and bound where a plain one was asked for, and a prober of
// an earlier version drops it.
func (c *Codec) matchBySeq(p *swim.Packet, info Info, sealed bool) {
	if p.Kind != swim.MsgPing {
		return
	}
	// Tag 8 counts in a sealed ping only: anyone can write a plain one,
	// and a bound ack drawn by a forged plain ping, sent to the address
	// the ping claims, answered the forger's guess of a round's probe for
	// a crashed member, as atk28's replays did (atk29c F1).
	bound := sealed && info.MatchBound
	if c.sec.sealing() {
		p.Ping.MatchBySeq = bound && c.bindsAcks()
	} else {
		p.Ping.MatchBySeq = p.Ping.MatchBySeq || bound || p.ToCheck != 0
	}
}

// checkSealedIDs refuses a sealed packet that leaves out an ID it must
// name. A sealed packet that is not bound names its receiver in acks and
// nacks and, in an ack, its sender: one that names neither opens at any
// member, and its replay from a crashed member's host answered that
// member's probe (atk28 F2; members of a few builds on main sealed acks
// so, atk28b). A bound packet is an ack that names neither: the envelope
// binds it to this member, and its sender is the member this member's
// probe ping with its number went to.
func checkSealedIDs(p *swim.Packet, bound bool) error {
	switch {
	case bound && p.Kind != swim.MsgAck:
		return &DecodeError{Offset: 1, Field: "kind", Err: ErrMalformed, Detail: fmt.Sprintf("a bound packet is an ack, got a %v", p.Kind)}
	case bound && (p.From.ID != "" || p.To.ID != ""):
		return &DecodeError{Offset: 2, Field: "from id", Err: ErrMalformed, Detail: fmt.Sprintf("a bound ack names neither member, got from %q to %q", p.From.ID, p.To.ID)}
	case !bound && (p.Kind == swim.MsgAck || p.Kind == swim.MsgNack) && (p.From.ID == "" || p.To.ID == ""):
		return &DecodeError{Offset: 2, Field: "from id", Err: ErrMalformed, Detail: "a sealed ack or nack must name its sender and its receiver"}
	}
	return nil
}

func (c *Codec) count(info Info) {
	c.unknownFields.Add(uint64(info.UnknownFields))
	c.formats[info.Version].Add(1)
}
