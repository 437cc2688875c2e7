package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An application broadcast rides the drain loop's next round
// (GossipInterval), as memberlist's gossip loop carries user broadcasts,
// instead of waiting for the next protocol period's ping: Broadcast at
// 50 ms, the round at 200 ms sends it to GossipFanout (2) members.
func TestDrainLoopCarriesBroadcasts(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
	a.Tick(0)
	pk, _ := drain(a)
	require.Equal(t, MsgPing, pk[0].Kind)
	ack := Packet{Kind: MsgAck, From: pk[0].To, To: node("a"), Ack: Ack{Seq: pk[0].Ping.Seq}}
	require.NoError(t, a.Step(10*time.Millisecond, &ack))
	drain(a)
	a.Tick(200 * time.Millisecond) // an idle round: nothing queued
	pk, _ = drain(a)
	require.Empty(t, only(t, pk, MsgGossip))

	require.NoError(t, a.Broadcast("", []byte("hello")))
	at, _ := a.NextDeadline()
	require.Equal(t, 400*time.Millisecond, at, "the next round of the grid")
	a.Tick(at)
	pk, _ = drain(a)
	g := only(t, pk, MsgGossip)
	require.Len(t, g, 2)
	for _, p := range g {
		require.Len(t, p.Broadcasts, 1, "to %s", p.To.ID)
		assert.Equal(t, []byte("hello"), p.Broadcasts[0].Data)
		assert.LessOrEqual(t, p.Size(), a.cfg.MaxPacketSize)
	}
	assert.NotEqual(t, g[0].To.ID, g[1].To.ID)
}
