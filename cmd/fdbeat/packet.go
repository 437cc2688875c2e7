package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Heartbeat packet, version 1: one UDP datagram per heartbeat, all integers
// big-endian.
//
//	offset  size  field
//	0       4     magic "FDHB"
//	4       1     version, 1
//	5       1     n, length of the sender name in bytes (0–255)
//	6       8     incarnation (uint64): changes when the sender restarts;
//	              fdbeat send uses its start time in Unix nanoseconds
//	14      8     sequence number (uint64), from 0, +1 per heartbeat sent
//	22      8     send instant (int64), nanoseconds since the Unix epoch on
//	              the sender's clock (wall clock at start plus monotonic
//	              time elapsed since, so it never steps)
//	30      n     sender name: UTF-8, no spaces or control characters, not
//	              starting with '#' and not "-" (so that it is a valid
//	              sender id of an fdkit trace); empty means "identify me by
//	              my source address"
//
// A datagram is exactly 30+n bytes; anything else is rejected. The decoder
// never panics (FuzzDecodePacket).
const (
	packetMagic      = "FDHB"
	packetVersion    = 1
	packetHeaderSize = 30
	maxNameLen       = 255
	maxPacketSize    = packetHeaderSize + maxNameLen
)

// packet is one decoded heartbeat packet.
type packet struct {
	Name        string
	Incarnation uint64
	Seq         uint64
	Sent        time.Duration // since the Unix epoch, sender's clock
}

// packetError is a decoding error: the field and what was wrong.
type packetError struct {
	Field string
	Want  string
	Got   string
}

func (e *packetError) Error() string {
	return fmt.Sprintf("fdbeat packet: field %s: want %s, got %s", e.Field, e.Want, e.Got)
}

// errNameInvalid is returned for a sender name that cannot be sent.
var errNameInvalid = errors.New("sender name must be at most 255 bytes of UTF-8 without spaces or control characters, not start with '#' and not be \"-\"")

func validName(s string) bool {
	if len(s) > maxNameLen || !utf8.ValidString(s) || s == "-" || strings.HasPrefix(s, "#") {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// appendPacket appends the encoding of p to dst.
func appendPacket(dst []byte, p packet) ([]byte, error) {
	if !validName(p.Name) {
		return dst, errNameInvalid
	}
	dst = append(dst, packetMagic...)
	dst = append(dst, packetVersion, byte(len(p.Name)))
	dst = binary.BigEndian.AppendUint64(dst, p.Incarnation)
	dst = binary.BigEndian.AppendUint64(dst, p.Seq)
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.Sent))
	return append(dst, p.Name...), nil
}

// decodePacket decodes one datagram.
func decodePacket(b []byte) (packet, error) {
	if len(b) < packetHeaderSize {
		return packet{}, &packetError{"length", fmt.Sprintf("at least %d bytes", packetHeaderSize), fmt.Sprintf("%d", len(b))}
	}
	if string(b[:4]) != packetMagic {
		return packet{}, &packetError{"magic", fmt.Sprintf("%q", packetMagic), fmt.Sprintf("%q", b[:4])}
	}
	if b[4] != packetVersion {
		return packet{}, &packetError{"version", "1", fmt.Sprintf("%d", b[4])}
	}
	n := int(b[5])
	if len(b) != packetHeaderSize+n {
		return packet{}, &packetError{"length", fmt.Sprintf("%d bytes (name length %d)", packetHeaderSize+n, n), fmt.Sprintf("%d", len(b))}
	}
	p := packet{
		Incarnation: binary.BigEndian.Uint64(b[6:]),
		Seq:         binary.BigEndian.Uint64(b[14:]),
		Sent:        time.Duration(binary.BigEndian.Uint64(b[22:])),
		Name:        string(b[30:]),
	}
	if !validName(p.Name) {
		return packet{}, &packetError{"name", "UTF-8 without spaces or control characters, no leading '#', not \"-\"", fmt.Sprintf("%q", p.Name)}
	}
	return p, nil
}
