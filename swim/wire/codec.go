package wire

import (
	"fmt"

	"github.com/fdkit/fdkit/swim"
)

// Codec turns swim packets into sealed datagrams and back: Marshal plus
// Security.Seal on the way out, Security.Open plus Unmarshal on the way in.
// It is safe for concurrent use if its Keyring is not replaced.
type Codec struct {
	sec *Security
	max int
}

// CodecConfig configures a Codec.
type CodecConfig struct {
	// Security seals and opens packets; required (see Security).
	Security *Security
	// MaxPacketSize bounds whole datagrams, envelope included, in bytes.
	// Default 1,400 (DefaultMaxPacketSize); at least 128.
	MaxPacketSize int
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
	return &Codec{sec: cfg.Security, max: cfg.MaxPacketSize}, nil
}

// MaxPayload is the largest payload, in bytes, that fits a datagram once
// sealed: MaxPacketSize minus the envelope overhead. Give it to the swim
// state machine as its packet size limit.
func (c *Codec) MaxPayload() int { return c.max - c.sec.Overhead() }

// MaxPacketSize is the datagram bound in bytes.
func (c *Codec) MaxPacketSize() int { return c.max }

// Encode marshals p with as many of its updates as fit and seals it. It
// returns the datagram and the number of updates included.
func (c *Codec) Encode(p *swim.Packet) ([]byte, int, error) {
	payload, n, err := MarshalFit(nil, p, c.MaxPayload())
	if err != nil {
		return nil, 0, err
	}
	pkt, err := c.sec.Seal(make([]byte, 0, len(payload)+c.sec.Overhead()), payload)
	return pkt, n, err
}

// Decode opens and unmarshals a datagram. Errors wrap the Security errors
// (ErrAuth for packets sealed with an unknown key) or a *DecodeError.
func (c *Codec) Decode(pkt []byte) (*swim.Packet, error) {
	if len(pkt) > c.max {
		return nil, &DecodeError{Field: "datagram", Err: ErrOversize, Detail: fmt.Sprintf("%d bytes, limit %d", len(pkt), c.max)}
	}
	payload, err := c.sec.Open(pkt)
	if err != nil {
		return nil, err
	}
	return Unmarshal(payload, c.MaxPayload())
}
