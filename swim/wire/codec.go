package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/fdkit/fdkit/swim"
)

// Codec turns swim packets into sealed datagrams and back: Marshal plus
// Security.Seal on the way out, Security.Open plus Unmarshal on the way in.
// It is safe for concurrent use if its Keyring is not replaced.
type Codec struct {
	sec    *Security
	max    int
	replay *replayGuard // nil in plain mode
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
	c := &Codec{sec: cfg.Security, max: cfg.MaxPacketSize}
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
// sealed: MaxPacketSize minus the envelope overhead and, when encrypted,
// the 8-byte sealed timestamp of the replay check. Give it to the swim
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
	if c.replay != nil {
		head = binary.BigEndian.AppendUint64(make([]byte, 0, c.max), uint64(c.replay.stamp()))
	}
	payload, n, err := MarshalFit(head, p, c.MaxPayload())
	if err != nil {
		return nil, 0, err
	}
	pkt, err := c.sec.Seal(make([]byte, 0, len(payload)+c.sec.Overhead()), payload)
	return pkt, n, err
}

// Decode opens and unmarshals a datagram and, when sealed, checks it
// against replay. Errors wrap the Security errors (ErrAuth for packets
// sealed with an unknown key), ErrReplay, or are a *DecodeError.
func (c *Codec) Decode(pkt []byte) (*swim.Packet, error) {
	if len(pkt) > c.max {
		return nil, &DecodeError{Field: "datagram", Err: ErrOversize, Detail: fmt.Sprintf("%d bytes, limit %d", len(pkt), c.max)}
	}
	payload, err := c.sec.Open(pkt)
	if err != nil {
		return nil, err
	}
	if c.replay == nil {
		return Unmarshal(payload, c.MaxPayload())
	}
	if len(payload) < timestampSize {
		return nil, &DecodeError{Field: "timestamp", Err: ErrTruncated, Detail: fmt.Sprintf("%d bytes of sealed payload, want at least %d", len(payload), timestampSize)}
	}
	ts := int64(binary.BigEndian.Uint64(payload))
	p, err := Unmarshal(payload[timestampSize:], c.MaxPayload())
	if err != nil {
		return nil, err
	}
	if err := c.replay.check(p.From.ID, ts); err != nil {
		return nil, err
	}
	return p, nil
}
