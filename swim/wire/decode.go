package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

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

// reader reads b from off. Errors name the field read after the item it
// belongs to (item, then item's index when idx >= 0, as "update 3"): the
// name is built only when a read fails, so a valid packet costs no
// allocation for names.
type reader struct {
	b    []byte
	off  int
	item string
	idx  int
	// matchBound: the packet's extensions hold tag 8 (match bound).
	matchBound bool
}

// name is field's full name: joined after the reader's item, if any.
func (r *reader) name(field string) string {
	switch {
	case r.item == "":
		return field
	case r.idx < 0:
		return join(r.item, field)
	default:
		return join(r.item+" "+strconv.Itoa(r.idx), field)
	}
}

// join joins two parts of a field's name with a space, either may be empty.
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

func (r *reader) fail(field string, err error, format string, args ...any) error {
	return &DecodeError{Offset: r.off, Field: r.name(field), Err: err, Detail: fmt.Sprintf(format, args...)}
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
	return r.length(field, "", max)
}

// length is uvarint for a field named field then tail (as "from id" then
// "length"), joined only when the read fails.
func (r *reader) length(field, tail string, max uint64) (uint64, error) {
	v, n := binary.Uvarint(r.b[r.off:])
	switch {
	case n == 0:
		return 0, r.fail(join(field, tail), ErrTruncated, "varint runs past the end")
	case n < 0:
		return 0, r.fail(join(field, tail), ErrMalformed, "varint overflows 64 bits")
	case n != uvarintLen(v):
		return 0, r.fail(join(field, tail), ErrMalformed, "varint not in its shortest form")
	case v > max:
		return 0, r.fail(join(field, tail), ErrMalformed, "value %d exceeds %d", v, max)
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
	l, err := r.length(field, "length", uint64(max))
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

// node reads a node's ID and address, named idField and addrField.
func (r *reader) node(idField, addrField string, idRequired bool) (swim.Node, error) {
	id, err := r.str(idField, swim.MaxIDLen, idRequired)
	if err != nil {
		return swim.Node{}, err
	}
	addr, err := r.str(addrField, swim.MaxAddrLen, false)
	if err != nil {
		return swim.Node{}, err
	}
	return swim.Node{ID: swim.ID(id), Addr: addr}, nil
}

// minUpdateSize is the smallest encoded update: kind, 1-byte ID, empty
// address, incarnation 0, empty From (format 1; format 2 adds a byte).
const minUpdateSize = 1 + 2 + 1 + 1 + 1

// Info says what Decode learnt about a payload beyond the packet: its
// format version, how many extension entries it skipped because their
// tag is unknown to this version (fields a later version added), and
// whether a ping asked for an ack bound to its sender (packet tag 8,
// EnvelopeBound), which a Codec turns into swim.Ping.MatchBySeq.
type Info struct {
	Version       byte
	UnknownFields int
	MatchBound    bool
}

// Unmarshal decodes a payload produced by Marshal or MarshalVersion, in
// any format from MinVersion to Version. Payloads longer than max bytes
// (max <= 0: no limit) are rejected before any parsing. Extension entries
// with an unknown tag are skipped (UnmarshalInfo counts them). Errors are
// *DecodeError values wrapping ErrOversize, ErrVersion, ErrTruncated,
// ErrMalformed, ErrTrailing or ErrUnknownKind; Unmarshal never panics,
// and it allocates in proportion to the input only.
func Unmarshal(b []byte, max int) (*swim.Packet, error) {
	p, _, err := UnmarshalInfo(b, max)
	return p, err
}

// UnmarshalInfo is Unmarshal that also returns the payload's Info.
func UnmarshalInfo(b []byte, max int) (*swim.Packet, Info, error) {
	var info Info
	r := &reader{b: b, idx: -1}
	if max > 0 && len(b) > max {
		return nil, info, r.fail("packet", ErrOversize, "%d bytes, limit %d", len(b), max)
	}
	v, kind, err := r.header()
	if err != nil {
		return nil, info, err
	}
	info.Version = v
	p := &swim.Packet{Kind: kind}
	if err := r.body(p, v); err != nil {
		return nil, info, err
	}
	if v >= 2 {
		r.item = "packet"
		n, err := r.ext(p, nil)
		r.item = ""
		if err != nil {
			return nil, info, err
		}
		info.UnknownFields += n
		info.MatchBound = r.matchBound
	}
	n, err := r.updates(p, v)
	info.UnknownFields += n
	if err != nil {
		return nil, info, err
	}
	if r.off != len(r.b) {
		return nil, info, r.fail("end", ErrTrailing, "%d bytes after the last update", len(r.b)-r.off)
	}
	return p, info, nil
}

// header reads the format version and the message kind, which must be
// one that format has.
func (r *reader) header() (byte, swim.MessageKind, error) {
	v, err := r.byte("version")
	if err != nil {
		return 0, 0, err
	}
	if v < MinVersion || v > Version {
		r.off--
		return 0, 0, r.fail("version", ErrVersion, "got %d, this decoder reads versions %d to %d", v, MinVersion, Version)
	}
	k, err := r.byte("kind")
	if err != nil {
		return 0, 0, err
	}
	maxKind := swim.MaxMessageKind
	if v < 2 {
		maxKind = swim.MsgGossip
	}
	switch {
	case k == 0:
		r.off--
		return 0, 0, r.fail("kind", ErrMalformed, "message kind 0, want 1 to %d", maxKind)
	case swim.MessageKind(k) > maxKind:
		r.off--
		return 0, 0, r.fail("kind", ErrUnknownKind, "kind %d, this decoder reads 1 to %d in format %d", k, maxKind, v)
	}
	return v, swim.MessageKind(k), nil
}

// body reads the packet's sender and destination and the fields of its
// kind.
func (r *reader) body(p *swim.Packet, v byte) error {
	var err error
	// A format-2 ack may leave out its sender's ID (swim.Ack.NoSenderID):
	// its receiver knows whom it pinged with the sequence number.
	if p.From, err = r.node("from id", "from addr", p.Kind != swim.MsgAck || v < 2); err != nil {
		return err
	}
	if p.To, err = r.node("to id", "to addr", false); err != nil {
		return err
	}
	switch p.Kind {
	case swim.MsgPing, swim.MsgAck, swim.MsgNack:
		seq, err := r.uvarint(seqField(p.Kind), 1<<32-1)
		if err != nil {
			return err
		}
		switch p.Kind {
		case swim.MsgPing:
			p.Ping.Seq = uint32(seq)
		case swim.MsgAck:
			p.Ack = swim.Ack{Seq: uint32(seq), NoSenderID: p.From.ID == ""}
		default:
			p.Nack.Seq = uint32(seq)
		}
	case swim.MsgPingReq:
		return r.pingReq(&p.PingReq)
	case swim.MsgUser:
		p.User, err = r.bytes("user message", len(r.b), 1)
	}
	return err
}

// pingReq reads a ping-req's sequence number, target and nack flag.
func (r *reader) pingReq(pr *swim.PingReq) error {
	seq, err := r.uvarint("ping-req seq", 1<<32-1)
	if err != nil {
		return err
	}
	pr.Seq = uint32(seq)
	if pr.Target, err = r.node("ping-req target id", "ping-req target addr", true); err != nil {
		return err
	}
	flag, err := r.byte("ping-req nack flag")
	if err != nil {
		return err
	}
	if flag > 1 {
		r.off--
		return r.fail("ping-req nack flag", ErrMalformed, "got %d, want 0 or 1", flag)
	}
	pr.Nack = flag == 1
	return nil
}

// updates reads the update count, checks that the rest of the payload can
// hold that many, and reads them. It returns the number of unknown
// extension entries skipped.
func (r *reader) updates(p *swim.Packet, v byte) (int, error) {
	if len(r.b)-r.off < 2 {
		return 0, r.fail("update count", ErrTruncated, "need 2 bytes, have %d", len(r.b)-r.off)
	}
	count := int(binary.BigEndian.Uint16(r.b[r.off:]))
	r.off += 2
	minSize := minUpdateSize
	if v >= 2 {
		minSize++
	}
	if count*minSize > len(r.b)-r.off {
		return 0, r.fail("update count", ErrTruncated, "%d updates need at least %d bytes, have %d", count, count*minSize, len(r.b)-r.off)
	}
	if count > 0 {
		p.Updates = make([]swim.Update, count)
	}
	unknown := 0
	r.item = "update"
	for i := range p.Updates {
		r.idx = i
		n, err := r.update(&p.Updates[i], v)
		unknown += n
		if err != nil {
			return unknown, err
		}
	}
	r.item, r.idx = "", -1
	return unknown, nil
}

// update reads one membership update: kind (with the proof flag), node,
// incarnation, its origin, the proof when flagged and, in format 2, its
// extension entries, whose unknown ones it counts.
func (r *reader) update(u *swim.Update, v byte) (int, error) {
	kind, err := r.byte("kind")
	if err != nil {
		return 0, err
	}
	u.Kind = swim.UpdateKind(kind &^ proofFlag)
	switch u.Kind {
	case swim.UpdateAlive, swim.UpdateDead:
	case swim.UpdateSuspect:
		if kind&proofFlag != 0 {
			r.off--
			return 0, r.fail("kind", ErrMalformed, "suspect update with the proof flag (0x%02x)", kind)
		}
	default:
		r.off--
		return 0, r.fail("kind", ErrMalformed, "unknown update kind %d, want 1 to 3 (+ 0x80 with a proof)", kind)
	}
	if u.Node, err = r.node("node id", "node addr", true); err != nil {
		return 0, err
	}
	inc, err := r.uvarint("incarnation", uint64(swim.MaxIncarnation))
	if err != nil {
		return 0, err
	}
	u.Incarnation = swim.Incarnation(inc)
	from, err := r.str("from", swim.MaxIDLen, false)
	if err != nil {
		return 0, err
	}
	u.From = swim.ID(from)
	if v >= 2 && u.Kind == swim.UpdateAlive && u.From == "" {
		u.From = u.Node.ID // written empty: its member's own (the payload layout)
	}
	if kind&proofFlag != 0 {
		if len(r.b)-r.off < swim.ProofSize {
			return 0, r.fail("proof", ErrTruncated, "need %d bytes, have %d", swim.ProofSize, len(r.b)-r.off)
		}
		u.Proof = swim.Proof(r.b[r.off : r.off+swim.ProofSize])
		r.off += swim.ProofSize
	}
	if v < 2 {
		return 0, nil
	}
	return r.ext(nil, u)
}

// bytes reads a uvarint length (min to max) and that many bytes, copied.
func (r *reader) bytes(field string, max, min int) ([]byte, error) {
	at := r.off
	l, err := r.length(field, "length", uint64(max))
	if err != nil {
		return nil, err
	}
	if int(l) < min {
		r.off = at
		return nil, r.fail(field, ErrMalformed, "%d bytes, want %d to %d", l, min, max)
	}
	if int(l) > len(r.b)-r.off {
		return nil, r.fail(field, ErrTruncated, "need %d bytes, have %d", l, len(r.b)-r.off)
	}
	out := append([]byte(nil), r.b[r.off:r.off+int(l)]...)
	r.off += int(l)
	return out, nil
}

// minBroadcastSize is the smallest encoded broadcast: a 1-byte origin,
// seq, an empty key and 1 byte of data.
const minBroadcastSize = 2 + 1 + 1 + 2

// seqField names a ping's, ack's or nack's sequence number.
func seqField(k swim.MessageKind) string {
	switch k {
	case swim.MsgPing:
		return "ping seq"
	case swim.MsgAck:
		return "ack seq"
	}
	return "nack seq"
}
