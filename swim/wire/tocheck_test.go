package wire

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A probe ping to a member whose ID is longer than 6 bytes carries the
// ID's check (packet tag 9) in its place, and asks for a plain ack without
// IDs by the check alone: no tag 7, so that a member of an earlier
// version, which skips the check, answers with its ID. Worked, plain, the
// 36-byte ID and the bench's address: version and kind 2, from 1 + 3 + 1
// + 15 = 20, to 1 + 1 = 2, seq 300 2, extensions 1 + 6 = 7, count 2: 35
// bytes, where naming it took 2 + 20 + 38 + 2 + 3 + 2 = 67. A ping that
// is not a probe's, or to a short ID, names its receiver.
func TestToCheckBytes(t *testing.T) {
	long := swim.ID(strings.Repeat("u", 36))
	m00 := swim.Node{ID: "m00", Addr: "127.0.0.1:40123"}
	probe := &swim.Packet{Kind: swim.MsgPing, From: m00, To: swim.Node{ID: long, Addr: "127.0.0.1:40124"}, Ping: swim.Ping{Seq: 300, MatchBySeq: true}}
	b := mustMarshal(t, probe)
	c := swim.IDCheck(long)
	want := []byte{2, 1, 3, 'm', '0', '0', 15}
	want = append(want, "127.0.0.1:40123"...)
	want = append(want, 0, 0, 0xac, 0x02, 6, 9, 4, byte(c>>24), byte(c>>16), byte(c>>8), byte(c), 0, 0)
	assert.Equal(t, want, b)
	assert.Len(t, b, 35)
	assert.LessOrEqual(t, len(b), probe.Size())
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, swim.Node{}, got.To)
	assert.Equal(t, c, got.ToCheck)
	again, err := Marshal(nil, got, 0)
	require.NoError(t, err)
	assert.Equal(t, b, again, "the decoded check is written back")
	assert.LessOrEqual(t, len(again), got.Size())

	plain, err := NewCodec(CodecConfig{Security: &Security{Plain: true}})
	require.NoError(t, err)
	dec, err := plain.Decode(append([]byte{EnvelopePlain}, b...))
	require.NoError(t, err)
	assert.True(t, dec.Ping.MatchBySeq, "the check asks for a plain ack without IDs")

	for _, p := range []*swim.Packet{
		{Kind: swim.MsgPing, From: m00, To: swim.Node{ID: long}, Ping: swim.Ping{Seq: 300}},
		{Kind: swim.MsgPing, From: m00, To: swim.Node{ID: "m01"}, Ping: swim.Ping{Seq: 300, MatchBySeq: true}},
	} {
		got, err := Unmarshal(mustMarshal(t, p), 0)
		require.NoError(t, err)
		assert.Equal(t, p.To.ID, got.To.ID, "named")
		assert.Zero(t, got.ToCheck)
	}
}

// Every packet but an ack, a nack or a ping that asks for an ack naming
// its sender carries a long receiver ID's check in its place: a joiner's
// announcement to each member (gossip) and a view (sync) named the
// receiver in full before. Worked, plain, an empty gossip from the bench's
// m00 to a 36-byte ID: version and kind 2, from 20, to 2, extensions
// 1 + 6 = 7, count 2: 33 bytes, where naming it took 2 + 20 + 38 + 1 +
// 2 = 63. Each kind that may carry it decodes it; an ack or a nack never
// carries it.
func TestToCheckOnOtherKinds(t *testing.T) {
	long := swim.ID(strings.Repeat("u", 36))
	m00 := swim.Node{ID: "m00", Addr: "127.0.0.1:40123"}
	c := swim.IDCheck(long)
	gossip := &swim.Packet{Kind: swim.MsgGossip, From: m00, To: swim.Node{ID: long, Addr: "127.0.0.1:40124"}}
	b := mustMarshal(t, gossip)
	want := []byte{2, byte(swim.MsgGossip), 3, 'm', '0', '0', 15}
	want = append(want, "127.0.0.1:40123"...)
	want = append(want, 0, 0, 6, 9, 4, byte(c>>24), byte(c>>16), byte(c>>8), byte(c), 0, 0)
	assert.Equal(t, want, b)
	assert.Len(t, b, 33)
	assert.LessOrEqual(t, len(b), gossip.Size())

	for _, p := range []*swim.Packet{
		gossip,
		{Kind: swim.MsgSync, From: m00, To: swim.Node{ID: long}, Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: m00, From: m00.ID}}},
		{Kind: swim.MsgJoin, From: m00, To: swim.Node{ID: long}, Digest: swim.ViewDigest{Members: 2, Hash: 7}},
		{Kind: swim.MsgPingReq, From: m00, To: swim.Node{ID: long}, PingReq: swim.PingReq{Seq: 4, Target: swim.Node{ID: "m02", Addr: "127.0.0.1:40125"}}},
		{Kind: swim.MsgUser, From: m00, To: swim.Node{ID: long}, User: []byte("hi")},
		{Kind: swim.MsgPing, From: m00, To: swim.Node{ID: long}, Ping: swim.Ping{Seq: 5, MatchBySeq: true}},
	} {
		got, err := Unmarshal(mustMarshal(t, p), 0)
		require.NoError(t, err, "%v", p.Kind)
		assert.Empty(t, got.To.ID, "%v: the ID left out", p.Kind)
		assert.Equal(t, c, got.ToCheck, "%v", p.Kind)
		assert.LessOrEqual(t, len(mustMarshal(t, got)), got.Size(), "%v: Size bounds the decoded packet's encoding", p.Kind)
	}
	for _, p := range []*swim.Packet{
		{Kind: swim.MsgAck, From: m00, To: swim.Node{ID: long}, Ack: swim.Ack{Seq: 5}},
		{Kind: swim.MsgNack, From: m00, To: swim.Node{ID: long}, Nack: swim.Nack{Seq: 5}},
		{Kind: swim.MsgPing, From: m00, To: swim.Node{ID: long}, Ping: swim.Ping{Seq: 5}},
		{Kind: swim.MsgGossip, From: m00, To: swim.Node{ID: "m01"}},
	} {
		got, err := Unmarshal(mustMarshal(t, p), 0)
		require.NoError(t, err, "%v", p.Kind)
		assert.Zero(t, got.ToCheck, "%v to %s: no check", p.Kind, p.To.ID)
	}
}

// A receiver check is 4 bytes, not 0, on a packet that does not name its
// receiver, and never on an ack or a nack.
func TestToCheckMalformed(t *testing.T) {
	head := func(kind swim.MessageKind, to string) []byte {
		b := []byte{2, byte(kind), 1, 'a', 0, byte(len(to))}
		b = append(b, to...)
		b = append(b, 0)
		if kind != swim.MsgGossip {
			b = append(b, 1) // seq
		}
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"zero", append(head(swim.MsgPing, ""), 6, 9, 4, 0, 0, 0, 0, 0, 0)},
		{"short", append(head(swim.MsgPing, ""), 5, 9, 3, 1, 2, 3, 0, 0)},
		{"on an ack", append(head(swim.MsgAck, ""), 6, 9, 4, 1, 2, 3, 4, 0, 0)},
		{"on a nack", append(head(swim.MsgNack, ""), 6, 9, 4, 1, 2, 3, 4, 0, 0)},
		{"on gossip with the ID", append(head(swim.MsgGossip, "b"), 6, 9, 4, 1, 2, 3, 4, 0, 0)},
		{"with the ID", append(head(swim.MsgPing, "b"), 6, 9, 4, 1, 2, 3, 4, 0, 0)},
	} {
		_, err := Unmarshal(tc.b, 0)
		var de *DecodeError
		require.ErrorAs(t, err, &de, tc.name)
		assert.ErrorIs(t, err, ErrMalformed, tc.name)
		assert.Contains(t, de.Field, "receiver check", tc.name)
	}
}

// A LocalID that could not travel as an ID is refused, naming the field.
func TestLocalIDChecked(t *testing.T) {
	kr, _ := NewKeyring(key(1, 16))
	_, err := NewCodec(CodecConfig{Security: &Security{Keyring: kr}, LocalID: swim.ID(strings.Repeat("i", 300))})
	assert.ErrorContains(t, err, "wire: CodecConfig.LocalID: ID is 300 bytes, at most 255")
	_, err = NewCodec(CodecConfig{Security: &Security{Keyring: kr}, LocalID: "a\nb"})
	assert.ErrorContains(t, err, "CodecConfig.LocalID: ID: byte 1 is the control character")
}
