package wire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A probe's ping carries packet extension 7 (match by seq, no content),
// and the ack answering it leaves out its sender's ID: bytes worked out by
// hand from the payload layout, with bench/memberlist's names.
func TestMatchBySeqBytes(t *testing.T) {
	m00 := swim.Node{ID: "m00", Addr: "127.0.0.1:40123"}
	m01 := swim.Node{ID: "m01", Addr: "127.0.0.1:40124"}
	ping := &swim.Packet{Kind: swim.MsgPing, From: m00, To: m01, Ping: swim.Ping{Seq: 300, MatchBySeq: true}}
	ack := &swim.Packet{Kind: swim.MsgAck, From: m01, To: m00, Ack: swim.Ack{Seq: 300, NoSenderID: true}}

	wantPing := []byte{2, 1,
		3, 'm', '0', '0', 15, '1', '2', '7', '.', '0', '.', '0', '.', '1', ':', '4', '0', '1', '2', '3', // from
		3, 'm', '0', '1', 0, // to: ID, no address
		0xac, 0x02, // seq 300
		2, 7, 0, // packet extensions: 2 bytes, tag 7 with no content
		0, 0}
	wantAck := []byte{2, 2,
		0, 0, // from: neither ID nor address
		0, 0, // to: neither
		0xac, 0x02, 0, 0, 0}
	b := mustMarshal(t, ping)
	assert.Equal(t, wantPing, b)
	assert.LessOrEqual(t, len(b), ping.Size())
	b = mustMarshal(t, ack)
	assert.Equal(t, wantAck, b)

	got, err := Unmarshal(wantPing, 0)
	require.NoError(t, err)
	assert.True(t, got.Ping.MatchBySeq)
	got, err = Unmarshal(wantAck, 0)
	require.NoError(t, err)
	assert.Equal(t, swim.Node{}, got.From)
	assert.Equal(t, swim.Ack{Seq: 300, NoSenderID: true}, got.Ack)

	// Format 1 has neither: the ping goes without the flag, the ack
	// with both nodes whole.
	b1, _, err := MarshalVersion(nil, ping, 0, 1)
	require.NoError(t, err)
	got, err = Unmarshal(b1, 0)
	require.NoError(t, err)
	assert.False(t, got.Ping.MatchBySeq)
	b1, _, err = MarshalVersion(nil, ack, 0, 1)
	require.NoError(t, err)
	got, err = Unmarshal(b1, 0)
	require.NoError(t, err)
	assert.Equal(t, m01, got.From)
	assert.False(t, got.Ack.NoSenderID)

	// A named ack decodes with NoSenderID false.
	named := *ack
	named.Ack.NoSenderID = false
	got, err = Unmarshal(mustMarshal(t, &named), 0)
	require.NoError(t, err)
	assert.Equal(t, swim.ID("m01"), got.From.ID)
	assert.False(t, got.Ack.NoSenderID)
}

// The flag is known on a ping only, without content, and only an ack may
// come without its sender's ID.
func TestMatchBySeqMalformed(t *testing.T) {
	for name, bad := range map[string][]byte{
		"flag on an ack":      {2, 2, 1, 'b', 0, 0, 0, 7, 2, 7, 0, 0, 0},
		"flag with content":   {2, 1, 1, 'b', 1, 'x', 1, 'a', 0, 7, 3, 7, 1, 9, 0, 0},
		"ping without sender": {2, 1, 0, 1, 'x', 1, 'a', 0, 7, 0, 0, 0},
		"nack without sender": {2, 3, 0, 0, 0, 0, 7, 0, 0, 0},
	} {
		_, err := Unmarshal(bad, 0)
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, ErrMalformed), "%s: %v", name, err)
	}
}

// Sealed, a ping sends no match-by-seq flag and an ack keeps both IDs
// whatever the Packet says: a sealed ack that named neither member opened
// at any member, and a replay of any member's ack of the round answered a
// crashed member's probe (atk28 F2). The same packets unsealed are
// compact.
func TestMatchBySeqNotSealed(t *testing.T) {
	kr, err := NewKeyring(key(3, 32))
	require.NoError(t, err)
	m00 := swim.Node{ID: "m00", Addr: "127.0.0.1:40123"}
	m01 := swim.Node{ID: "m01", Addr: "127.0.0.1:40124"}
	ping := &swim.Packet{Kind: swim.MsgPing, From: m00, To: m01, Ping: swim.Ping{Seq: 300, MatchBySeq: true}}
	ack := &swim.Packet{Kind: swim.MsgAck, From: m01, To: m00, Ack: swim.Ack{Seq: 300, NoSenderID: true}}
	nack := &swim.Packet{Kind: swim.MsgNack, From: m01, To: m00, Nack: swim.Nack{Seq: 300}}
	for _, sec := range []*Security{{Keyring: kr}, {Plain: true}} {
		c, err := NewCodec(CodecConfig{Security: sec})
		require.NoError(t, err)
		dec := func(p *swim.Packet) *swim.Packet {
			b, _, err := c.Encode(p)
			require.NoError(t, err)
			got, err := c.Decode(b)
			require.NoError(t, err)
			return got
		}
		got := dec(ping)
		assert.Equal(t, sec.Plain, got.Ping.MatchBySeq, "plain %v", sec.Plain)
		got = dec(ack)
		if sec.Plain {
			assert.Equal(t, swim.Node{}, got.From)
			assert.Equal(t, swim.Node{}, got.To)
		} else {
			assert.Equal(t, swim.Node{ID: "m01"}, got.From)
			assert.Equal(t, swim.Node{ID: "m00"}, got.To)
			assert.False(t, got.Ack.NoSenderID)
		}
		got = dec(nack)
		assert.Equal(t, map[bool]swim.ID{true: "", false: "m00"}[sec.Plain], got.To.ID)
	}
}
