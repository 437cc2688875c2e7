package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestCompactHeaderBytes pins the bare ping and ack of bench/memberlist's
// names ("m00", "127.0.0.1:NNNNN"), worked out by hand from the payload
// layout: format 2 leaves out the receiver's address, and the sender's in
// an ack. Before, both carried both addresses: 47 and 47 bytes at seq 300.
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
		3, 'm', '0', '0', 0, // to: ID, no address
		0xac, 0x02, 0, 0, 0}
	b := mustMarshal(t, ping)
	assert.Equal(t, wantPing, b)
	assert.Len(t, b, 32)
	b = mustMarshal(t, ack)
	assert.Equal(t, wantAck, b)
	assert.Len(t, b, 17)

	got, err := Unmarshal(wantAck, 0)
	require.NoError(t, err)
	assert.Equal(t, swim.Node{ID: "m01"}, got.From)
	assert.Equal(t, swim.Node{ID: "m00"}, got.To)

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
	}
	for _, p := range pkts {
		b1, _, err := MarshalVersion(nil, p, 0, 1)
		require.NoError(t, err)
		b2 := mustMarshal(t, p)
		assert.LessOrEqual(t, len(b2), len(b1)+1, "%v", p.Kind) // format 2 adds at most its empty extension section
		t.Logf("%-8v format 1: %2d bytes, format 2: %2d bytes", p.Kind, len(b1), len(b2))
	}
}
