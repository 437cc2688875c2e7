package wire

// The extension sections of a packet and of an update: tagged entries,
// each skipped when its tag is unknown (a later version's field), read
// with a reader bounded to the entry's content.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/fdkit/fdkit/swim"
)

// maxTag bounds an extension tag; larger tags are malformed, which keeps
// a hostile tag from being a 10-byte varint.
const maxTag = 1<<16 - 1

// ext reads the extension section of r's item (the packet or an update):
// its length, then entries handed to packetEntry (u nil) or updateEntry
// with a reader over exactly the entry's content; an entry whose tag they
// do not know (errUnknownTag) is skipped. It returns how many entries were
// skipped. The section's length must be consumed exactly, tags must
// strictly increase, and a known entry must consume its content exactly.
func (r *reader) ext(p *swim.Packet, u *swim.Update) (int, error) {
	l, n := binary.Uvarint(r.b[r.off:])
	if n == 1 && l == 0 {
		r.off++ // empty: the common case
		return 0, nil
	}
	if n <= 0 || n != uvarintLen(l) || l > 1<<32-1 {
		_, err := r.uvarint("extensions length", 1<<32-1) // the same read, for its error
		return 0, err
	}
	r.off += n
	if l > uint64(len(r.b)-r.off) {
		return 0, r.fail("extensions", ErrTruncated, "need %d bytes, have %d", l, len(r.b)-r.off)
	}
	end := r.off + int(l)
	sec := reader{b: r.b[:end], off: r.off, item: r.item, idx: r.idx}
	skipped := 0
	prev := uint64(0)
	for sec.off < end {
		tag, err := sec.uvarint("extensions tag", maxTag)
		if err != nil {
			return 0, err
		}
		if tag <= prev {
			return 0, sec.fail("extensions tag", ErrMalformed, "tag %d after tag %d, want strictly increasing tags from 1", tag, prev)
		}
		prev = tag
		n, err := sec.uvarint("extensions tag length", uint64(end-sec.off))
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				de.Field = sec.name(fmt.Sprintf("extensions tag %d length", tag))
			}
			return 0, err
		}
		// The bound above counted the length's own bytes, which are read
		// now: the content must still fit in the section.
		if n > uint64(end-sec.off) {
			return 0, sec.fail(fmt.Sprintf("extensions tag %d", tag), ErrTruncated, "%d bytes, the section has %d left", n, end-sec.off)
		}
		e := reader{b: r.b[:sec.off+int(n)], off: sec.off, idx: -1}
		if u != nil {
			err = updateEntry(u, tag, &e)
		} else {
			err = packetEntry(p, tag, &e)
		}
		switch {
		case err == nil && u == nil && tag == tagMatchBound:
			r.matchBound = true
		case err == errUnknownTag:
			skipped++
		case err != nil:
			return 0, err
		case e.off != len(e.b):
			return 0, e.fail(r.name(fmt.Sprintf("extensions tag %d", tag)), ErrMalformed, "%d bytes left in the entry", len(e.b)-e.off)
		}
		sec.off += int(n)
	}
	r.off = end
	return skipped, nil
}

var errUnknownTag = errors.New("unknown tag")

func packetEntry(p *swim.Packet, tag uint64, e *reader) error {
	switch tag {
	case tagBroadcasts:
		return e.broadcasts(p)
	case tagState:
		if e.off == len(e.b) {
			return e.fail("state", ErrMalformed, "empty (no state is no entry)")
		}
		p.State = append([]byte(nil), e.b[e.off:]...)
		e.off = len(e.b)
	case tagDigest:
		n, err := e.uvarint("digest members", 1<<32-1)
		if err != nil {
			return err
		}
		if n == 0 {
			e.off--
			return e.fail("digest members", ErrMalformed, "0, want 1 to %d (no digest is no entry)", uint64(1<<32-1))
		}
		if len(e.b)-e.off != 8 {
			return e.fail("digest hash", ErrMalformed, "%d bytes, want 8", len(e.b)-e.off)
		}
		p.Digest = swim.ViewDigest{Members: uint32(n), Hash: binary.BigEndian.Uint64(e.b[e.off:])}
		e.off += 8
	case tagAckPayload:
		switch n := len(e.b) - e.off; {
		case n == 0:
			return e.fail("ack payload", ErrMalformed, "empty (no payload is no entry)")
		case n > swim.MaxAckPayloadLen:
			return e.fail("ack payload", ErrOversize, "%d bytes, at most %d", n, swim.MaxAckPayloadLen)
		}
		p.AckPayload = append([]byte(nil), e.b[e.off:]...)
		e.off = len(e.b)
	case tagPart:
		total, err := e.uvarint("part total", 1<<32-1)
		if err != nil {
			return err
		}
		if total == 0 {
			e.off--
			return e.fail("part total", ErrMalformed, "0, want 1 to %d (no part is no entry)", uint64(1<<32-1))
		}
		off, err := e.uvarint("part offset", total-1)
		if err != nil {
			return err
		}
		p.Part = swim.Part{Offset: uint32(off), Total: uint32(total)}
	case tagMatchBySeq:
		if err := e.pingFlag(p, "match by seq"); err != nil {
			return err
		}
		p.Ping.MatchBySeq = true
	case tagMatchBound:
		return e.pingFlag(p, "match bound")
	case tagToCheck:
		switch {
		case p.Kind == swim.MsgAck || p.Kind == swim.MsgNack:
			return e.fail("receiver check", ErrMalformed, "on a %v, want it on any other kind", p.Kind)
		case len(e.b)-e.off != 4:
			return e.fail("receiver check", ErrMalformed, "%d bytes, want 4", len(e.b)-e.off)
		case p.To.ID != "":
			return e.fail("receiver check", ErrMalformed, "with the receiver's ID %q: a packet names its receiver or checks it, not both", p.To.ID)
		}
		p.ToCheck = binary.BigEndian.Uint32(e.b[e.off:])
		if p.ToCheck == 0 {
			return e.fail("receiver check", ErrMalformed, "0 (no check is no entry)")
		}
		e.off += 4
	case tagJoinToken:
		if len(e.b)-e.off != 8 {
			return e.fail("join token", ErrMalformed, "%d bytes, want 8", len(e.b)-e.off)
		}
		p.JoinToken = binary.BigEndian.Uint64(e.b[e.off:])
		if p.JoinToken == 0 {
			return e.fail("join token", ErrMalformed, "0 (no token is no entry)")
		}
		e.off += 8
	default:
		return errUnknownTag
	}
	return nil
}

// pingFlag checks an entry that is a flag of a ping: no content, on a
// ping only.
func (e *reader) pingFlag(p *swim.Packet, field string) error {
	switch {
	case p.Kind != swim.MsgPing:
		return e.fail(field, ErrMalformed, "on a %v, want it on a ping only", p.Kind)
	case len(e.b) != e.off:
		return e.fail(field, ErrMalformed, "%d bytes, want none", len(e.b)-e.off)
	}
	return nil
}

// broadcasts reads a broadcasts entry's value: a count of at least one
// (bounded by what the entry can hold), then each broadcast.
func (e *reader) broadcasts(p *swim.Packet) error {
	n, err := e.uvarint("broadcast count", uint64(len(e.b)-e.off)/minBroadcastSize)
	if err != nil {
		return err
	}
	if n == 0 {
		return e.fail("broadcast count", ErrMalformed, "0, want at least 1 (no broadcasts is no entry)")
	}
	p.Broadcasts = make([]swim.Broadcast, n)
	e.item = "broadcast"
	for i := range p.Broadcasts {
		m := &p.Broadcasts[i]
		e.idx = i
		origin, err := e.str("origin", swim.MaxIDLen, true)
		if err != nil {
			return err
		}
		m.Origin = swim.ID(origin)
		if m.Seq, err = e.uvarint("seq", math.MaxUint64); err != nil {
			return err
		}
		key, err := e.bytes("key", swim.MaxBroadcastKeyLen, 0)
		if err != nil {
			return err
		}
		m.Key = string(key)
		if m.Data, err = e.bytes("", swim.MaxBroadcastLen, 1); err != nil {
			return err
		}
	}
	e.item, e.idx = "", -1
	return nil
}

func updateEntry(u *swim.Update, tag uint64, e *reader) error {
	switch tag {
	case tagVersions:
		if len(e.b)-e.off != 2 {
			return e.fail("version range", ErrMalformed, "%d bytes, want 2", len(e.b)-e.off)
		}
		lo, hi := e.b[e.off], e.b[e.off+1]
		if lo == 0 || lo > hi {
			return e.fail("version range", ErrMalformed, "%d..%d, want 1 ≤ min ≤ max", lo, hi)
		}
		u.Versions = swim.VersionRange{Min: lo, Max: hi}
		e.off += 2
	case tagMeta:
		n := len(e.b) - e.off
		if n == 0 || n > swim.MaxMetaLen {
			return e.fail("metadata", ErrMalformed, "%d bytes, want 1 to %d", n, swim.MaxMetaLen)
		}
		u.Meta = string(e.b[e.off:])
		e.off = len(e.b)
	default:
		return errUnknownTag
	}
	return nil
}
