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
	periodsFrom(t, as[0], as[2])(3) // the newcomer's leave, if any, would be out by now
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

// A newcomer's join under this member's ID, refused while this member's
// own Join waits for its seed, does not fail that Join: this member holds
// the ID (swim.Member.JoinConflict). The seed's view completes it.
func TestHolderJoinNotRefusedByNewcomer(t *testing.T) {
	a := start(t, Config{Plain: true})
	seed, newcomer := newPlainPeer(t), newPlainPeer(t)
	res := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res <- a.Join(ctx, seed.addr())
	}()
	read := func(p *plainPeer, kind swim.MessageKind) *swim.Packet {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case d := <-p.conn.Packets():
				if pk, err := p.codec.Decode(d.Data); err == nil && pk.Kind == kind {
					return pk
				}
			case <-deadline:
				t.Fatalf("no %v came", kind)
			}
		}
	}
	token := read(seed, swim.MsgJoin).JoinToken // the join's, which the seed's view echoes
	claim := swim.Node{ID: a.Self().ID, Addr: newcomer.addr()}
	newcomer.send(t, a, &swim.Packet{Kind: swim.MsgJoin, From: claim, To: swim.Node{Addr: a.Self().Addr},
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: claim, From: claim.ID}}})
	read(newcomer, swim.MsgSync) // the refusal: the holder's own entry
	require.Eventually(t, func() bool { return a.Stats().Protocol.Conflicts > 0 }, 10*time.Second, 10*time.Millisecond,
		"the newcomer's join is refused")
	require.NoError(t, a.do(context.Background(), func() {})) // the conflict is published
	select {
	case err := <-res:
		t.Fatalf("Join returned (%v) before its seed answered", err)
	case <-time.After(500 * time.Millisecond):
	}
	self := swim.Node{ID: "seed", Addr: seed.addr()}
	seed.send(t, a, &swim.Packet{Kind: swim.MsgSync, From: self, To: a.Self(), JoinToken: token,
		Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: self, From: self.ID}}})
	select {
	case err := <-res:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the seed's view did not complete the Join")
	}
}

// A Join refused for an ID conflict stops the join's resends when it
// returns, as a Join whose context ends does: in the five periods after
// the *ConflictError the newcomer sends nothing and the seed counts no
// further conflict (user46 P2: before, the join kept going out once per
// ProbeInterval, 14 in 3 s, each a conflict at the seed, and the newcomer
// was admitted by itself once the holder died, with no Join call in
// progress). The error's text names both ways out (user46 P3).
func TestConflictStopsJoinResends(t *testing.T) {
	as := group(t, 2, Config{})
	dup := start(t, Config{ID: as[1].Self().ID})
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	err := dup.Join(ctx, as[0].Self().Addr)
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorContains(t, err, "start this member with another ID")
	assert.ErrorContains(t, err, "retry the Join")
	// Packets already on their way (a resend at the very tick of the
	// refusal) are let through before counting.
	periodsFrom(t, as[0])(1)
	sent, conflicts := dup.Stats().PacketsSent, as[0].Stats().Protocol.Conflicts
	periodsFrom(t, as[0])(5)
	assert.Equal(t, sent, dup.Stats().PacketsSent, "packets the refused newcomer sent after its Join returned")
	assert.Equal(t, conflicts, as[0].Stats().Protocol.Conflicts, "conflicts at the seed after the Join returned")
	ctx2, stop2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop2()
	require.ErrorAs(t, dup.Join(ctx2, as[0].Self().Addr), &ce, "a second Join is sent and refused again")
}
