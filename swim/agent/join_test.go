package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// Join returns when the answer is processed, not at the next poll: the
// joiner's TickInterval is an hour, so a Join that waited for a timer
// between its checks would run into the context's deadline. The join event
// of the member that answered is already published when Join returns.
func TestJoinReturnsOnAnswer(t *testing.T) {
	seed := start(t, Config{})
	joiner := start(t, Config{TickInterval: time.Hour})
	events, cancelSub := joiner.Subscribe(64)
	defer cancelSub()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, joiner.Join(ctx, seed.Self().Addr))
	got := false
	for !got {
		select {
		case e := <-events:
			got = e.Kind == swim.EventJoin && e.Node.ID == seed.Self().ID
		default:
			t.Fatal("Join returned before the join event of the member that answered was published")
		}
	}
	// A second Join when a member is already known returns at once.
	require.NoError(t, joiner.Join(ctx, seed.Self().Addr))
}

// A Join whose context ends leaves no waiter behind.
func TestJoinTimeoutForgetsWaiter(t *testing.T) {
	a := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, a.Join(ctx, "127.0.0.1:9"), context.DeadlineExceeded)
	n := -1
	require.NoError(t, a.do(context.Background(), func() { n = len(a.joinWaiters) }))
	require.Equal(t, 0, n)
}
