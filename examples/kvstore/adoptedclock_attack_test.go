package kvstore

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk30d F2: a hostile member asked by Repair still shuts a member's
// writes out for good. Its piece's header moves b's clock to maxAdopted
// (allowed), so b's next write is stamped maxAdopted+1: a, whose clock is
// small, refuses it as a broadcast (MaxClockLead), and when a pulls b's
// store, the ceiling of 14f92c4 refuses it too (above maxAdopted). No path
// brings b's write to a.
func TestWriteAfterAdoptedClockReachesOthers(t *testing.T) {
	ctx, a, b := pair(t)
	b.mu.Lock()
	b.pull.want = pullReq{id: a.Agent().Self().ID, token: [tokenLen]byte{7}}
	b.mu.Unlock()
	b.receive(swim.Message{From: a.Agent().Self().ID, Data: piece(t, 7, maxAdopted)})
	require.NoError(t, b.Set(ctx, "w", "after"))
	time.Sleep(2 * time.Second)
	_, viaBroadcast := a.Get("w")

	// a pulls b's store (as Repair would): b's piece as b sends it.
	b.mu.Lock()
	e, clock := b.data["w"], b.clock
	b.mu.Unlock()
	a.mu.Lock()
	a.pull.want = pullReq{id: b.Agent().Self().ID, token: [tokenLen]byte{9}}
	a.mu.Unlock()
	a.receive(swim.Message{From: b.Agent().Self().ID, Data: piece(t, 9, clock, e)})
	_, viaPull := a.Get("w")
	assert.True(t, viaBroadcast || viaPull,
		"b's write stamped %d reached a neither by broadcast nor by pull (a rejected %d)", e.Time, a.Rejected())
}
