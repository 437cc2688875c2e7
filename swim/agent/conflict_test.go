package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestDuplicateIDRefused: an agent started with an ID already in use is
// refused at join: its Join fails with a message naming the holder, the
// member it asked reports swim.EventConflict, and when the newcomer stops,
// nobody believes the original left.
func TestDuplicateIDRefused(t *testing.T) {
	as := group(t, 3, Config{})
	events, cancel := as[0].Subscribe(64)
	defer cancel()
	dup := start(t, Config{ID: as[1].Self().ID})
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	err := dup.Join(ctx, as[0].Self().Addr)
	require.Error(t, err)
	assert.ErrorContains(t, err, "already held by the member at "+as[1].Self().Addr)
	var seen bool
	for !seen {
		select {
		case e := <-events:
			seen = e.Kind == swim.EventConflict && e.Held == as[1].Self()
		case <-time.After(5 * time.Second):
			t.Fatal("no conflict event at the seed")
		}
	}
	require.NoError(t, dup.Close())
	time.Sleep(200 * time.Millisecond) // the newcomer's leave, if any, would be out by now
	for _, a := range []*Agent{as[0], as[2]} {
		assert.Contains(t, []swim.State{swim.StateAlive, swim.StateSuspect}, state(a, as[1].Self().ID))
	}
}

// TestConflictNotStickyForHolder: a newcomer claiming a member's own ID
// through that member is refused there, and the member (the ID's holder)
// stays free to join again later (to rejoin after a partition): the refused
// claim does not make its own later Join fail as if its ID were taken.
func TestConflictNotStickyForHolder(t *testing.T) {
	as := group(t, 2, Config{})
	dup := start(t, Config{ID: as[0].Self().ID})
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	err := dup.Join(ctx, as[0].Self().Addr)
	require.Error(t, err)
	assert.ErrorContains(t, err, "already held by the member at "+as[0].Self().Addr)
	require.NoError(t, dup.Close())
	ctx2, stop2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop2()
	assert.NoError(t, as[0].Join(ctx2, as[1].Self().Addr), "the holder's own Join")
}

// TestJoinRefusedAgain: a second Join refused for the same conflict fails
// with the refusal too, as the first did, instead of running to its
// deadline: fdswim retries a refused join every 0.5 to 8 s while the
// holder (perhaps this member's own crashed process) is still alive.
// A state machine that reported one conflicting pair once per ten periods
// would let the second refusal go unread.
func TestJoinRefusedAgain(t *testing.T) {
	as := group(t, 2, Config{})
	// 1 s periods: one pair reported once per 10 s would come past the 5 s
	// given to each Join here; the refusal itself comes in milliseconds.
	slow := swim.Config{ProbeInterval: time.Second, ProbeTimeout: 500 * time.Millisecond}
	dup := start(t, Config{ID: as[1].Self().ID, Protocol: slow})
	for attempt := 1; attempt <= 3; attempt++ {
		ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		err := dup.Join(ctx, as[0].Self().Addr)
		stop()
		var ce *ConflictError
		require.ErrorAs(t, err, &ce, "attempt %d", attempt)
		assert.Equal(t, as[1].Self(), ce.Holder, "attempt %d", attempt)
	}
	require.NoError(t, dup.Close())
}
