package swim

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An AckPayload that would make an ack to a member larger than
// MaxPacketSize is left out of that ack and counted
// (Stats.AckPayloadsTooLarge); one that fits goes with the ack. The ack
// b gets from a with an empty queue is Kind, From (a, a:7946), To (b,
// b:7946) and Seq; the payload adds 1+3+len bytes (Packet.Size).
func TestAckPayloadTooLargeForPacketLeftOut(t *testing.T) {
	const limit = 300
	for _, c := range []struct {
		n    int
		sent bool
	}{{8, true}, {200, true}, {280, false}, {MaxAckPayloadLen, false}} {
		a := newTest(t, "a", ModeSWIM, func(cfg *Config) {
			cfg.MaxPacketSize = limit
			cfg.AckPayload = func() []byte { return bytes.Repeat([]byte("p"), c.n) }
		}, "b")
		a.Tick(0)
		drain(a)
		bare := Packet{Kind: MsgAck, From: a.Self(), To: node("b"), Ack: Ack{Seq: 7}}
		require.Less(t, bare.Size()+4+200, limit)
		require.Greater(t, bare.Size()+4+280, limit)
		p := Packet{Kind: MsgPing, From: node("b"), To: a.Self(), Ping: Ping{Seq: 7}}
		require.NoError(t, a.Step(10*time.Millisecond, &p))
		pk, _ := drain(a)
		acks := only(t, pk, MsgAck)
		require.Len(t, acks, 1, "payload %d", c.n)
		assert.LessOrEqual(t, acks[0].Size(), limit, "payload %d", c.n)
		if c.sent {
			assert.Len(t, acks[0].AckPayload, c.n)
			assert.Zero(t, a.Stats().AckPayloadsTooLarge, "payload %d", c.n)
		} else {
			assert.Empty(t, acks[0].AckPayload, "payload %d", c.n)
			assert.Equal(t, 1, a.Stats().AckPayloadsTooLarge, "payload %d", c.n)
		}
	}
}

// An ack to a sender the view does not vouch for is held to
// MaxPacketSize too, even when twice the ping's bytes would allow more:
// the payload that does not fit is left out and counted.
func TestAckPayloadTooLargeForUnknownSenderLeftOut(t *testing.T) {
	const limit = 300
	a := newTest(t, "a", ModeSWIM, func(cfg *Config) {
		cfg.MaxPacketSize = limit
		cfg.AckPayload = func() []byte { return bytes.Repeat([]byte("p"), 280) }
	}, "b")
	a.Tick(0)
	drain(a)
	p := Packet{Kind: MsgPing, From: node("c"), To: a.Self(), Ping: Ping{Seq: 7}, WireLen: 1000}
	require.NoError(t, a.Step(10*time.Millisecond, &p))
	pk, _ := drain(a)
	acks := only(t, pk, MsgAck)
	require.Len(t, acks, 1)
	assert.LessOrEqual(t, acks[0].Size(), limit)
	assert.Empty(t, acks[0].AckPayload)
	assert.Equal(t, 1, a.Stats().AckPayloadsTooLarge)
}
