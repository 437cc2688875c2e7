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
	if cfg.Version == 0 {
		cfg.Version = Version
	}
	if cfg.Version < MinVersion || cfg.Version > Version {
		return nil, fmt.Errorf("wire: Version %d, this codec writes formats %d to %d", cfg.Version, MinVersion, Version)
	}
	if cfg.ExtraTag != 0 && (cfg.ExtraTag < 16 || cfg.Version < 2) {
		return nil, fmt.Errorf("wire: ExtraTag %d needs format 2 and a tag of at least 16", cfg.ExtraTag)
	}
	c := &Codec{sec: cfg.Security, max: cfg.MaxPacketSize, enc: encoding{v: cfg.Version, extra: cfg.ExtraTag}}
	if !cfg.Security.Plain {
		g, err := newReplayGuard(cfg.Replay)
		if err != nil {
			return nil, err
		}
		c.replay = g
	}
	return c, nil
}

// MaxPayload is the largest payload, in bytes, that fits a datagram once
// sealed: MaxPacketSize minus the envelope overhead (the cluster label's
// header included) and, when encrypted, the 8-byte sealed timestamp of the
// replay check. A codec with a keyring that sends plain for now
// (Security.SetSendPlain) keeps the sealed bound, so that turning sealing
// on needs no change of the protocol's packet size. Give it to the swim
// state machine as its packet size limit.
func (c *Codec) MaxPayload() int {
	n := c.max - c.sec.Overhead()
	if c.replay != nil {
		n -= timestampSize
	}
	return n
}

// MaxPacketSize is the datagram bound in bytes.
func (c *Codec) MaxPacketSize() int { return c.max }

// Encode marshals p with as many of its updates as fit and seals it. It
// returns the datagram and the number of updates included.
func (c *Codec) Encode(p *swim.Packet) ([]byte, int, error) {
	var head []byte
	sealed := c.sec.sealing() // once: the timestamp goes in sealed packets only
	if c.replay != nil && sealed {
		head = binary.BigEndian.AppendUint64(make([]byte, 0, c.max), uint64(c.replay.stamp()))
	}
	enc := c.enc
	enc.sealed = sealed
	payload, n, err := marshal(head, p, c.MaxPayload(), enc)
	if err != nil {
		return nil, 0, err
	}
	pkt, err := c.sec.seal(make([]byte, 0, len(payload)+c.sec.Overhead()), payload, sealed)
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
// Extension entries of unknown tags are skipped and counted in Stats.
func (c *Codec) Decode(pkt []byte) (*swim.Packet, error) {
	p, _, err := c.DecodeFrame(pkt, 0)
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
	if len(pkt) > c.max {
		return nil, 0, &DecodeError{Field: "datagram", Err: ErrOversize, Detail: fmt.Sprintf("%d bytes, limit %d", len(pkt), c.max)}
	}
	payload, sealed, err := c.sec.open(pkt)
	if err != nil {
		return nil, 0, err
	}
	if !sealed {
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
	if (p.Kind == swim.MsgAck || p.Kind == swim.MsgNack) && (p.From.ID == "" || p.To.ID == "") {
		// A sealed answer names both members (encoding): one that names
		// neither opens at any member, and its replay from a crashed
		// member's host answered that member's probe (atk28 F2; members
		// of a few builds on main sealed acks so, atk28b).
		return nil, 0, &DecodeError{Offset: 2, Field: "from id", Err: ErrMalformed, Detail: "a sealed ack or nack must name its sender and its receiver"}
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

func (c *Codec) count(info Info) {
	c.unknownFields.Add(uint64(info.UnknownFields))
	c.formats[info.Version].Add(1)
}
