package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestCompactHeaderBytes pins the bare ping and ack of bench/memberlist's
// names ("m00", "127.0.0.1:NNNNN"), worked out by hand from the payload
// layout: format 2 leaves out the receiver's address, and in an ack the
// sender's address and the receiver's ID (with both nodes whole each would
// be 47 bytes at seq 300).
func TestCompactHeaderBytes(t *testing.T) {
	m00 := swim.Node{ID: "m00", Addr: "127.0.0.1:40123"}
	m01 := swim.Node{ID: "m01", Addr: "127.0.0.1:40124"}
	ping := &swim.Packet{Kind: swim.MsgPing, From: m00, To: m01, Ping: swim.Ping{Seq: 300}}
	ack := &swim.Packet{Kind: swim.MsgAck, From: m01, To: m00, Ack: swim.Ack{Seq: 300}}

	wantPing := []byte{2, 1, // version 2, ping
		3, 'm', '0', '0', 15, '1', '2', '7', '.', '0', '.', '0', '.', '1', ':', '4', '0', '1', '2', '3', // from
		3, 'm', '0', '1', 0, // to: ID, no address
		0xac, 0x02, // seq 300
		0,    // no packet extensions
		0, 0} // no updates
	wantAck := []byte{2, 2, // version 2, ack
		3, 'm', '0', '1', 0, // from: ID, no address
		0, 0, // to: neither ID nor address
		0xac, 0x02, 0, 0, 0}
	b := mustMarshal(t, ping)
	assert.Equal(t, wantPing, b)
	assert.Len(t, b, 32)
	b = mustMarshal(t, ack)
	assert.Equal(t, wantAck, b)
	assert.Len(t, b, 14)

	got, err := Unmarshal(wantAck, 0)
	require.NoError(t, err)
	assert.Equal(t, swim.Node{ID: "m01"}, got.From)
	assert.Equal(t, swim.Node{}, got.To)

	// Format 1 is written as before: both nodes whole.
	b1, _, err := MarshalVersion(nil, ack, 0, 1)
	require.NoError(t, err)
	assert.Len(t, b1, 2+20+20+2+2)
	got, err = Unmarshal(b1, 0)
	require.NoError(t, err)
	assert.Equal(t, m01, got.From)
	assert.Equal(t, m00, got.To)
}

// TestHeaderSizes logs the payload size of each bare message kind with
// bench/memberlist's names, in both formats (docs/experiments.md, “Wire
// bytes per packet”).
func TestHeaderSizes(t *testing.T) {
	m00 := swim.Node{ID: "m00", Addr: "127.0.0.1:40123"}
	m01 := swim.Node{ID: "m01", Addr: "127.0.0.1:40124"}
	m02 := swim.Node{ID: "m02", Addr: "127.0.0.1:40125"}
	pkts := []*swim.Packet{
		{Kind: swim.MsgPing, From: m00, To: m01, Ping: swim.Ping{Seq: 300}},
		{Kind: swim.MsgAck, From: m01, To: m00, Ack: swim.Ack{Seq: 300}},
		{Kind: swim.MsgNack, From: m01, To: m00, Nack: swim.Nack{Seq: 300}},
		{Kind: swim.MsgPingReq, From: m00, To: m01, PingReq: swim.PingReq{Seq: 300, Target: m02, Nack: true}},
		{Kind: swim.MsgJoin, From: m00, To: m01},
		{Kind: swim.MsgGossip, From: m00, To: m01},
		// An anti-entropy exchange between agreeing views: the whole of it.
		{Kind: swim.MsgJoin, From: m00, To: m01, Digest: swim.ViewDigest{Members: 32, Hash: 1 << 63},
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: m00, Incarnation: 0, From: m00.ID, Versions: swim.DefaultVersions}}},
	}
	for _, p := range pkts {
		b1, _, err := MarshalVersion(nil, p, 0, 1)
		require.NoError(t, err)
		b2 := mustMarshal(t, p)
		if p.Digest.IsZero() {
			assert.LessOrEqual(t, len(b2), len(b1)+1, "%v", p.Kind) // format 2 adds at most its empty extension section
		}
		t.Logf("%-8v digest %-5v updates %d: format 1: %2d bytes, format 2: %2d bytes", p.Kind, !p.Digest.IsZero(), len(p.Updates), len(b1), len(b2))
	}
}

// TestDigestBytes pins the MsgJoin that starts an anti-entropy exchange:
// the digest travels in packet extension tag 3 (uvarint member count, then
// the 8-byte hash, big-endian), 11 bytes with up to 127 members.
func TestDigestBytes(t *testing.T) {
	m00 := swim.Node{ID: "m00", Addr: "127.0.0.1:40123"}
	join := &swim.Packet{Kind: swim.MsgJoin, From: m00, To: swim.Node{ID: "m01", Addr: "127.0.0.1:40124"},
		Digest: swim.ViewDigest{Members: 32, Hash: 0x0102030405060708}}
	want := []byte{2, 5, // version 2, join
		3, 'm', '0', '0', 15, '1', '2', '7', '.', '0', '.', '0', '.', '1', ':', '4', '0', '1', '2', '3', // from
		3, 'm', '0', '1', 0, // to
		11,                               // packet extensions: 11 bytes
		3, 9, 32, 1, 2, 3, 4, 5, 6, 7, 8, // tag 3, 9 bytes: 32 members, the hash
		0, 0}
	b := mustMarshal(t, join)
	assert.Equal(t, want, b)
	assert.LessOrEqual(t, len(b), join.Size())
	got, err := Unmarshal(b, 0)
	require.NoError(t, err)
	assert.Equal(t, join.Digest, got.Digest)
	// Format 1 has no extension section: the digest is left out.
	b1, _, err := MarshalVersion(nil, join, 0, 1)
	require.NoError(t, err)
	got, err = Unmarshal(b1, 0)
	require.NoError(t, err)
	assert.True(t, got.Digest.IsZero())
}
