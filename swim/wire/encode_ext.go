package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/fdkit/fdkit/swim"
)

// Extension sections (format 2; see the payload layout in encode.go):
// the packet's, after its known fields, and each update's, after its
// known fields.

// toCheck returns the receiver check (packet tag 9) that p carries in
// place of its receiver's ID, or 0: in format 2, when that ID is longer
// than the check's entry (swim.IDCheck), a probe ping that asks for an
// ack without IDs (swim.Ping.MatchBySeq: in a plain ping the check is
// that ask, see appendPacketExt) and does not verify its receiver
// (swim.Ping.Verifies: the check is unkeyed, and a member whose ID shares
// it would answer for a forged one), and, plain, any other packet but an
// ack or a nack (whose receiver's ID a sealed one names, a plain or bound
// one leaves out); or a decoded packet that carried one
// (swim.Packet.ToCheck, To.ID empty). A sealed packet of another kind
// names its receiver: a decoder before the check skips it and reads the
// packet as for whoever is at the address, so an outsider's replay of a
// sealed gossip, view or user message to another member of such a build
// would be applied there (atk30 F3); a ping it answers names its sender.
func toCheck(p *swim.Packet, enc encoding) uint32 {
	switch {
	case enc.v < 2 || p.Kind == swim.MsgAck || p.Kind == swim.MsgNack:
		return 0
	case p.To.ID == "":
		return p.ToCheck
	case len(p.To.ID) <= toCheckLen:
		return 0
	case p.Kind == swim.MsgPing:
		if !p.Ping.MatchBySeq || p.Ping.Verifies {
			return 0
		}
	case enc.sealed:
		return 0
	}
	return swim.IDCheck(p.To.ID)
}

// toCheckLen is the receiver check entry's size beyond the empty ID's
// length byte: tag, length, 4 bytes. A shorter ID is written whole.
const toCheckLen = 1 + 1 + 4

// entryLen is the encoded size of an extension entry with n bytes of
// content.
func entryLen(tag, n int) int { return uvarintLen(uint64(tag)) + uvarintLen(uint64(n)) + n }

func appendEntryHead(b []byte, tag, n int) []byte {
	b = binary.AppendUvarint(b, uint64(tag))
	return binary.AppendUvarint(b, uint64(n))
}

// appendPacketExt appends the packet's extension section (format 2).
func appendPacketExt(b []byte, p *swim.Packet, enc encoding) ([]byte, error) {
	extra := enc.extra
	bl, err := broadcastsLen(p.Broadcasts)
	if err != nil {
		return nil, err
	}
	l := 0
	if bl > 0 {
		l += entryLen(tagBroadcasts, bl)
	}
	if len(p.State) > 0 {
		l += entryLen(tagState, len(p.State))
	}
	dl := 0
	if !p.Digest.IsZero() {
		dl = uvarintLen(uint64(p.Digest.Members)) + 8
		l += entryLen(tagDigest, dl)
	}
	if len(p.AckPayload) > swim.MaxAckPayloadLen {
		return nil, fmt.Errorf("wire: encode: ack payload is %d bytes, at most %d", len(p.AckPayload), swim.MaxAckPayloadLen)
	}
	if len(p.AckPayload) > 0 {
		l += entryLen(tagAckPayload, len(p.AckPayload))
	}
	pl := 0
	if !p.Part.IsZero() {
		if p.Part.Offset >= p.Part.Total {
			return nil, fmt.Errorf("wire: encode: part at offset %d of a %d-byte message, want an offset below the total", p.Part.Offset, p.Part.Total)
		}
		pl = uvarintLen(uint64(p.Part.Total)) + uvarintLen(uint64(p.Part.Offset))
		l += entryLen(tagPart, pl)
	}
	if p.JoinToken != 0 {
		l += entryLen(tagJoinToken, 8)
	}
	check := toCheck(p, enc)
	// A ping with a receiver check asks for a plain ack without IDs by the
	// check alone (the decoder reads it as tag 7), so that a member of an
	// earlier version, which skips the check, answers with its ID: a member
	// at the address other than the one pinged is not taken for it.
	matchBySeq := p.Kind == swim.MsgPing && p.Ping.MatchBySeq && !enc.sealed && check == 0
	if matchBySeq {
		l += entryLen(tagMatchBySeq, 0)
	}
	matchBound := p.Kind == swim.MsgPing && p.Ping.MatchBySeq && enc.sealed && enc.matchBound
	if matchBound {
		l += entryLen(tagMatchBound, 0)
	}
	if check != 0 {
		l += entryLen(tagToCheck, 4)
	}
	if extra != 0 {
		l += entryLen(int(extra), len(extraEntry))
	}
	b = binary.AppendUvarint(b, uint64(l))
	if bl > 0 {
		b = appendEntryHead(b, tagBroadcasts, bl)
		b = appendBroadcasts(b, p.Broadcasts)
	}
	if len(p.State) > 0 {
		b = appendEntryHead(b, tagState, len(p.State))
		b = append(b, p.State...)
	}
	if dl > 0 {
		b = appendEntryHead(b, tagDigest, dl)
		b = binary.AppendUvarint(b, uint64(p.Digest.Members))
		b = binary.BigEndian.AppendUint64(b, p.Digest.Hash)
	}
	if len(p.AckPayload) > 0 {
		b = appendEntryHead(b, tagAckPayload, len(p.AckPayload))
		b = append(b, p.AckPayload...)
	}
	if pl > 0 {
		b = appendEntryHead(b, tagPart, pl)
		b = binary.AppendUvarint(b, uint64(p.Part.Total))
		b = binary.AppendUvarint(b, uint64(p.Part.Offset))
	}
	if p.JoinToken != 0 {
		b = appendEntryHead(b, tagJoinToken, 8)
		b = binary.BigEndian.AppendUint64(b, p.JoinToken)
	}
	if matchBySeq {
		b = appendEntryHead(b, tagMatchBySeq, 0)
	}
	if matchBound {
		b = appendEntryHead(b, tagMatchBound, 0)
	}
	if check != 0 {
		b = appendEntryHead(b, tagToCheck, 4)
		b = binary.BigEndian.AppendUint32(b, check)
	}
	return appendExtra(b, extra), nil
}

// broadcastsLen checks the broadcasts a packet carries and returns the
// length of their entry's value (0 for none).
func broadcastsLen(bs []swim.Broadcast) (int, error) {
	if len(bs) == 0 {
		return 0, nil
	}
	bl := uvarintLen(uint64(len(bs)))
	for i := range bs {
		m := &bs[i]
		switch {
		case len(m.Data) == 0 || len(m.Data) > swim.MaxBroadcastLen:
			return 0, fmt.Errorf("wire: encode: broadcast %d is %d bytes, want 1 to %d", i, len(m.Data), swim.MaxBroadcastLen)
		case m.Origin == "" || len(m.Origin) > swim.MaxIDLen:
			return 0, fmt.Errorf("wire: encode: broadcast %d origin is %d bytes, want 1 to %d", i, len(m.Origin), swim.MaxIDLen)
		case len(m.Key) > swim.MaxBroadcastKeyLen:
			return 0, fmt.Errorf("wire: encode: broadcast %d key is %d bytes, at most %d", i, len(m.Key), swim.MaxBroadcastKeyLen)
		}
		if err := CheckName(string(m.Origin)); err != nil {
			return 0, fmt.Errorf("wire: encode: broadcast %d origin: %w", i, err)
		}
		bl += strLen(len(m.Origin)) + uvarintLen(m.Seq) + strLen(len(m.Key)) + strLen(len(m.Data))
	}
	return bl, nil
}

// appendBroadcasts appends the broadcasts entry's value: the count, then
// each broadcast's origin, number, key and data.
func appendBroadcasts(b []byte, bs []swim.Broadcast) []byte {
	b = binary.AppendUvarint(b, uint64(len(bs)))
	for i := range bs {
		m := &bs[i]
		b = appendStr(b, string(m.Origin))
		b = binary.AppendUvarint(b, m.Seq)
		b = appendStr(b, m.Key)
		b = binary.AppendUvarint(b, uint64(len(m.Data)))
		b = append(b, m.Data...)
	}
	return b
}

func appendExtra(b []byte, extra uint16) []byte {
	if extra == 0 {
		return b
	}
	b = appendEntryHead(b, int(extra), len(extraEntry))
	return append(b, extraEntry...)
}

// appendUpdateExt appends an update's extension section (format 2).
func appendUpdateExt(b []byte, u *swim.Update, extra uint16) []byte {
	l := 0
	if extra != 0 {
		l += entryLen(int(extra), len(extraEntry))
	}
	if !u.Versions.IsZero() {
		l += entryLen(tagVersions, 2)
	}
	if len(u.Meta) > 0 {
		l += entryLen(tagMeta, len(u.Meta))
	}
	b = binary.AppendUvarint(b, uint64(l))
	if !u.Versions.IsZero() {
		b = appendEntryHead(b, tagVersions, 2)
		b = append(b, u.Versions.Min, u.Versions.Max)
	}
	if len(u.Meta) > 0 {
		b = appendEntryHead(b, tagMeta, len(u.Meta))
		b = append(b, u.Meta...)
	}
	return appendExtra(b, extra)
}
