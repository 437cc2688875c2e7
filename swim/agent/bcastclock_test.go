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

// TestStrangersForgedBroadcastNumbersDropped (issue 27, atk27 F2): a
// stranger's datagrams carrying 64 broadcasts under b's name, numbered 2 s
// ahead of the present clock (under the ceiling, MaxBroadcastLead 30 s),
// are dropped at a (above every number a delivered from b, from a sender
// a does not hold live: BroadcastsUnvouched), and b's next 10 broadcasts
// are delivered at once. Before, one such forged broadcast was delivered
// and raised a's window for b above b's numbers (which followed b's start
// time plus one per broadcast, not its clock): 0 of 10 of b's broadcasts
// were delivered 3 s and 35 s after it. A forgery relayed by a live
// member still raises the window, until b's clock passes it
// (swim.TestBroadcastAtFollowsClock).
func TestStrangersForgedBroadcastNumbersDropped(t *testing.T) {
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
	forged := time.Now().Add(2 * time.Second)
	for k := 0; k < 64; k += 8 {
		var bs []swim.Broadcast
		for i := range 8 {
			bs = append(bs, swim.Broadcast{Origin: b.Self().ID, Seq: uint64(forged.UnixNano()) + uint64(k+i), Data: []byte("forged")})
		}
		stranger.send(t, a.Self(), swim.Packet{Kind: swim.MsgGossip, Broadcasts: bs})
	}
	require.Eventually(t, func() bool { return a.Stats().Protocol.BroadcastsUnvouched == 64 }, 5*time.Second, 10*time.Millisecond,
		"the forged ones are dropped")
	for i := range 10 {
		require.NoError(t, b.Broadcast(ctx, "", fmt.Appendf(nil, "after %d", i)))
	}
	assert.Equal(t, 10, broadcastsFrom(msgs, b.Self().ID, 10, 10*time.Second), "b's broadcasts, none forged")
	assert.Equal(t, 0, a.Stats().Protocol.BroadcastsImplausible)
}
