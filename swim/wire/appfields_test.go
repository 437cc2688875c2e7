package wire

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// An ack's payload is packet extension entry 4, after the others: exact
// bytes, a round trip, and format 1 leaves it out.
func TestAckPayloadEncoding(t *testing.T) {
	p := &swim.Packet{Kind: swim.MsgAck, From: swim.Node{ID: "b"}, To: swim.Node{ID: "a"}, Ack: swim.Ack{Seq: 7}, AckPayload: []byte("xy")}
	b := mustMarshal(t, p)
	// version, kind, from (1 "b", 0), to (0, 0: an ack names no receiver),
	// seq 7, extensions
	// (4 bytes: tag 4, length 2, "xy"), update count 0 (two bytes, as in
	// TestProofEncoding).
	assert.Equal(t, []byte{Version, byte(swim.MsgAck), 1, 'b', 0, 0, 0, 7, 4, 4, 2, 'x', 'y', 0, 0}, b)
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, []byte("xy"), got.AckPayload)
	assert.LessOrEqual(t, len(b), p.Size())

	v1, _, err := MarshalVersion(nil, p, 0, 1)
	require.NoError(t, err)
	got, err = Unmarshal(v1, 0)
	require.NoError(t, err)
	assert.Nil(t, got.AckPayload, "format 1 has no payload field")

	p.AckPayload = bytes.Repeat([]byte{1}, swim.MaxAckPayloadLen+1)
	_, err = Marshal(nil, p, 0)
	assert.ErrorContains(t, err, "ack payload is 513 bytes, at most 512")

	for _, bad := range [][]byte{
		{Version, byte(swim.MsgAck), 1, 'b', 0, 1, 'a', 0, 7, 2, 4, 0, 0, 0}, // empty entry
	} {
		_, err := Unmarshal(bad, 0)
		assert.ErrorIs(t, err, ErrMalformed, "%x", bad)
		assert.ErrorContains(t, err, "ack payload", "%x", bad)
	}
	big := append([]byte{Version, byte(swim.MsgAck), 1, 'b', 0, 1, 'a', 0, 7, 0x86, 0x04, 4, 0x83, 0x04}, bytes.Repeat([]byte{1}, 515)...)
	_, err = Unmarshal(append(big, 0, 0), 0)
	assert.ErrorIs(t, err, ErrOversize)
	assert.ErrorContains(t, err, "ack payload")
}

// A part is packet extension entry 5: exact bytes, a round trip, and
// totals and offsets out of range refused both ways.
func TestPartEncoding(t *testing.T) {
	p := &swim.Packet{Kind: swim.MsgUser, From: swim.Node{ID: "b", Addr: "x"}, To: swim.Node{ID: "a"}, User: []byte("hi"), Part: swim.Part{Offset: 2, Total: 300}}
	b := mustMarshal(t, p)
	// version, kind, from (1 "b", 1 "x"), to (1 "a", 0), user (2 "hi"),
	// extensions (5 bytes: tag 5, length 3, total 300 = 0xac 0x02,
	// offset 2), update count 0 (two bytes).
	assert.Equal(t, []byte{Version, byte(swim.MsgUser), 1, 'b', 1, 'x', 1, 'a', 0, 2, 'h', 'i', 5, 5, 3, 0xac, 0x02, 2, 0, 0}, b)
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, swim.Part{Offset: 2, Total: 300}, got.Part)
	assert.LessOrEqual(t, len(b), p.Size())

	p.Part = swim.Part{Offset: 300, Total: 300}
	_, err = Marshal(nil, p, 0)
	assert.ErrorContains(t, err, "part at offset 300 of a 300-byte message")

	head := []byte{Version, byte(swim.MsgUser), 1, 'b', 1, 'x', 1, 'a', 0, 2, 'h', 'i'}
	for _, c := range []struct {
		ext []byte
		msg string
	}{
		{[]byte{4, 5, 2, 0, 0}, "part total"},          // total 0
		{[]byte{4, 5, 2, 3, 3}, "part offset"},         // offset = total
		{[]byte{4, 5, 2, 3, 9}, "part offset"},         // offset above total
		{[]byte{3, 5, 1, 3}, "part offset"},            // offset missing
		{[]byte{5, 5, 3, 3, 0, 1}, "extensions tag 5"}, // a byte left over
	} {
		_, err := Unmarshal(append(append(bytes.Clone(head), c.ext...), 0, 0), 0)
		assert.ErrorContains(t, err, c.msg, "%x", c.ext)
	}
}
