package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/fdkit/fdkit/swim"
)

// Version is the payload format version, the first byte of every payload.
// A decoder rejects any other value with ErrVersion.
const Version byte = 1

// DefaultMaxPacketSize is the default bound, in bytes, of a whole datagram
// (envelope included).
const DefaultMaxPacketSize = 1400

// Payload layout (version 1). uvarint is encoding/binary's unsigned varint
// in its shortest form; str is a uvarint length followed by that many bytes;
// node is str(ID) str(Addr).
//
//	version   1 byte  (= 1)
//	kind      1 byte  (swim.MessageKind: 1 ping, 2 ack, 3 nack, 4 ping-req, 5 join, 6 sync, 7 gossip)
//	from      node
//	to        node    (ID may be empty)
//	body      ping, ack, nack: uvarint seq (< 2^32)
//	          ping-req:        uvarint seq, node target, 1 byte nack flag (0 or 1)
//	          join, sync, gossip: nothing
//	count     2 bytes big-endian: number of updates
//	updates   count × (1 byte kind (1 alive, 2 suspect, 3 dead; + 0x80 when a proof follows),
//	          node, uvarint incarnation, str from, [proof: swim.ProofSize bytes])
//
// The proof (swim.Update.Proof: a member's signature of its own Alive or
// leave, with signed self-updates) is flagged by the high bit of the
// update's kind byte, so that a packet without proofs is encoded as before
// and a decoder that predates proofs rejects one with them as malformed
// instead of misreading it.
// Nothing may follow the last update. The encoding of a packet is never
// larger than swim.Packet.Size.

// proofFlag marks, in an update's kind byte, a proof after the update.
const proofFlag = 0x80

// ErrTooLarge is returned by Marshal when the packet does not fit the size
// limit, and by MarshalFit when even the packet without updates does not.
var ErrTooLarge = errors.New("wire: packet larger than the size limit")

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendNode(b []byte, n swim.Node) []byte {
	b = appendStr(b, string(n.ID))
	return appendStr(b, n.Addr)
}

// CheckName reports whether s may travel as an ID or an address: valid
// UTF-8 without control characters (no newline, tab, NUL, DEL or C1 code).
// IDs and addresses end up in logs, in fdswim's one-line events and in
// Prometheus labels, which need UTF-8; a name that could forge a log line or
// break a metrics scrape is refused by the encoder and the decoder alike.
// Lengths are checked separately (swim.MaxIDLen, swim.MaxAddrLen).
func CheckName(s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Errorf("byte %d (0x%02x) is not valid UTF-8", i, s[i])
		case unicode.IsControl(r):
			return fmt.Errorf("byte %d is the control character %U", i, r)
		}
		i += size
	}
	return nil
}

// checkNode checks n for the encoder; errors name it as field.
func checkNode(field string, n swim.Node, idRequired bool) error {
	if err := nodeProblem(n, idRequired); err != nil {
		return fmt.Errorf("wire: encode: %s %w", field, err)
	}
	return nil
}

// nodeProblem is checkNode without the field name, so that the encoder's
// per-update check formats the name ("update 3 node") only on failure.
func nodeProblem(n swim.Node, idRequired bool) error {
	switch {
	case idRequired && n.ID == "":
		return errors.New("ID is empty")
	case len(n.ID) > swim.MaxIDLen:
		return fmt.Errorf("ID is %d bytes, at most %d", len(n.ID), swim.MaxIDLen)
	case len(n.Addr) > swim.MaxAddrLen:
		return fmt.Errorf("address is %d bytes, at most %d", len(n.Addr), swim.MaxAddrLen)
	}
	if err := CheckName(string(n.ID)); err != nil {
		return fmt.Errorf("ID: %w", err)
	}
	if err := CheckName(n.Addr); err != nil {
		return fmt.Errorf("address: %w", err)
	}
	return nil
}

func appendHeader(b []byte, p *swim.Packet) ([]byte, error) {
	if err := checkNode("from", p.From, true); err != nil {
		return nil, err
	}
	if err := checkNode("to", p.To, false); err != nil {
		return nil, err
	}
	b = append(b, Version, byte(p.Kind))
	b = appendNode(b, p.From)
	b = appendNode(b, p.To)
	switch p.Kind {
	case swim.MsgPing:
		b = binary.AppendUvarint(b, uint64(p.Ping.Seq))
	case swim.MsgAck:
		b = binary.AppendUvarint(b, uint64(p.Ack.Seq))
	case swim.MsgNack:
		b = binary.AppendUvarint(b, uint64(p.Nack.Seq))
	case swim.MsgPingReq:
		if err := checkNode("ping-req target", p.PingReq.Target, true); err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(p.PingReq.Seq))
		b = appendNode(b, p.PingReq.Target)
		flag := byte(0)
		if p.PingReq.Nack {
			flag = 1
		}
		b = append(b, flag)
	case swim.MsgJoin, swim.MsgSync, swim.MsgGossip:
	default:
		return nil, fmt.Errorf("wire: encode: unknown message kind %d", p.Kind)
	}
	return b, nil
}

func appendUpdate(b []byte, i int, u *swim.Update) ([]byte, error) {
	switch u.Kind {
	case swim.UpdateAlive, swim.UpdateSuspect, swim.UpdateDead:
	default:
		return nil, fmt.Errorf("wire: encode: update %d: unknown kind %d", i, u.Kind)
	}
	if err := nodeProblem(u.Node, true); err != nil {
		return nil, fmt.Errorf("wire: encode: update %d node %w", i, err)
	}
	if len(u.From) > swim.MaxIDLen {
		return nil, fmt.Errorf("wire: encode: update %d from is %d bytes, at most %d", i, len(u.From), swim.MaxIDLen)
	}
	if err := CheckName(string(u.From)); err != nil {
		return nil, fmt.Errorf("wire: encode: update %d from: %w", i, err)
	}
	kind := byte(u.Kind)
	switch len(u.Proof) {
	case 0:
	case swim.ProofSize:
		if u.Kind == swim.UpdateSuspect {
			return nil, fmt.Errorf("wire: encode: update %d: a suspect update carries no proof", i)
		}
		kind |= proofFlag
	default:
		return nil, fmt.Errorf("wire: encode: update %d: proof is %d bytes, want 0 or %d", i, len(u.Proof), swim.ProofSize)
	}
	b = append(b, kind)
	b = appendNode(b, u.Node)
	b = binary.AppendUvarint(b, uint64(u.Incarnation))
	b = appendStr(b, string(u.From))
	return append(b, u.Proof...), nil
}

// Marshal appends the payload encoding of p to dst. It returns an error
// wrapping ErrTooLarge if the payload would exceed max bytes (max <= 0 means
// no limit), and an error for unknown kinds, empty required IDs and strings
// longer than swim.MaxIDLen or swim.MaxAddrLen.
func Marshal(dst []byte, p *swim.Packet, max int) ([]byte, error) {
	out, n, err := MarshalFit(dst, p, max)
	if err != nil {
		return nil, err
	}
	if n < len(p.Updates) {
		return nil, fmt.Errorf("%w: %d of %d updates fit in %d bytes", ErrTooLarge, n, len(p.Updates), max)
	}
	return out, nil
}

// MarshalFit appends the payload encoding of p to dst with as many of
// p.Updates, in order, as fit in max bytes (max <= 0 means no limit), and
// returns how many it included. Callers order updates by priority (the swim
// state machine puts the least-sent first). It fails with ErrTooLarge only
// when the packet without any update exceeds max.
func MarshalFit(dst []byte, p *swim.Packet, max int) ([]byte, int, error) {
	if p == nil {
		return nil, 0, errors.New("wire: encode: nil packet")
	}
	if max <= 0 {
		max = math.MaxInt
	}
	start := len(dst)
	b, err := appendHeader(dst, p)
	if err != nil {
		return nil, 0, err
	}
	countAt := len(b)
	b = append(b, 0, 0)
	if len(b)-start > max {
		return nil, 0, fmt.Errorf("%w: message without updates is %d bytes, limit %d", ErrTooLarge, len(b)-start, max)
	}
	n := 0
	for i := range p.Updates {
		if n == math.MaxUint16 {
			break
		}
		before := len(b)
		b, err = appendUpdate(b, i, &p.Updates[i])
		if err != nil {
			return nil, 0, err
		}
		if len(b)-start > max {
			b = b[:before]
			break
		}
		n++
	}
	binary.BigEndian.PutUint16(b[countAt:], uint16(n))
	return b, n, nil
}
