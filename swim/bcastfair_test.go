package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneOriginFloodKeepsOthersRelayed (issue 27, atk27 F4): a live
// member ins floods a's relay queue (16 broadcasts) with 80 broadcasts
// under its own ID, always newer and least sent. src's broadcast, relayed
// once already, stays queued (ins's own are evicted first, the origin
// with the most queued) and goes in the next packet with room for three,
// after ins's newest and before its next (origins take turns within a
// rank). Before, eviction took the
// most-sent, oldest relayed broadcast, src's, as soon as the queue was
// full, and the order sent ins's fresh ones first.
func TestOneOriginFloodKeepsOthersRelayed(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxQueuedBroadcasts = 16 }, "src", "ins", "c", "d", "e", "f", "g", "h")
	a.Tick(0)
	drain(a)
	bcast := func(from string, seq uint64) *Packet {
		return &Packet{Kind: MsgGossip, From: node(from), To: node("a"),
			Broadcasts: []Broadcast{{Origin: ID(from), Seq: seq, Data: fmt.Appendf(nil, "%s %d", from, seq)}}}
	}
	require.NoError(t, a.Step(time.Millisecond, bcast("src", 1)))
	first := a.attachBroadcasts("c", 1000)
	require.Len(t, first, 1, "relayed once")
	for seq := range uint64(80) {
		require.NoError(t, a.Step(2*time.Millisecond, bcast("ins", seq+1)))
	}
	assert.Len(t, a.app.queue, 16)
	var origins []ID
	for _, q := range a.app.queue {
		origins = append(origins, q.b.Origin)
	}
	assert.Contains(t, origins, ID("src"), "src's broadcast is still queued")
	one := first[0].Size()
	got := a.attachBroadcasts("d", broadcastSection+3*one+16)
	require.Len(t, got, 3)
	assert.Equal(t, Broadcast{Origin: "ins", Seq: 80, Data: []byte("ins 80")}, got[0], "the first turn: ins's newest, least sent")
	assert.Equal(t, ID("src"), got[1].Origin, "then src's, in the same turn")
	assert.Equal(t, uint64(79), got[2].Seq, "ins's second turn")
	want, counted := map[ID]int{}, map[ID]int{}
	for _, q := range a.app.queue {
		want[q.b.Origin]++
	}
	for id, n := range a.app.queued {
		counted[id] = n.n
	}
	assert.Equal(t, want, counted, "the per-origin counts follow the queue")
}
