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

// Wire-format versions. Version is the format this package writes unless
// told otherwise (CodecConfig.Version, MarshalVersion); MinVersion is the
// oldest it reads and writes. A decoder reads every version from
// MinVersion to Version and rejects others with ErrVersion.
//
//   - Format 1 (fdkit before the extension sections): no extension
//     sections; no MsgUser. A decoder of format 1 refuses format 2.
//   - Format 2: an extension section after the known fields of the packet
//     and after those of each update, holding metadata, the version range,
//     application broadcasts and state, and whatever later versions add;
//     MsgUser.
//
// Later versions add fields as new extension tags and new message kinds,
// which this decoder skips and counts; the version byte changes only for
// a change that a format-2 decoder cannot skip.
const (
	Version    byte = 2
	MinVersion byte = 1
)

// Versions returns the range of formats this package reads, to advertise
// in swim.Config.Versions.
func Versions() swim.VersionRange { return swim.VersionRange{Min: MinVersion, Max: Version} }

// DefaultMaxPacketSize is the default bound, in bytes, of a whole datagram
// (envelope included).
const DefaultMaxPacketSize = 1400

// Payload layout. uvarint is encoding/binary's unsigned varint in its
// shortest form; str is a uvarint length followed by that many bytes;
// node is str(ID) str(Addr); ext is an extension section (format 2 only).
//
//	version   1 byte  (1 or 2)
//	kind      1 byte  (swim.MessageKind: 1 ping, 2 ack, 3 nack, 4 ping-req, 5 join, 6 sync, 7 gossip, 8 user)
//	from      node    (format 2: empty address in acks and nacks; empty ID in a plain
//	                  ack with swim.Ack.NoSenderID)
//	to        node    (ID may be empty; format 2: empty address; empty ID in plain acks
//	                  and nacks)
//	body      ping, ack, nack: uvarint seq (< 2^32)
//	          ping-req:        uvarint seq, node target, 1 byte nack flag (0 or 1)
//	          user:            str message (1 byte or more)
//	          join, sync, gossip: nothing
//	ext       packet extensions (format 2)
//	count     2 bytes big-endian: number of updates
//	updates   count × (1 byte kind (1 alive, 2 suspect, 3 dead; + 0x80 when a proof follows),
//	          node, uvarint incarnation, str from, [proof: swim.ProofSize bytes], ext (format 2))
//
// An Alive update is its member's own statement (only a member raises its
// incarnation), so its from is the member's ID: format 2 writes it empty
// and the decoder reads an Alive's empty from as its member's ID. A view
// transfer lists every member once, so with IDs of host names or UUIDs
// this takes a third or more off a join's and an anti-entropy exchange's
// bytes. A format-2 decoder before this reads the empty from as it is:
// swim takes an Alive's from only as whom an event names as its source.
//
// Format 2 leaves out the addresses its receiver does not need, writing
// them as empty strings (which any format-2 decoder reads): the receiver's
// own (to: it is at that address, and checks only the ID), and the
// sender's in acks and nacks (matched by sequence number and sender ID;
// swim.Member.Step takes an empty address as the one it holds for the
// sender, and swim/agent fills in a datagram's source address for a
// sender the member does not know). Pings, ping-reqs, joins, syncs, gossip
// and user messages keep the sender's address: it is where their answers,
// and a view request to an unknown sender, go (and a join is answered only
// from the address it claims). Unsealed, an ack or a nack also leaves out
// its receiver's ID (sealed, one keeps both IDs unless it is a bound ack,
// and a ping sends tag 8 instead of 7; see encoding): it answers a
// ping or ping-req of its receiver, which
// matches it by the sender's ID and the sequence number; a receiver's ID
// only guards a misdelivered packet (swim.Member.Step counts one that
// names another ID), and every format-2 decoder reads an empty one. An ack
// with swim.Ack.NoSenderID (the answer to a ping with packet tag 7, match
// by seq) leaves out its sender's ID as well, which its receiver fills in
// from the ping it sent with that number (swim.Member.AckSender); a
// format-2 decoder that predates tag 7 never gets such an ack, as it never
// sends the tag. So a probe's round trip names the target once, in the
// ping, as memberlist's does. With 3-byte IDs and 15-byte addresses
// ("m00", "127.0.0.1:NNNNN") a bare ping is 32 bytes instead of 47 (34
// with tag 7) and a bare ack 14 (11 without its sender's ID). Format 1
// writes every address and ID. A decoder reads addresses and IDs wherever
// they are, so packets of earlier format-2 writers still decode. A
// sealed probe ping asks with tag 8 for an ack bound to its sender
// (EnvelopeBound), which names neither member, the envelope binding it to
// its receiver, as a plain ack to a ping with tag 7 names neither.
//
// The proof (swim.Update.Proof: a member's signature of its own Alive or
// leave, with signed self-updates) is flagged by the high bit of the
// update's kind byte, so that a packet without proofs is encoded as before
// and a decoder that predates proofs rejects one with them as malformed
// instead of misreading it.
//
// An extension section is a uvarint length L followed by L bytes of
// entries, each a uvarint tag, a uvarint length n and n bytes, tags
// strictly increasing from 1. A decoder skips (and counts) an entry whose
// tag it does not know; a known entry must be well formed. Known tags:
//
//	packet  1 broadcasts: uvarint count (≥ 1), count × (str origin (an ID), uvarint seq,
//	                      str key (0 to 255 bytes), str data (1 to swim.MaxBroadcastLen bytes))
//	packet  2 state:      the application's push-pull state (1 byte or more)
//	packet  3 digest:     a view digest (swim.ViewDigest) on the MsgJoin that starts an
//	                      anti-entropy exchange: uvarint members (1 to 2^32 − 1), then the
//	                      8-byte hash, big-endian
//	packet  4 ack payload: the application's payload on an ack (swim.Packet.AckPayload,
//	                      1 to swim.MaxAckPayloadLen bytes)
//	packet  5 part:       where a MsgUser's bytes lie in a larger message, or a MsgSync's
//	                      updates in a view transfer of several packets (swim.Part):
//	                      uvarint total (≥ 1), uvarint offset (< total)
//	packet  6 join token: a joiner's token on its MsgJoin, echoed by the MsgSync packets
//	                      that answer it (swim.Packet.JoinToken): 8 bytes, big-endian, not 0
//	packet  7 match by seq: on a ping only, no content: its sender matches the ack by
//	                      sequence number alone, so the ack may leave out its sender's ID
//	                      (swim.Ping.MatchBySeq; in plain packets only)
//	packet  8 match bound: on a sealed ping only, no content: as tag 7, for an ack sealed
//	                      to its sender (EnvelopeBound), which names neither member
//	                      (swim.Ping.MatchBySeq with Codec's LocalID)
//	packet  9 receiver check: 4 bytes big-endian, not 0: swim.IDCheck of the receiver's
//	                      ID, which the packet then leaves out (swim.Packet.ToCheck), when
//	                      that ID is longer than 6 bytes; on any kind but an ack or a
//	                      nack, and on a ping only when it asks for an ack without IDs,
//	                      which in a plain ping it does alone (as tag 7). Decoders
//	                      before 2026-12-06 (session 30) took it on pings only and
//	                      refused it elsewhere; decoders before tag 9 skip it
//	update  1 versions:   2 bytes, min then max (1 ≤ min ≤ max)
//	update  2 meta:       the member's metadata (1 to swim.MaxMetaLen bytes)
//
// An empty field (no broadcasts, no state, no digest, no metadata, a zero
// version range) is sent as no entry, so that an encoding is canonical.
// A format-2 decoder that predates the digest skips it, as any unknown
// entry, and answers the MsgJoin as a pull: with its whole view, and
// without asking for the sender's (swim.Member.Step). One that predates
// the join token skips it, answers a join without it, and its view
// answers the join later, as a view from elsewhere does
// (swim.Member.Joining).
// Nothing may follow the last update. The encoding of a packet is never
// larger than swim.Packet.Size.

// Extension tags (see the payload layout).
const (
	tagBroadcasts = 1
	tagState      = 2
	tagDigest     = 3
	tagAckPayload = 4
	tagPart       = 5
	tagJoinToken  = 6
	tagMatchBySeq = 7
	tagMatchBound = 8
	tagToCheck    = 9
	tagVersions   = 1
	tagMeta       = 2
)

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

// encoding is how to write a payload: the format version, whether it is
// sealed, whether a probe ping asks for a bound ack (packet tag 8) and
// whether it is such an ack (EnvelopeBound), and, for compatibility
// tests, an extra extension tag (0: none).
//
// A sealed payload that is not bound keeps the IDs in acks and nacks and
// sends no tag 7: a sealed ack that names neither its receiver nor its
// sender would open at any member, and with the round's number, which
// every member's probe of the round carries, a replay of any member's ack
// sent from a crashed member's host answered that member's probe (atk28
// F2). Named, it is its sender's answer to its receiver only, as before
// the compact acks. A bound ack opens at its receiver only, so it names
// neither member, as a plain one does; its receiver fills the sender in
// from the ping it sent with that number and checks replay against that
// sender's window (Codec.DecodeDatagram). Plain packets carry no
// guarantee (anyone can write them), so they leave the IDs of acks and
// nacks out.
type encoding struct {
	v          byte
	sealed     bool
	matchBound bool
	bound      bool
	extra      uint16
}

// extraEntry is the content of the stand-in entry of CodecConfig.ExtraTag.
var extraEntry = []byte{0xfd, 0x6b, 0x00}

func appendHeader(b []byte, p *swim.Packet, enc encoding) ([]byte, error) {
	v := enc.v
	// Only a format-2 ack that leaves its sender's ID out may have none
	// (a decoded one, re-encoded).
	if err := checkNode("from", p.From, !(v >= 2 && p.Kind == swim.MsgAck && p.Ack.NoSenderID)); err != nil {
		return nil, err
	}
	if err := checkNode("to", p.To, false); err != nil {
		return nil, err
	}
	from, to := headerNodes(p, enc)
	b = append(b, v, byte(p.Kind))
	b = appendNode(b, from)
	b = appendNode(b, to)
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
	case swim.MsgUser:
		if v < 2 {
			return nil, fmt.Errorf("wire: encode: a user message needs format 2, encoding format %d", v)
		}
		if len(p.User) == 0 {
			return nil, errors.New("wire: encode: empty user message")
		}
		b = binary.AppendUvarint(b, uint64(len(p.User)))
		b = append(b, p.User...)
	case swim.MsgJoin, swim.MsgSync, swim.MsgGossip:
	default:
		return nil, fmt.Errorf("wire: encode: unknown message kind %d", p.Kind)
	}
	if v < 2 {
		return b, nil
	}
	return appendPacketExt(b, p, enc)
}

// headerNodes returns the from and to nodes as enc writes them: format 2
// leaves out the addresses the receiver does not need and, when not
// sealed or bound, the IDs of acks and nacks (an ack's sender's only
// with swim.Ack.NoSenderID; see the payload layout and encoding); format 1
// writes both nodes whole.
func headerNodes(p *swim.Packet, enc encoding) (from, to swim.Node) {
	from, to = p.From, p.To
	if enc.v < 2 {
		return from, to
	}
	to.Addr = ""
	if toCheck(p, enc) != 0 {
		to.ID = ""
	}
	if p.Kind == swim.MsgAck || p.Kind == swim.MsgNack {
		from.Addr = ""
		if !enc.sealed || enc.bound {
			to.ID = ""
		}
	}
	if p.Kind == swim.MsgAck && p.Ack.NoSenderID && (!enc.sealed || enc.bound) {
		from.ID = ""
	}
	return from, to
}

// strLen is the encoded size of a string of n bytes.
func strLen(n int) int { return uvarintLen(uint64(n)) + n }

func appendUpdate(b []byte, i int, u *swim.Update, enc encoding) ([]byte, error) {
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
	if len(u.Meta) > swim.MaxMetaLen {
		return nil, fmt.Errorf("wire: encode: update %d metadata is %d bytes, at most %d", i, len(u.Meta), swim.MaxMetaLen)
	}
	if v := u.Versions; !v.IsZero() && (v.Min == 0 || v.Min > v.Max) {
		return nil, fmt.Errorf("wire: encode: update %d version range %d..%d, want 1 ≤ min ≤ max", i, v.Min, v.Max)
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
	from := u.From
	if enc.v >= 2 && u.Kind == swim.UpdateAlive && from == u.Node.ID {
		from = "" // its member's own: the decoder fills it in (the payload layout)
	}
	b = appendStr(b, string(from))
	b = append(b, u.Proof...)
	if enc.v < 2 {
		return b, nil
	}
	return appendUpdateExt(b, u, enc.extra), nil
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
	return MarshalVersion(dst, p, max, Version)
}

// MarshalVersion is MarshalFit in wire format v (MinVersion to Version).
// Format 1 has no extension sections: a packet's broadcasts and state and
// its updates' metadata and version ranges are left out, and a MsgUser
// packet is an error. Use it to talk to members that read only format 1
// (a group being upgraded: see CodecConfig.Version).
func MarshalVersion(dst []byte, p *swim.Packet, max int, v byte) ([]byte, int, error) {
	return marshal(dst, p, max, encoding{v: v})
}

func marshal(dst []byte, p *swim.Packet, max int, enc encoding) ([]byte, int, error) {
	if v := enc.v; v < MinVersion || v > Version {
		return nil, 0, fmt.Errorf("wire: encode: format %d, this encoder writes %d to %d", v, MinVersion, Version)
	}
	if p == nil {
		return nil, 0, errors.New("wire: encode: nil packet")
	}
	if max <= 0 {
		max = math.MaxInt
	}
	start := len(dst)
	b, err := appendHeader(dst, p, enc)
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
		b, err = appendUpdate(b, i, &p.Updates[i], enc)
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
