package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// With BlockingDelivery, a subscriber with a one-slot channel that reads
// slowly still gets every event and every message, and nothing is counted
// dropped; without it, the same subscriber loses some (TestSlowSubscriberDropsEvents).
func TestBlockingDeliveryLosesNothing(t *testing.T) {
	as := group(t, 2, Config{Plain: true, BlockingDelivery: true})
	msgs, cancelMsgs := as[1].Receive(1)
	defer cancelMsgs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const n = 20
	for i := range n {
		require.NoError(t, as[0].SendTo(ctx, as[1].Self().ID, []byte{byte(i)}))
	}
	for i := range n {
		select {
		case m := <-msgs:
			assert.Equal(t, []byte{byte(i)}, m.Data)
		case <-ctx.Done():
			t.Fatalf("message %d of %d never came", i, n)
		}
		time.Sleep(5 * time.Millisecond) // slower than the sender
	}
	assert.Zero(t, as[1].Stats().MessagesDropped)

	ev, cancelEv := as[0].Subscribe(1)
	defer cancelEv()
	third := start(t, Config{Plain: true, BlockingDelivery: true})
	require.NoError(t, third.Join(ctx, as[0].Self().Addr))
	require.NoError(t, third.Shutdown())
	var kinds []swim.EventKind
	for len(kinds) == 0 || kinds[len(kinds)-1] != swim.EventDead {
		select {
		case e := <-ev:
			if e.Node.ID == third.Self().ID {
				kinds = append(kinds, e.Kind)
			}
			time.Sleep(20 * time.Millisecond)
		case <-ctx.Done():
			t.Fatalf("events seen: %v", kinds)
		}
	}
	assert.Equal(t, swim.EventJoin, kinds[0], "%v", kinds)
	assert.Zero(t, as[0].Stats().EventsDropped)
}
