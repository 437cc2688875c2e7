package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Heartbeat packet, versions 1 and 2: one UDP datagram per heartbeat, all
// integers big-endian.
//
//	offset  size  field
//	0       4     magic "FDHB"
//	4       1     version: 1 plain, 2 authenticated
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
//	30+n    32    version 2 only: HMAC-SHA256 (RFC 2104, FIPS 180-4) of
//	              bytes 0 to 30+n under a shared key (--key, --key-file)
//
// A datagram is exactly 30+n bytes (version 1) or 62+n bytes (version 2);
// anything else is rejected. The version byte is under the MAC, so an
// authenticated packet cannot be turned into a plain one; a receiver with
// keys refuses plain packets. The decoder checks the layout only
// (verifyPacket checks the MAC) and never panics (FuzzDecodePacket).
const (
	packetMagic      = "FDHB"
	packetVersion    = 1
	packetVersionMAC = 2
	packetHeaderSize = 30
	macSize          = sha256.Size
	maxNameLen       = 255
	maxPacketSize    = packetHeaderSize + maxNameLen + macSize
)

// packet is one decoded heartbeat packet.
type packet struct {
	Name        string
	Incarnation uint64
	Seq         uint64
	Sent        time.Duration // since the Unix epoch, sender's clock
	// Signed: version 2, a MAC follows (appendPacket writes the version-2
	// body; signPacket appends the MAC).
	Signed bool
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

// appendPacket appends the encoding of p to dst: a complete version-1
// packet, or with p.Signed the version-2 body, to be completed by signPacket.
func appendPacket(dst []byte, p packet) ([]byte, error) {
	if !validName(p.Name) {
		return dst, errNameInvalid
	}
	v := byte(packetVersion)
	if p.Signed {
		v = packetVersionMAC
	}
	dst = append(dst, packetMagic...)
	dst = append(dst, v, byte(len(p.Name)))
	dst = binary.BigEndian.AppendUint64(dst, p.Incarnation)
	dst = binary.BigEndian.AppendUint64(dst, p.Seq)
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.Sent))
	return append(dst, p.Name...), nil
}

// signPacket appends to body (a version-2 body from appendPacket) its
// HMAC-SHA256 under key.
func signPacket(body, key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(body)
}

// verifyPacket reports whether b, a packet decodePacket accepted as Signed,
// carries a valid MAC under one of keys (tried in order, as the SWIM
// agent's keyring opens packets; the comparison is constant-time).
func verifyPacket(b []byte, keys [][]byte) bool {
	if len(b) < packetHeaderSize+macSize {
		return false
	}
	body, tag := b[:len(b)-macSize], b[len(b)-macSize:]
	var sum [macSize]byte
	for _, k := range keys {
		m := hmac.New(sha256.New, k)
		m.Write(body)
		if hmac.Equal(m.Sum(sum[:0]), tag) {
			return true
		}
	}
	return false
}

// decodePacket decodes one datagram (version 1 or 2; a version-2 MAC is not
// checked here, see verifyPacket).
func decodePacket(b []byte) (packet, error) {
	if len(b) < packetHeaderSize {
		return packet{}, &packetError{"length", fmt.Sprintf("at least %d bytes", packetHeaderSize), fmt.Sprintf("%d", len(b))}
	}
	if string(b[:4]) != packetMagic {
		return packet{}, &packetError{"magic", fmt.Sprintf("%q", packetMagic), fmt.Sprintf("%q", b[:4])}
	}
	if b[4] != packetVersion && b[4] != packetVersionMAC {
		return packet{}, &packetError{"version", "1 or 2", fmt.Sprintf("%d", b[4])}
	}
	n, mac := int(b[5]), 0
	if b[4] == packetVersionMAC {
		mac = macSize
	}
	if len(b) != packetHeaderSize+n+mac {
		return packet{}, &packetError{"length", fmt.Sprintf("%d bytes (version %d, name length %d)", packetHeaderSize+n+mac, b[4], n), fmt.Sprintf("%d", len(b))}
	}
	p := packet{
		Incarnation: binary.BigEndian.Uint64(b[6:]),
		Seq:         binary.BigEndian.Uint64(b[14:]),
		Sent:        time.Duration(binary.BigEndian.Uint64(b[22:])),
		Name:        string(b[30 : 30+n]),
		Signed:      mac > 0,
	}
	if !validName(p.Name) {
		return packet{}, &packetError{"name", "UTF-8 without spaces or control characters, no leading '#', not \"-\"", fmt.Sprintf("%q", p.Name)}
	}
	return p, nil
}
