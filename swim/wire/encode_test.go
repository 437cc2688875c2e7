package wire

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

func node(id string) swim.Node { return swim.Node{ID: swim.ID(id), Addr: "127.0.0.1:7946"} }

// received returns p as a receiver decodes it from format 2: without the
// receiver's address, and without the sender's address and the receiver's
// ID in an ack or a nack (the payload layout), written out here rather
// than taken from the encoder.
func received(p *swim.Packet) *swim.Packet {
	q := *p
	q.To.Addr = ""
	if q.Kind == swim.MsgAck || q.Kind == swim.MsgNack {
		q.From.Addr, q.To.ID = "", ""
	}
	if q.Kind == swim.MsgAck && q.Ack.NoSenderID {
		q.From.ID = ""
	}
	return &q
}

// receivedSealed is received for a sealed packet: acks and nacks keep
// both IDs, and a ping's match-by-seq flag is not sent (encoding).
func receivedSealed(p *swim.Packet) *swim.Packet {
	q := *p
	q.To.Addr = ""
	if q.Kind == swim.MsgAck || q.Kind == swim.MsgNack {
		q.From.Addr = ""
	}
	q.Ping.MatchBySeq, q.Ack.NoSenderID = false, false
	return &q
}

func samplePackets() []*swim.Packet {
	ups := []swim.Update{
		{Kind: swim.UpdateAlive, Node: node("a"), Incarnation: 0, From: "a"},
		{Kind: swim.UpdateSuspect, Node: node("b"), Incarnation: 300, From: "c"},
		{Kind: swim.UpdateDead, Node: node("d"), Incarnation: swim.MaxIncarnation, From: "d"},
	}
	return []*swim.Packet{
		{Kind: swim.MsgPing, From: node("m1"), To: node("m2"), Ping: swim.Ping{Seq: 7}},
		{Kind: swim.MsgPing, From: node("m1"), To: swim.Node{Addr: "127.0.0.1:1"}, Ping: swim.Ping{Seq: 1<<32 - 1}, Updates: ups},
		{Kind: swim.MsgAck, From: node("m2"), To: node("m1"), Ack: swim.Ack{Seq: 128}, Updates: ups[:1]},
		{Kind: swim.MsgNack, From: node("m3"), To: node("m1"), Nack: swim.Nack{Seq: 0}},
		{Kind: swim.MsgPingReq, From: node("m1"), To: node("m3"), PingReq: swim.PingReq{Seq: 9, Target: node("m2"), Nack: true}, Updates: ups},
		{Kind: swim.MsgPingReq, From: node("m1"), To: node("m3"), PingReq: swim.PingReq{Seq: 9, Target: node("m2")}},
		{Kind: swim.MsgJoin, From: node("new"), To: swim.Node{Addr: "127.0.0.1:2"}, Updates: ups[:1]},
		{Kind: swim.MsgSync, From: node("m1"), To: node("new"), Updates: ups},
		{Kind: swim.MsgGossip, From: node("m1"), To: node("m2"), Updates: ups},
		{Kind: swim.MsgGossip, From: node("m1"), To: node("m2"), Updates: []swim.Update{
			{Kind: swim.UpdateAlive, Node: node("a"), Incarnation: 2, From: "a", Proof: swim.Proof(strings.Repeat("p", swim.ProofSize))},
			{Kind: swim.UpdateDead, Node: node("a"), Incarnation: 3, From: "a", Proof: swim.Proof(strings.Repeat("q", swim.ProofSize))},
		}},
		// Format 2's fields.
		{Kind: swim.MsgPing, From: node("m1"), To: node("m2"), Ping: swim.Ping{Seq: 3},
			Broadcasts: []swim.Broadcast{{Origin: "m1", Seq: 1, Data: []byte("x")},
				{Origin: "zz", Seq: 1<<64 - 1, Key: strings.Repeat("k", 255), Data: bytes.Repeat([]byte{0xff}, 600)}},
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: node("m1"), Incarnation: 4, From: "m1",
				Meta: "role=db\x00\xff", Versions: swim.VersionRange{Min: 1, Max: 2}}}},
		{Kind: swim.MsgSync, From: node("m1"), To: node("new"), State: []byte("app state"),
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: node("m1"), From: "m1", Meta: strings.Repeat("m", swim.MaxMetaLen)},
				{Kind: swim.UpdateSuspect, Node: node("b"), Incarnation: 1, From: "c", Versions: swim.VersionRange{Min: 2, Max: 9}}}},
		{Kind: swim.MsgUser, From: node("m1"), To: node("m2"), User: []byte("hello"), Broadcasts: []swim.Broadcast{{Origin: "o", Key: "\x00", Data: []byte("b")}}, Updates: ups[:1]},
		// An ack's application payload (Config.AckPayload).
		{Kind: swim.MsgAck, From: node("m2"), To: node("m1"), Ack: swim.Ack{Seq: 5}, AckPayload: []byte("coordinate")},
		{Kind: swim.MsgAck, From: node("m2"), To: node("m1"), Ack: swim.Ack{Seq: 6}, AckPayload: bytes.Repeat([]byte{0}, swim.MaxAckPayloadLen), Updates: ups[:1]},
		// Parts of a message sent over a stream (SendReliable).
		{Kind: swim.MsgUser, From: node("m1"), To: node("m2"), User: []byte("part"), Part: swim.Part{Offset: 0, Total: 1<<32 - 1}},
		{Kind: swim.MsgUser, From: node("m1"), To: node("m2"), User: []byte("end"), Part: swim.Part{Offset: 7, Total: 10}},
		// An anti-entropy exchange's digest.
		{Kind: swim.MsgJoin, From: node("m1"), To: node("m2"), Digest: swim.ViewDigest{Members: 1, Hash: 0}, Updates: ups[:1]},
		// A join's token, and a view part echoing it.
		{Kind: swim.MsgJoin, From: node("new"), To: swim.Node{Addr: "127.0.0.1:2"}, Updates: ups[:1], JoinToken: 1<<64 - 1},
		{Kind: swim.MsgSync, From: node("m1"), To: node("new"), Updates: ups, JoinToken: 0x0123456789abcdef},
		{Kind: swim.MsgJoin, From: node("m1"), To: node("m2"), State: []byte("s"), Broadcasts: []swim.Broadcast{{Origin: "o", Data: []byte("b")}},
			Digest: swim.ViewDigest{Members: 1<<32 - 1, Hash: 1<<64 - 1}},
	}
}

// TestProofEncoding pins how a proof travels: the update's kind byte with
// 0x80 set, then the swim.ProofSize bytes after From; a Suspect with the
// flag, a cut proof and a proof of the wrong length are refused.
func TestProofEncoding(t *testing.T) {
	u := swim.Update{Kind: swim.UpdateAlive, Node: swim.Node{ID: "a"}, Incarnation: 1, From: "a", Proof: swim.Proof(strings.Repeat("k", swim.ProofSize))}
	p := &swim.Packet{Kind: swim.MsgGossip, From: swim.Node{ID: "m"}, Updates: []swim.Update{u}}
	b := mustMarshal(t, p)
	// version, kind, from (1 "m", 0), to (0, 0), no packet extensions,
	// count (0, 1), then the update (its from empty: an Alive's own), its
	// proof and its (empty) extensions.
	head := []byte{Version, byte(swim.MsgGossip), 1, 'm', 0, 0, 0, 0, 0, 1}
	upd := []byte{0x81, 1, 'a', 0, 1, 0}
	require.Equal(t, slices.Concat(head, upd, []byte(u.Proof), []byte{0}), b)

	_, err := Unmarshal(b[:len(b)-2], 0)
	require.ErrorIs(t, err, ErrTruncated)
	assert.Contains(t, err.Error(), "update 0 proof")

	sus := slices.Clone(b)
	sus[len(head)] = 0x80 | byte(swim.UpdateSuspect)
	_, err = Unmarshal(sus, 0)
	require.ErrorIs(t, err, ErrMalformed)

	p.Updates[0].Proof = "short"
	_, err = Marshal(nil, p, 0)
	assert.ErrorContains(t, err, "proof is 5 bytes")
}

func TestRoundTrip(t *testing.T) {
	for i, p := range samplePackets() {
		b, err := Marshal(nil, p, 0)
		require.NoError(t, err, "packet %d", i)
		assert.LessOrEqual(t, len(b), p.Size(), "packet %d: encoding exceeds swim.Packet.Size", i)
		got, err := Unmarshal(b, DefaultMaxPacketSize)
		require.NoError(t, err, "packet %d", i)
		assert.Equal(t, received(p), got, "packet %d", i)
		if p.Kind == swim.MsgUser {
			continue // format 1 has no user messages
		}
		// Format 1 carries every address.
		b1, _, err := MarshalVersion(nil, p, 0, 1)
		require.NoError(t, err, "packet %d", i)
		got1, err := Unmarshal(b1, 0)
		require.NoError(t, err, "packet %d", i)
		assert.Equal(t, p.From, got1.From, "packet %d, format 1", i)
		assert.Equal(t, p.To, got1.To, "packet %d, format 1", i)
	}
}

// TestPingBytes pins the format-1 layout of a small ping, worked out by
// hand from the layout comment in encode.go.
func TestPingBytes(t *testing.T) {
	p := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "x:1"}, To: swim.Node{ID: "b"}, Ping: swim.Ping{Seq: 300},
		Updates: []swim.Update{{Kind: swim.UpdateSuspect, Node: swim.Node{ID: "c"}, Incarnation: 2, From: "a"}}}
	b, _, err := MarshalVersion(nil, p, 0, 1)
	require.NoError(t, err)
	want := []byte{
		1, 1, // version, kind ping
		1, 'a', 3, 'x', ':', '1', // from
		1, 'b', 0, // to
		0xac, 0x02, // seq 300 = 0b10_0101100
		0, 1, // one update
		2, 1, 'c', 0, 2, 1, 'a', // suspect c inc 2 from a
	}
	assert.Equal(t, want, b)
}

func TestMarshalFit(t *testing.T) {
	p := &swim.Packet{Kind: swim.MsgPing, From: node("m1"), To: node("m2"), Ping: swim.Ping{Seq: 1}}
	for i := 0; i < 200; i++ {
		p.Updates = append(p.Updates, swim.Update{Kind: swim.UpdateAlive, Node: node(fmt.Sprintf("member-%03d", i)), Incarnation: swim.Incarnation(i), From: swim.ID(fmt.Sprintf("member-%03d", i))})
	}
	for _, max := range []int{60, 100, 500, 1371, DefaultMaxPacketSize} {
		b, n, err := MarshalFit(nil, p, max)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), max)
		assert.Less(t, n, len(p.Updates))
		// One more update would not have fit: each is 1+12+16+1+12 = 42 bytes here at most.
		assert.Greater(t, len(b)+p.Updates[n].Size(), max)
		got, err := Unmarshal(b, max)
		require.NoError(t, err)
		require.Len(t, got.Updates, n)
		for i := range got.Updates {
			assert.Equal(t, p.Updates[i], got.Updates[i], "the prefix, in order")
		}
	}
	_, err := Marshal(nil, p, DefaultMaxPacketSize)
	assert.ErrorIs(t, err, ErrTooLarge)
	_, _, err = MarshalFit(nil, p, 20)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorContains(t, err, "without updates")
}

func TestMarshalFitCapsAt65535Updates(t *testing.T) {
	p := &swim.Packet{Kind: swim.MsgSync, From: node("m")}
	p.Updates = make([]swim.Update, 70000)
	for i := range p.Updates {
		p.Updates[i] = swim.Update{Kind: swim.UpdateAlive, Node: swim.Node{ID: "x"}}
	}
	b, n, err := MarshalFit(nil, p, 0)
	require.NoError(t, err)
	assert.Equal(t, 65535, n)
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Len(t, got.Updates, 65535)
}

func TestMarshalErrors(t *testing.T) {
	long := strings.Repeat("x", 256)
	ok := func() *swim.Packet {
		return &swim.Packet{Kind: swim.MsgPing, From: node("a"), To: node("b"), Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: node("c"), From: "c"}}}
	}
	cases := map[string]func(p *swim.Packet){
		"unknown message kind": func(p *swim.Packet) { p.Kind = 99 },
		"from ID is empty":     func(p *swim.Packet) { p.From.ID = "" },
		"from ID is 256":       func(p *swim.Packet) { p.From.ID = swim.ID(long) },
		"from address is 256":  func(p *swim.Packet) { p.From.Addr = long },
		"to ID is 256":         func(p *swim.Packet) { p.To.ID = swim.ID(long) },
		"target ID is empty":   func(p *swim.Packet) { p.Kind = swim.MsgPingReq },
		"update 0: unknown":    func(p *swim.Packet) { p.Updates[0].Kind = 0 },
		"update 0 node ID is":  func(p *swim.Packet) { p.Updates[0].Node.ID = "" },
		"update 0 from is 256": func(p *swim.Packet) { p.Updates[0].From = swim.ID(long) },
	}
	for want, mutate := range cases {
		p := ok()
		mutate(p)
		_, err := Marshal(nil, p, 0)
		assert.ErrorContains(t, err, want)
	}
	_, _, err := MarshalFit(nil, nil, 0)
	assert.ErrorContains(t, err, "nil packet")
	// Maximum-length strings are fine.
	p := ok()
	p.From = swim.Node{ID: swim.ID(long[:255]), Addr: long[:255]}
	b, err := Marshal(nil, p, 0)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), p.Size())
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, received(p), got)
}

func mustMarshal(t *testing.T, p *swim.Packet) []byte {
	b, err := Marshal(nil, p, 0)
	require.NoError(t, err)
	return b
}

func mustMarshalV1(t *testing.T, p *swim.Packet) []byte {
	b, n, err := MarshalVersion(nil, p, 0, 1)
	require.NoError(t, err)
	require.Equal(t, len(p.Updates), n)
	return b
}

// TestUnmarshalErrors: every field of format 1 (which format 2 extends),
// missing, cut, too long or out of range, gives a DecodeError naming it.
func TestUnmarshalErrors(t *testing.T) {
	ping := mustMarshalV1(t, &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a"}, Ping: swim.Ping{Seq: 5}})
	// ping = 1 1 | 1 'a' 0 | 0 0 | 5 | 0 0
	require.Equal(t, []byte{1, 1, 1, 'a', 0, 0, 0, 5, 0, 0}, ping)
	pr := mustMarshalV1(t, &swim.Packet{Kind: swim.MsgPingReq, From: swim.Node{ID: "a"}, PingReq: swim.PingReq{Seq: 1, Target: swim.Node{ID: "t"}}})
	// pr = 1 4 | 1 'a' 0 | 0 0 | 1 | 1 't' 0 | 0 | 0 0
	require.Equal(t, []byte{1, 4, 1, 'a', 0, 0, 0, 1, 1, 't', 0, 0, 0, 0}, pr)
	withUp := func(u ...byte) []byte {
		return append([]byte{1, 5, 1, 'a', 0, 0, 0, 0, 1}, u...)
	}
	cases := []struct {
		name  string
		in    []byte
		max   int
		err   error
		field string
	}{
		{"oversize", make([]byte, 11), 10, ErrOversize, "packet"},
		{"empty", nil, 0, ErrTruncated, "version"},
		{"version 0", []byte{0, 1}, 0, ErrVersion, "version"},
		{"version 3", []byte{3, 1}, 0, ErrVersion, "version"},
		{"no kind", []byte{1}, 0, ErrTruncated, "kind"},
		{"unknown kind", []byte{1, 8, 1, 'a', 0, 0, 0, 0, 0}, 0, ErrUnknownKind, "kind"},
		{"kind 0", []byte{1, 0, 1, 'a', 0, 0, 0, 0, 0}, 0, ErrMalformed, "kind"},
		{"from id missing", []byte{1, 1}, 0, ErrTruncated, "from id length"},
		{"from id empty", []byte{1, 1, 0, 0}, 0, ErrMalformed, "from id"},
		{"from id short", []byte{1, 1, 5, 'a'}, 0, ErrTruncated, "from id"},
		{"from id too long", []byte{1, 1, 0x80, 0x02}, 0, ErrMalformed, "from id length"},
		{"from id varint overflow", []byte{1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, ErrMalformed, "from id length"},
		{"from id varint runs off", []byte{1, 1, 0x81}, 0, ErrTruncated, "from id length"},
		{"non-minimal varint", []byte{1, 1, 0x81, 0x00, 'a'}, 0, ErrMalformed, "from id length"},
		{"from addr missing", []byte{1, 1, 1, 'a'}, 0, ErrTruncated, "from addr length"},
		{"from addr too long", []byte{1, 1, 1, 'a', 0x80, 0x02}, 0, ErrMalformed, "from addr length"},
		{"to missing", []byte{1, 1, 1, 'a', 0}, 0, ErrTruncated, "to id length"},
		{"to addr missing", []byte{1, 1, 1, 'a', 0, 0}, 0, ErrTruncated, "to addr length"},
		{"seq missing", ping[:7], 0, ErrTruncated, "ping seq"},
		{"seq over 32 bits", []byte{1, 3, 1, 'a', 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0}, 0, ErrMalformed, "nack seq"},
		{"ack seq missing", []byte{1, 2, 1, 'a', 0, 0, 0}, 0, ErrTruncated, "ack seq"},
		{"ping-req seq missing", pr[:7], 0, ErrTruncated, "ping-req seq"},
		{"ping-req target missing", pr[:8], 0, ErrTruncated, "ping-req target id length"},
		{"ping-req target empty", []byte{1, 4, 1, 'a', 0, 0, 0, 1, 0, 0, 0, 0, 0}, 0, ErrMalformed, "ping-req target id"},
		{"ping-req flag missing", pr[:11], 0, ErrTruncated, "ping-req nack flag"},
		{"ping-req flag 2", append(append(append([]byte{}, pr[:11]...), 2), 0, 0), 0, ErrMalformed, "ping-req nack flag"},
		{"count missing", ping[:8], 0, ErrTruncated, "update count"},
		{"count half", ping[:9], 0, ErrTruncated, "update count"},
		{"count too large", []byte{1, 5, 1, 'a', 0, 0, 0, 0xff, 0xff, 1, 2, 3}, 0, ErrTruncated, "update count"},
		{"update kind 0", withUp(0, 1, 'x', 0, 0, 0), 0, ErrMalformed, "update 0 kind"},
		{"update kind 4", withUp(4, 1, 'x', 0, 0, 0), 0, ErrMalformed, "update 0 kind"},
		{"update node empty", withUp(1, 0, 0, 0, 0, 0), 0, ErrMalformed, "update 0 node id"},
		{"update addr short", withUp(1, 1, 'x', 9, 0, 0), 0, ErrTruncated, "update 0 node addr"},
		{"update incarnation overflow", withUp(1, 1, 'x', 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0), 0, ErrMalformed, "update 0 incarnation"},
		{"update incarnation runs off", withUp(1, 1, 'x', 0, 0xff, 0xff), 0, ErrTruncated, "update 0 incarnation"},
		{"update from missing", withUp(1, 1, 'x', 0, 0, 0x80, 0x80), 0, ErrTruncated, "update 0 from length"},
		{"update from short", withUp(1, 1, 'x', 0, 0, 3, 'a'), 0, ErrTruncated, "update 0 from"},
		{"update kind missing", append([]byte{1, 5, 1, 'a', 0, 0, 0, 0, 2}, 1, 1, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0), 0, ErrMalformed, "update 1 kind"},
		{"trailing", append(append([]byte{}, ping...), 0), 0, ErrTrailing, "end"},
		{"from id not UTF-8", []byte{1, 1, 2, 0xff, 0xfe, 0, 0, 0, 5, 0, 0}, 0, ErrMalformed, "from id"},
		{"from id newline", []byte{1, 1, 3, 'a', '\n', 'b', 0, 0, 0, 5, 0, 0}, 0, ErrMalformed, "from id"},
		{"to addr NUL", []byte{1, 1, 1, 'a', 0, 0, 1, 0, 5, 0, 0}, 0, ErrMalformed, "to addr"},
		{"update from escape", withUp(1, 1, 'x', 0, 0, 1, 0x1b), 0, ErrMalformed, "update 0 from"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Unmarshal(c.in, c.max)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.ErrorIs(t, err, c.err)
			var de *DecodeError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, c.field, de.Field)
			assert.True(t, strings.HasPrefix(err.Error(), "wire: decode: byte "), err.Error())
			assert.LessOrEqual(t, de.Offset, len(c.in))
		})
	}
	// The valid originals decode.
	for _, b := range [][]byte{ping, pr} {
		_, err := Unmarshal(b, 0)
		require.NoError(t, err)
	}
}

func TestCodec(t *testing.T) {
	kr, _ := NewKeyring(key(3, 32))
	for _, sec := range []*Security{{Keyring: kr}, {Plain: true}} {
		c, err := NewCodec(CodecConfig{Security: sec})
		require.NoError(t, err)
		assert.Equal(t, DefaultMaxPacketSize, c.MaxPacketSize())
		stamp := 0
		if !sec.Plain {
			stamp = 8 // the sealed timestamp of the replay check
		}
		assert.Equal(t, DefaultMaxPacketSize-sec.Overhead()-stamp, c.MaxPayload())
		for _, p := range samplePackets() {
			pkt, n, err := c.Encode(p)
			require.NoError(t, err)
			assert.Equal(t, len(p.Updates), n)
			got, err := c.Decode(pkt)
			require.NoError(t, err)
			if sec.Plain {
				assert.Equal(t, received(p), got)
			} else {
				assert.Equal(t, receivedSealed(p), got)
			}
		}
		// Oversized datagram.
		_, err = c.Decode(make([]byte, DefaultMaxPacketSize+1))
		assert.ErrorIs(t, err, ErrOversize)
		// A big packet is cut to fit, envelope included.
		p := &swim.Packet{Kind: swim.MsgSync, From: node("m")}
		for i := 0; i < 100; i++ {
			p.Updates = append(p.Updates, swim.Update{Kind: swim.UpdateAlive, Node: node(fmt.Sprintf("n%d", i)), From: "m"})
		}
		pkt, n, err := c.Encode(p)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(pkt), DefaultMaxPacketSize)
		assert.Greater(t, len(pkt)+p.Updates[n].Size(), DefaultMaxPacketSize)
	}
	// Wrong key: authentication error, not a decode error.
	other, _ := NewKeyring(key(4, 32))
	a, _ := NewCodec(CodecConfig{Security: &Security{Keyring: kr}})
	b, _ := NewCodec(CodecConfig{Security: &Security{Keyring: other}})
	pkt, _, err := a.Encode(samplePackets()[0])
	require.NoError(t, err)
	_, err = b.Decode(pkt)
	assert.ErrorIs(t, err, ErrAuth)
	// Encode errors pass through.
	_, _, err = a.Encode(&swim.Packet{Kind: 42, From: node("x")})
	assert.Error(t, err)
}

func TestCodecConfigErrors(t *testing.T) {
	_, err := NewCodec(CodecConfig{})
	assert.Error(t, err)
	_, err = NewCodec(CodecConfig{Security: &Security{Plain: true}, MaxPacketSize: 100})
	assert.ErrorContains(t, err, "out of range")
	_, err = NewCodec(CodecConfig{Security: &Security{Plain: true}, MaxPacketSize: 70000})
	assert.ErrorContains(t, err, "out of range")
}

// FuzzDecode checks that Unmarshal never panics on arbitrary input, and that
// whatever it accepts is canonical: re-encoding gives back the same bytes,
// within swim.Packet.Size, unless the input held what the encoder leaves
// out (a later version's unknown entries; in format 2, an address that
// format-2 writers no longer send, which earlier ones did): re-encoding
// then drops exactly that.
func FuzzDecode(f *testing.F) {
	for _, p := range samplePackets() {
		b, err := Marshal(nil, p, 0)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{2})
	f.Add(vnext(f, samplePackets()[1]))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, info, err := UnmarshalInfo(b, DefaultMaxPacketSize)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a *DecodeError: %v", err)
			}
			return
		}
		again, _, err := MarshalVersion(nil, p, 0, info.Version)
		if err != nil {
			t.Fatalf("decoded packet does not re-encode: %v", err)
		}
		want := p
		if info.Version >= 2 {
			want = received(p)
		}
		// An Alive's own ID as its from is written empty in format 2, and
		// read in either form (earlier writers write it whole).
		ownFrom := info.Version >= 2 && slices.ContainsFunc(p.Updates, func(u swim.Update) bool {
			return u.Kind == swim.UpdateAlive && u.From == u.Node.ID
		})
		// Tag 8 (a sealed ping's ask for a bound ack) is the Codec's to
		// read; Unmarshal leaves MatchBySeq as tag 7 says.
		// A long receiver ID is written as its check (but in acks,
		// nacks and pings that do not match by seq).
		checked := info.Version >= 2 && len(p.To.ID) > toCheckLen && p.Kind != swim.MsgAck && p.Kind != swim.MsgNack && (p.Kind != swim.MsgPing || p.Ping.MatchBySeq)
		dropped := info.UnknownFields > 0 || ownFrom || info.MatchBound || checked || !assert.ObjectsAreEqual(p, want)
		if !dropped && !bytes.Equal(again, b) {
			t.Fatalf("not canonical:\n in  %x\n out %x", b, again)
		}
		if dropped {
			// The unknown entries, unneeded addresses and an Alive's own
			// from are dropped, a long receiver ID checked; the rest
			// survives.
			q, err := Unmarshal(again, 0)
			if checked {
				w := *want
				w.To.ID, w.ToCheck, w.Ping.MatchBySeq = "", swim.IDCheck(p.To.ID), false // tag 9, no tag 7
				want = &w
			}
			if err != nil || !assert.ObjectsAreEqual(want, q) {
				t.Fatalf("re-encoding without unknown fields: %v\n %+v\n %+v", err, want, q)
			}
		}
		// Packet.Size bounds what fdkit encodes; a later version's unknown
		// entries, skipped on decoding, may make the input itself longer.
		if len(again) > p.Size() || (info.UnknownFields == 0 && len(b) > p.Size()) {
			t.Fatalf("%d bytes (%d re-encoded, %d unknown fields) exceed Packet.Size %d", len(b), len(again), info.UnknownFields, p.Size())
		}
	})
}

// FuzzCodecDecode feeds arbitrary datagrams through the full receive path
// (envelope, then payload) of an encrypted and a plain codec.
func FuzzCodecDecode(f *testing.F) {
	kr, _ := NewKeyring(key(8, 16))
	enc, _ := NewCodec(CodecConfig{Security: &Security{Keyring: kr}})
	bound, _ := NewCodec(CodecConfig{Security: &Security{Keyring: kr}, LocalID: "r"})
	plain, _ := NewCodec(CodecConfig{Security: &Security{Plain: true}})
	migrating := &Security{Keyring: kr, Label: "dc1"}
	migrating.SetAcceptPlain(true)
	mig, _ := NewCodec(CodecConfig{Security: migrating})
	for _, p := range samplePackets() {
		b, _, _ := plain.Encode(p)
		f.Add(b)
		f.Add(append([]byte{EnvelopeLabel, 3, 'd', 'c', '1'}, b...))
	}
	f.Add([]byte{EnvelopeEncrypted, 0})
	f.Add(append([]byte{EnvelopeBound}, make([]byte, 40)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := plain.Decode(b); err == nil {
			if _, _, err := plain.Encode(p); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
		}
		if _, err := enc.Decode(b); err == nil {
			t.Fatalf("unauthenticated datagram accepted by the encrypted codec: %x", b)
		}
		if _, err := bound.DecodeDatagram(b, func(uint32) (swim.ID, bool) { return "s", true }); err == nil {
			t.Fatalf("unauthenticated datagram accepted by the codec that reads bound packets: %x", b)
		}
		// A labelled codec accepting plain packets while encryption is
		// turned on: only plain ones under its label, which re-encode.
		if p, err := mig.Decode(b); err == nil {
			if !bytes.HasPrefix(b, []byte{EnvelopeLabel, 3, 'd', 'c', '1', EnvelopePlain}) {
				t.Fatalf("migrating codec accepted %x", b)
			}
			if _, _, err := mig.Encode(p); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
		}
	})
}

// TestNamesArePrintableUTF8: IDs and addresses that are not valid UTF-8 or
// hold control characters are refused both ways. Such an ID made every
// member's /metrics scrape fail (Prometheus label values must be UTF-8) and
// a newline in an ID let a member forge lines in fdswim's event output.
func TestNamesArePrintableUTF8(t *testing.T) {
	for _, bad := range []string{"\xff\xfe", "a\nevent kind=dead id=b", "tab\t", "nul\x00", "del\x7f", "c1\u0085"} {
		assert.Error(t, CheckName(bad), "%q", bad)
		for _, p := range []*swim.Packet{
			{Kind: swim.MsgPing, From: swim.Node{ID: swim.ID(bad)}},
			{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: bad}},
			{Kind: swim.MsgPing, From: swim.Node{ID: "a"}, To: swim.Node{ID: swim.ID(bad)}},
			{Kind: swim.MsgPingReq, From: swim.Node{ID: "a"}, PingReq: swim.PingReq{Target: swim.Node{ID: swim.ID(bad)}}},
			{Kind: swim.MsgSync, From: swim.Node{ID: "a"}, Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: swim.Node{ID: swim.ID(bad)}}}},
			{Kind: swim.MsgSync, From: swim.Node{ID: "a"}, Updates: []swim.Update{{Kind: swim.UpdateSuspect, Node: swim.Node{ID: "b"}, From: swim.ID(bad)}}},
		} {
			_, err := Marshal(nil, p, 0)
			assert.Error(t, err, "%q in %+v", bad, p)
		}
	}
	ok := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "nœud-é ✓", Addr: "[::1]:7946"}}
	b := mustMarshal(t, ok)
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, ok.From, got.From)
}

// BenchmarkMarshalFit encodes a ping carrying eight updates into a reused
// buffer: the encoder's send path (run with -benchmem; it allocates nothing).
func BenchmarkMarshalFit(b *testing.B) {
	p := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "10.0.0.1:7946"},
		To: swim.Node{ID: "b", Addr: "10.0.0.2:7946"}, Ping: swim.Ping{Seq: 42}}
	for range 8 {
		p.Updates = append(p.Updates, swim.Update{Kind: swim.UpdateSuspect,
			Node: swim.Node{ID: "c", Addr: "10.0.0.3:7946"}, Incarnation: 7, From: "a"})
	}
	buf := make([]byte, 0, 1400)
	b.ReportAllocs()
	for b.Loop() {
		if _, n, err := MarshalFit(buf[:0], p, 1400); err != nil || n != len(p.Updates) {
			b.Fatal(n, err)
		}
	}
}
