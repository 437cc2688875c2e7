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
	// version, kind, from (1 "b", 0), to (1 "a", 0), seq 7, extensions
	// (4 bytes: tag 4, length 2, "xy"), update count 0 (two bytes, as in
	// TestProofEncoding).
	assert.Equal(t, []byte{Version, byte(swim.MsgAck), 1, 'b', 0, 1, 'a', 0, 7, 4, 4, 2, 'x', 'y', 0, 0}, b)
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
