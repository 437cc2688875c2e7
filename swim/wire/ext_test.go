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

// vnext encodes p as a later version would: with an entry of tag 40 that
// this version does not know in the packet's extension section and in each
// update's.
func vnext(t testing.TB, p *swim.Packet) []byte {
	b, n, err := marshal(nil, p, 0, encoding{v: 2, extra: 40})
	require.NoError(t, err)
	require.Equal(t, len(p.Updates), n)
	return b
}

// TestPingBytesV2 pins the format-2 layout of a small ping, worked out by
// hand from the layout comment in encode.go: the packet's extension
// section after the body, each update's after its From.
func TestPingBytesV2(t *testing.T) {
	p := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "x:1"}, To: swim.Node{ID: "b"}, Ping: swim.Ping{Seq: 300},
		Broadcasts: []swim.Broadcast{{Origin: "a", Seq: 1, Data: []byte("hi")}},
		Updates: []swim.Update{
			{Kind: swim.UpdateSuspect, Node: swim.Node{ID: "c"}, Incarnation: 2, From: "a"},
			{Kind: swim.UpdateAlive, Node: swim.Node{ID: "a"}, Incarnation: 1, From: "a", Meta: "z", Versions: swim.VersionRange{Min: 1, Max: 2}},
		}}
	b := mustMarshal(t, p)
	want := []byte{
		2, 1, // version 2, kind ping
		1, 'a', 3, 'x', ':', '1', // from
		1, 'b', 0, // to
		0xac, 0x02, // seq 300
		10,                                 // packet extensions: 10 bytes
		1, 8, 1, 1, 'a', 1, 0, 2, 'h', 'i', // tag 1 (broadcasts), 8 bytes: one broadcast from a, number 1, no key, "hi"
		0, 2, // two updates
		2, 1, 'c', 0, 2, 1, 'a', 0, // suspect c inc 2 from a, no extensions
		1, 1, 'a', 0, 1, 0, // alive a inc 1, from empty: a's own
		7,          // update extensions: 7 bytes
		1, 2, 1, 2, // tag 1 (versions), 2 bytes: 1..2
		2, 1, 'z', // tag 2 (meta), 1 byte
	}
	assert.Equal(t, want, b)
	assert.LessOrEqual(t, len(b), p.Size())
	got, info, err := UnmarshalInfo(b, 0)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.Equal(t, Info{Version: 2}, info)
}

// TestUnknownFieldsSkipped: a later version's entries (tag 40 here) are
// skipped and counted, the known fields around them decoded; the same
// packet in format 1 loses the extension fields and nothing else.
func TestUnknownFieldsSkipped(t *testing.T) {
	for i, p := range samplePackets() {
		b := vnext(t, p)
		got, info, err := UnmarshalInfo(b, 0)
		require.NoError(t, err, "packet %d", i)
		assert.Equal(t, received(p), got, "packet %d", i)
		assert.Equal(t, 1+len(p.Updates), info.UnknownFields, "packet %d: one entry in the packet, one per update", i)

		if p.Kind == swim.MsgUser {
			_, _, err := MarshalVersion(nil, p, 0, 1)
			assert.ErrorContains(t, err, "needs format 2")
			continue
		}
		v1, _, err := MarshalVersion(nil, p, 0, 1)
		require.NoError(t, err)
		got, info, err = UnmarshalInfo(v1, 0)
		require.NoError(t, err)
		assert.Equal(t, Info{Version: 1}, info)
		want := *p
		want.Broadcasts, want.State, want.Digest, want.AckPayload, want.JoinToken = nil, nil, swim.ViewDigest{}, nil, 0
		want.Updates = append([]swim.Update(nil), p.Updates...)
		for j := range want.Updates {
			want.Updates[j].Meta, want.Updates[j].Versions = "", swim.VersionRange{}
		}
		if len(want.Updates) == 0 {
			want.Updates = nil
		}
		assert.Equal(t, &want, got, "packet %d in format 1", i)
	}
	// An unknown message kind of format 2 is reported as such, not as
	// malformed (the receiver ignores and counts it).
	b := mustMarshal(t, samplePackets()[0])
	b[1] = 200
	_, err := Unmarshal(b, 0)
	assert.ErrorIs(t, err, ErrUnknownKind)
	b[1] = byte(swim.MsgUser)
	b1, _, _ := MarshalVersion(nil, samplePackets()[0], 0, 1)
	b1[1] = byte(swim.MsgUser) // kind 8 did not exist in format 1
	_, err = Unmarshal(b1, 0)
	assert.ErrorIs(t, err, ErrUnknownKind)
}

// TestExtensionErrors: the extension sections are as strict as the rest:
// cut, overrunning, out of order and malformed known entries are errors
// naming the field; hostile sizes are refused.
func TestExtensionErrors(t *testing.T) {
	// A join from "a" with no body: 2 5 | 1 'a' 0 | 0 0 | ext | count | updates.
	head := []byte{2, 5, 1, 'a', 0, 0, 0}
	pk := func(ext ...byte) []byte { return append(append(append([]byte{}, head...), ext...), 0, 0) }
	up := func(ext ...byte) []byte {
		return append(append(append(append([]byte{}, head...), 0, 0, 1), 1, 1, 'x', 0, 0, 0), ext...)
	}
	meta513 := append([]byte{0x84, 0x04, 2, 0x81, 0x04}, bytes.Repeat([]byte{'m'}, 513)...)
	bigBroadcast := append([]byte{0x8b, 0x08, 1, 0x88, 0x08, 1, 1, 'a', 1, 0, 0x81, 0x08}, bytes.Repeat([]byte{'b'}, 1025)...)
	bc := func(c ...byte) []byte { return pk(append([]byte{byte(len(c) + 2), 1, byte(len(c))}, c...)...) }
	cases := []struct {
		name  string
		in    []byte
		err   error
		field string
	}{
		{"packet section missing", head, ErrTruncated, "packet extensions length"},
		{"packet section cut", pk(5, 1, 1), ErrTruncated, "packet extensions"},
		{"tag 0", pk(2, 0, 0), ErrMalformed, "packet extensions tag"},
		{"tags out of order", pk(4, 30, 0, 20, 0), ErrMalformed, "packet extensions tag"},
		{"tags repeated", pk(4, 30, 0, 30, 0), ErrMalformed, "packet extensions tag"},
		{"tag above 65535", pk(4, 0x80, 0x80, 0x04, 0), ErrMalformed, "packet extensions tag"},
		{"entry overruns the section", pk(3, 30, 5, 0), ErrMalformed, "packet extensions tag 30 length"},
		{"entry length missing", pk(1, 30), ErrTruncated, "packet extensions tag 30 length"},
		{"broadcast count 0", bc(0), ErrMalformed, "broadcast count"},
		{"broadcast count above the bytes", bc(5, 1, 'a', 1, 0, 1, 'x'), ErrMalformed, "broadcast count"},
		{"broadcast origin empty", bc(1, 0, 1, 0, 1, 'x'), ErrMalformed, "broadcast 0 origin"},
		{"broadcast origin newline", bc(1, 1, '\n', 1, 0, 1, 'x'), ErrMalformed, "broadcast 0 origin"},
		{"broadcast seq overflow", bc(1, 1, 'a', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 1, 'x'), ErrMalformed, "broadcast 0 seq"},
		{"broadcast key over 255 bytes", bc(1, 1, 'a', 1, 0x80, 0x02, 0, 0), ErrMalformed, "broadcast 0 key length"},
		{"broadcast empty", bc(1, 1, 'a', 1, 0, 0), ErrMalformed, "broadcast 0"},
		{"broadcast cut", bc(1, 1, 'a', 1, 0, 5, 'x'), ErrTruncated, "broadcast 0"},
		{"broadcast over 1024 bytes", pk(bigBroadcast...), ErrMalformed, "broadcast 0 length"},
		{"broadcasts fewer than counted", bc(2, 1, 'a', 1, 0, 1, 'x', 1, 'b', 1, 0, 5), ErrTruncated, "broadcast 1"},
		{"bytes left in broadcasts", bc(1, 1, 'a', 1, 0, 1, 'x', 'z'), ErrMalformed, "packet extensions tag 1"},
		{"state empty", pk(2, 2, 0), ErrMalformed, "state"},
		{"digest members 0", pk(11, 3, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8), ErrMalformed, "digest members"},
		{"digest members 2^32", pk(15, 3, 13, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 2, 3, 4, 5, 6, 7, 8), ErrMalformed, "digest members"},
		{"digest members cut", pk(3, 3, 1, 0x80), ErrTruncated, "digest members"},
		{"digest hash 7 bytes", pk(10, 3, 8, 1, 1, 2, 3, 4, 5, 6, 7), ErrMalformed, "digest hash"},
		{"digest hash 9 bytes", pk(12, 3, 10, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9), ErrMalformed, "digest hash"},
		{"join token 0", pk(10, 6, 8, 0, 0, 0, 0, 0, 0, 0, 0), ErrMalformed, "join token"},
		{"join token 7 bytes", pk(9, 6, 7, 1, 2, 3, 4, 5, 6, 7), ErrMalformed, "join token"},
		{"join token 9 bytes", pk(11, 6, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9), ErrMalformed, "join token"},
		{"update section missing", up(), ErrTruncated, "update count"},
		{"update section cut", up(3, 2, 1), ErrTruncated, "update 0 extensions"},
		{"versions 1 byte", up(3, 1, 1, 1), ErrMalformed, "version range"},
		{"versions min 0", up(4, 1, 2, 0, 2), ErrMalformed, "version range"},
		{"versions min above max", up(4, 1, 2, 3, 2), ErrMalformed, "version range"},
		{"meta empty", up(2, 2, 0), ErrMalformed, "metadata"},
		{"meta 513 bytes", up(meta513...), ErrMalformed, "metadata"},
		{"update tags out of order", up(6, 2, 1, 'm', 1, 0, 0), ErrMalformed, "update 0 extensions tag"},
		{"trailing after the section", append(up(0), 0), ErrTrailing, "end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Unmarshal(c.in, 0)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.ErrorIs(t, err, c.err)
			var de *DecodeError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, c.field, de.Field, err.Error())
			assert.LessOrEqual(t, de.Offset, len(c.in))
		})
	}
	// The valid originals decode.
	for _, b := range [][]byte{pk(0), up(0), pk(2, 30, 0), up(6, 1, 2, 1, 1, 40, 0), pk(11, 3, 9, 1, 1, 2, 3, 4, 5, 6, 7, 8)} {
		_, err := Unmarshal(b, 0)
		require.NoError(t, err, "%x", b)
	}
}

func TestExtensionEncodeErrors(t *testing.T) {
	ok := func() *swim.Packet {
		return &swim.Packet{Kind: swim.MsgPing, From: node("a"), To: node("b"), Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: node("c"), From: "c"}}}
	}
	cases := map[string]func(p *swim.Packet){
		"metadata is 513 bytes": func(p *swim.Packet) { p.Updates[0].Meta = strings.Repeat("m", 513) },
		"version range 0..2":    func(p *swim.Packet) { p.Updates[0].Versions = swim.VersionRange{Max: 2} },
		"version range 3..2":    func(p *swim.Packet) { p.Updates[0].Versions = swim.VersionRange{Min: 3, Max: 2} },
		"broadcast 1 is 1025": func(p *swim.Packet) {
			p.Broadcasts = []swim.Broadcast{{Origin: "a", Data: []byte{1}}, {Origin: "a", Data: make([]byte, 1025)}}
		},
		"broadcast 0 is 0":        func(p *swim.Packet) { p.Broadcasts = []swim.Broadcast{{Origin: "a"}} },
		"broadcast 0 origin is 0": func(p *swim.Packet) { p.Broadcasts = []swim.Broadcast{{Data: []byte{1}}} },
		"broadcast 0 key is 256": func(p *swim.Packet) {
			p.Broadcasts = []swim.Broadcast{{Origin: "a", Key: strings.Repeat("k", 256), Data: []byte{1}}}
		},
		"broadcast 0 origin: byte 0 is": func(p *swim.Packet) { p.Broadcasts = []swim.Broadcast{{Origin: "\x01", Data: []byte{1}}} },
		"empty user message":            func(p *swim.Packet) { p.Kind = swim.MsgUser },
		"unknown message kind 200":      func(p *swim.Packet) { p.Kind = 200 },
	}
	for want, mutate := range cases {
		p := ok()
		mutate(p)
		_, err := Marshal(nil, p, 0)
		assert.ErrorContains(t, err, want)
	}
	// At the limits: a 1,024-byte broadcast with a 255-byte key, 512 bytes
	// of metadata.
	p := ok()
	p.Broadcasts = []swim.Broadcast{{Origin: "a", Seq: 1<<64 - 1, Key: strings.Repeat("k", 255), Data: make([]byte, swim.MaxBroadcastLen)}}
	p.Updates[0].Meta = strings.Repeat("m", swim.MaxMetaLen)
	b, err := Marshal(nil, p, 0)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), p.Size())
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, received(p), got)
	for _, v := range []byte{0, 3} {
		_, _, err := MarshalVersion(nil, ok(), 0, v)
		assert.ErrorContains(t, err, "this encoder writes 1 to 2")
	}
}

// TestCodecVersions: a codec writes the format it is given, reads every
// format, and counts formats and unknown fields.
func TestCodecVersions(t *testing.T) {
	kr, _ := NewKeyring(key(5, 16))
	sec := &Security{Keyring: kr}
	old, err := NewCodec(CodecConfig{Security: sec, Version: 1})
	require.NoError(t, err)
	later, err := NewCodec(CodecConfig{Security: sec, ExtraTag: 40})
	require.NoError(t, err)
	cur, err := NewCodec(CodecConfig{Security: sec})
	require.NoError(t, err)
	assert.Equal(t, byte(1), old.Version())
	assert.Equal(t, Version, cur.Version())

	p := samplePackets()[1] // a ping with three updates
	for _, from := range []*Codec{old, later, cur} {
		pkt, n, err := from.Encode(p)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		got, err := cur.Decode(pkt)
		require.NoError(t, err)
		assert.Equal(t, p.Updates[0].Node, got.Updates[0].Node)
	}
	assert.Equal(t, CodecStats{UnknownFields: 4, Formats: [3]uint64{0, 1, 2}}, cur.Stats())

	for _, cfg := range []CodecConfig{
		{Security: sec, Version: 3},
		{Security: sec, ExtraTag: 2},
		{Security: sec, ExtraTag: 40, Version: 1},
	} {
		_, err := NewCodec(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	assert.Equal(t, swim.DefaultVersions, Versions(), "swim.DefaultVersions is this package's range")
}

// BenchmarkFormats encodes and decodes a ping carrying eight updates in
// format 1 and format 2 (empty extension sections), side by side.
func BenchmarkFormats(b *testing.B) {
	p := &swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "a", Addr: "10.0.0.1:7946"},
		To: swim.Node{ID: "b", Addr: "10.0.0.2:7946"}, Ping: swim.Ping{Seq: 42}}
	for range 8 {
		p.Updates = append(p.Updates, swim.Update{Kind: swim.UpdateSuspect,
			Node: swim.Node{ID: "c", Addr: "10.0.0.3:7946"}, Incarnation: 7, From: "a"})
	}
	for _, v := range []byte{1, 2} {
		buf := make([]byte, 0, 1400)
		enc, _, err := MarshalVersion(nil, p, 0, v)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("encode/format%d", v), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := MarshalVersion(buf[:0], p, 1400, v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(enc)), "bytes/packet")
		})
		b.Run(fmt.Sprintf("decode/format%d", v), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Unmarshal(enc, 1400); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// An Alive's from is its member's own ID, written empty in format 2 (a
// view lists each member once, so long IDs no longer travel twice in
// it); earlier writers' whole from still decodes to the same update.
// Only an Alive's: a leave (a Dead from its member) and a suspicion keep
// theirs, and format 1 writes every from whole.
func TestAliveOwnFromLeftOut(t *testing.T) {
	id := swim.ID(strings.Repeat("h", 36))
	n := swim.Node{ID: id, Addr: "10.0.0.1:7946"}
	alive := swim.Update{Kind: swim.UpdateAlive, Node: n, Incarnation: 3, From: id}
	p := &swim.Packet{Kind: swim.MsgSync, From: swim.Node{ID: "s", Addr: "x:1"}, Updates: []swim.Update{alive}}
	b := mustMarshal(t, p)
	whole, _, err := MarshalVersion(nil, p, 0, 1)
	require.NoError(t, err)
	assert.Len(t, b, len(whole)+2-len(id), "format 2: the from's 36 bytes left out, two empty extension sections added")
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, alive, got.Updates[0])
	// As a writer before this wrote it: from whole.
	old := slices.Clone(b)
	at := bytes.Index(old, []byte{3, 0}) // incarnation 3, empty from
	require.Positive(t, at)
	old = slices.Concat(old[:at+1], []byte{byte(len(id))}, []byte(id), old[at+2:])
	got, err = Unmarshal(old, 0)
	require.NoError(t, err)
	assert.Equal(t, alive, got.Updates[0])
	for _, u := range []swim.Update{
		{Kind: swim.UpdateDead, Node: n, Incarnation: 3, From: id},
		{Kind: swim.UpdateSuspect, Node: n, Incarnation: 3, From: id},
		{Kind: swim.UpdateAlive, Node: n, Incarnation: 3, From: "other"},
	} {
		q := &swim.Packet{Kind: swim.MsgSync, From: swim.Node{ID: "s", Addr: "x:1"}, Updates: []swim.Update{u}}
		got, err := Unmarshal(mustMarshal(t, q), 0)
		require.NoError(t, err)
		assert.Equal(t, u, got.Updates[0], "%v from %q", u.Kind, u.From)
	}
}
