package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEndedContextRunsNothing (atk27 F12): a method called with a context
// that has already ended does nothing and returns the context's error.
// Before, the agent's call picked at random between handing the work over
// and the ended context, so about half of 200 Broadcasts on an idle agent
// were queued and returned nil.
func TestEndedContextRunsNothing(t *testing.T) {
	a := start(t, Config{Plain: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		require.ErrorIs(t, a.Broadcast(ctx, "", []byte("x")), context.Canceled, "Broadcast %d", i)
		require.ErrorIs(t, a.SetMeta(ctx, []byte("m")), context.Canceled, "SetMeta %d", i)
		if i%20 == 0 {
			time.Sleep(time.Millisecond) // the agent idle, its request channel ready
		}
	}
	assert.Zero(t, a.Stats().Protocol.BroadcastsQueued)
}

// TestSendToSelf (atk27 F9): a message to this member's own ID or address
// fails with ErrToSelf. Before, SendTo and SendReliable said "no such live
// member" of a member Members() lists alive, and SendToAddress to the
// member's own address returned nil and delivered nothing.
func TestSendToSelf(t *testing.T) {
	a := start(t, Config{Plain: true})
	ctx := context.Background()
	assert.ErrorIs(t, a.SendTo(ctx, a.Self().ID, []byte("x")), ErrToSelf)
	assert.ErrorIs(t, a.SendReliable(ctx, a.Self().ID, []byte("x")), ErrToSelf)
	assert.ErrorIs(t, a.SendToAddress(ctx, a.Self().Addr, []byte("x")), ErrToSelf)
}
