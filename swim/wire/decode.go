package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/fdkit/fdkit/swim"
)

// Decoding errors. Every error from Unmarshal is a *DecodeError wrapping one
// of these.
var (
	ErrOversize  = errors.New("payload larger than the size limit")
	ErrVersion   = errors.New("unknown version")
	ErrTruncated = errors.New("truncated")
	ErrMalformed = errors.New("malformed")
	ErrTrailing  = errors.New("trailing bytes after the last update")
	// ErrUnknownKind is a message kind above those this decoder knows,
	// from a member running a later version of the protocol. The packet
	// is well formed as far as this decoder can tell: a receiver ignores
	// and counts it rather than taking it for a corrupt packet. Kind 0 is
	// never sent and is ErrMalformed.
	ErrUnknownKind = errors.New("unknown message kind")
)

// DecodeError says where decoding failed: the byte offset in the payload,
// the field being read and what was wrong.
type DecodeError struct {
	Offset int
	Field  string
	Err    error  // one of the sentinel errors above
	Detail string // what was expected
}

func (e *DecodeError) Error() string {
	msg := fmt.Sprintf("wire: decode: byte %d (%s): %v", e.Offset, e.Field, e.Err)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *DecodeError) Unwrap() error { return e.Err }

type reader struct {
	b   []byte
	off int
}

func (r *reader) fail(field string, err error, format string, args ...any) error {
	return &DecodeError{Offset: r.off, Field: field, Err: err, Detail: fmt.Sprintf(format, args...)}
}

func (r *reader) byte(field string) (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.fail(field, ErrTruncated, "need 1 byte, have 0")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) uvarint(field string, max uint64) (uint64, error) {
	v, n := binary.Uvarint(r.b[r.off:])
	switch {
	case n == 0:
		return 0, r.fail(field, ErrTruncated, "varint runs past the end")
	case n < 0:
		return 0, r.fail(field, ErrMalformed, "varint overflows 64 bits")
	case n != uvarintLen(v):
		return 0, r.fail(field, ErrMalformed, "varint not in its shortest form")
	case v > max:
		return 0, r.fail(field, ErrMalformed, "value %d exceeds %d", v, max)
	}
	r.off += n
	return v, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func (r *reader) str(field string, max int, required bool) (string, error) {
	at := r.off
	l, err := r.uvarint(field+" length", uint64(max))
	if err != nil {
		return "", err
	}
	if required && l == 0 {
		r.off = at
		return "", r.fail(field, ErrMalformed, "empty, want 1 to %d bytes", max)
	}
	if int(l) > len(r.b)-r.off {
		return "", r.fail(field, ErrTruncated, "need %d bytes, have %d", l, len(r.b)-r.off)
	}
	s := string(r.b[r.off : r.off+int(l)])
	if err := CheckName(s); err != nil {
		return "", r.fail(field, ErrMalformed, "%v", err)
	}
	r.off += int(l)
	return s, nil
}

func (r *reader) node(field string, idRequired bool) (swim.Node, error) {
	id, err := r.str(field+" id", swim.MaxIDLen, idRequired)
	if err != nil {
		return swim.Node{}, err
	}
	addr, err := r.str(field+" addr", swim.MaxAddrLen, false)
	if err != nil {
		return swim.Node{}, err
	}
	return swim.Node{ID: swim.ID(id), Addr: addr}, nil
}

// minUpdateSize is the smallest encoded update: kind, 1-byte ID, empty
// address, incarnation 0, empty From.
const minUpdateSize = 1 + 2 + 1 + 1 + 1

// Unmarshal decodes a payload produced by Marshal. Payloads longer than max
// bytes (max <= 0: no limit) are rejected before any parsing. Errors are
// *DecodeError values wrapping ErrOversize, ErrVersion, ErrTruncated,
// ErrMalformed or ErrTrailing; Unmarshal never panics, and it allocates in
// proportion to the input only.
func Unmarshal(b []byte, max int) (*swim.Packet, error) {
	r := &reader{b: b}
	if max > 0 && len(b) > max {
		return nil, r.fail("packet", ErrOversize, "%d bytes, limit %d", len(b), max)
	}
	v, err := r.byte("version")
	if err != nil {
		return nil, err
	}
	if v != Version {
		r.off--
		return nil, r.fail("version", ErrVersion, "got %d, this decoder reads version %d", v, Version)
	}
	k, err := r.byte("kind")
	if err != nil {
		return nil, err
	}
	p := &swim.Packet{Kind: swim.MessageKind(k)}
	if p.From, err = r.node("from", true); err != nil {
		return nil, err
	}
	if p.To, err = r.node("to", false); err != nil {
		return nil, err
	}
	switch p.Kind {
	case swim.MsgPing, swim.MsgAck, swim.MsgNack:
		seq, err := r.uvarint(p.Kind.String()+" seq", 1<<32-1)
		if err != nil {
			return nil, err
		}
		switch p.Kind {
		case swim.MsgPing:
			p.Ping.Seq = uint32(seq)
		case swim.MsgAck:
			p.Ack.Seq = uint32(seq)
		default:
			p.Nack.Seq = uint32(seq)
		}
	case swim.MsgPingReq:
		seq, err := r.uvarint("ping-req seq", 1<<32-1)
		if err != nil {
			return nil, err
		}
		p.PingReq.Seq = uint32(seq)
		if p.PingReq.Target, err = r.node("ping-req target", true); err != nil {
			return nil, err
		}
		flag, err := r.byte("ping-req nack flag")
		if err != nil {
			return nil, err
		}
		if flag > 1 {
			r.off--
			return nil, r.fail("ping-req nack flag", ErrMalformed, "got %d, want 0 or 1", flag)
		}
		p.PingReq.Nack = flag == 1
	case swim.MsgJoin, swim.MsgSync, swim.MsgGossip:
	case 0:
		r.off--
		return nil, r.fail("kind", ErrMalformed, "message kind 0, want 1 to 7")
	default:
		r.off--
		return nil, r.fail("kind", ErrUnknownKind, "kind %d, this decoder reads 1 to 7", k)
	}
	if len(b)-r.off < 2 {
		return nil, r.fail("update count", ErrTruncated, "need 2 bytes, have %d", len(b)-r.off)
	}
	count := int(binary.BigEndian.Uint16(b[r.off:]))
	r.off += 2
	if count*minUpdateSize > len(b)-r.off {
		return nil, r.fail("update count", ErrTruncated, "%d updates need at least %d bytes, have %d", count, count*minUpdateSize, len(b)-r.off)
	}
	if count > 0 {
		p.Updates = make([]swim.Update, count)
	}
	for i := range p.Updates {
		u := &p.Updates[i]
		field := fmt.Sprintf("update %d", i)
		kind, err := r.byte(field + " kind")
		if err != nil {
			return nil, err
		}
		u.Kind = swim.UpdateKind(kind &^ proofFlag)
		switch u.Kind {
		case swim.UpdateAlive, swim.UpdateDead:
		case swim.UpdateSuspect:
			if kind&proofFlag != 0 {
				r.off--
				return nil, r.fail(field+" kind", ErrMalformed, "suspect update with the proof flag (0x%02x)", kind)
			}
		default:
			r.off--
			return nil, r.fail(field+" kind", ErrMalformed, "unknown update kind %d, want 1 to 3 (+ 0x80 with a proof)", kind)
		}
		if u.Node, err = r.node(field+" node", true); err != nil {
			return nil, err
		}
		inc, err := r.uvarint(field+" incarnation", uint64(swim.MaxIncarnation))
		if err != nil {
			return nil, err
		}
		u.Incarnation = swim.Incarnation(inc)
		from, err := r.str(field+" from", swim.MaxIDLen, false)
		if err != nil {
			return nil, err
		}
		u.From = swim.ID(from)
		if kind&proofFlag != 0 {
			if len(b)-r.off < swim.ProofSize {
				return nil, r.fail(field+" proof", ErrTruncated, "need %d bytes, have %d", swim.ProofSize, len(b)-r.off)
			}
			u.Proof = swim.Proof(b[r.off : r.off+swim.ProofSize])
			r.off += swim.ProofSize
		}
	}
	if r.off != len(b) {
		return nil, r.fail("end", ErrTrailing, "%d bytes after the last update", len(b)-r.off)
	}
	return p, nil
}
