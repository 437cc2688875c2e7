package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// broadcastsFrom counts the broadcasts from origin on ch until want have
// come or d has passed.
func broadcastsFrom(ch <-chan swim.Message, origin swim.ID, want int, d time.Duration) int {
	n := 0
	end := time.After(d)
	for n < want {
		select {
		case m := <-ch:
			if m.Broadcast && m.From == origin {
				n++
			}
		case <-end:
			return n
		}
	}
	return n
}

// TestForgedBroadcastNumberSilencesForLeadOnly (issue 27, atk27 F2): a
// stranger's datagrams carrying 64 broadcasts under b's name, numbered
// 2 s ahead of the present clock (under the ceiling, MaxBroadcastLead
// 30 s), are delivered at a and fill a's window for b; b's broadcasts,
// numbered with its clock, are old news at a until b's clock passes the
// forged numbers, then delivered. Before, b numbered from its start time
// plus one per broadcast, far below the clock: one forged broadcast, and
// 0 of 10 of b's broadcasts were delivered 3 s and 35 s after it.
func TestForgedBroadcastNumberSilencesForLeadOnly(t *testing.T) {
	as := group(t, 2, Config{Plain: true})
	a, b := as[0], as[1]
	msgs, cancel := a.Receive(1024)
	defer cancel()
	ctx := context.Background()
	require.NoError(t, b.Broadcast(ctx, "", []byte("before")))
	require.Equal(t, 1, broadcastsFrom(msgs, b.Self().ID, 1, 5*time.Second), "b's broadcast before the forgery")

	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	stranger := newAttacker(t, codec, "stranger")
	const ahead = 2 * time.Second
	forged := time.Now().Add(ahead)
	for k := 0; k < 64; k += 8 {
		var bs []swim.Broadcast
		for i := range 8 {
			bs = append(bs, swim.Broadcast{Origin: b.Self().ID, Seq: uint64(forged.UnixNano()) + uint64(k+i), Data: []byte("forged")})
		}
		stranger.send(t, a.Self(), swim.Packet{Kind: swim.MsgGossip, Broadcasts: bs})
	}
	require.Equal(t, 64, broadcastsFrom(msgs, b.Self().ID, 64, 5*time.Second), "the forged ones are delivered")
	if time.Now().Before(forged.Add(-ahead / 2)) {
		require.NoError(t, b.Broadcast(ctx, "", []byte("silenced")))
		assert.Equal(t, 0, broadcastsFrom(msgs, b.Self().ID, 1, time.Until(forged)), "numbered below the forged one")
	}
	time.Sleep(time.Until(forged) + 100*time.Millisecond)
	for i := range 10 {
		require.NoError(t, b.Broadcast(ctx, "", fmt.Appendf(nil, "after %d", i)))
	}
	assert.Equal(t, 10, broadcastsFrom(msgs, b.Self().ID, 10, 10*time.Second), "b's clock passed the forged number")
	assert.Equal(t, 0, a.Stats().Protocol.BroadcastsImplausible)
}
