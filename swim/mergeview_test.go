package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that joins through a seed of another group (merging) queues
// the members the seed's view adds, news to its own group (applyView),
// and piggybacks them to its own group's members only: sent to the
// members that view brought, which hold them all, they were spent there
// (swim/sim: a block of the first group unknown to most of the second for
// minutes). A newer update about one of them (its refutation) goes to
// everyone.
func TestMergedViewNotPiggybackedToItsGroup(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	drain(a)
	a.queue.items, a.queue.byID = nil, nil
	answer := &Packet{Kind: MsgSync, From: node("s"), To: node("a"), JoinToken: a.join.token}
	for _, id := range []string{"s", "t", "u"} {
		answer.Updates = append(answer.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
	}
	require.NoError(t, a.Step(time.Millisecond, answer))
	drain(a)
	for _, id := range []ID{"s", "t", "u"} {
		require.True(t, a.peers[id].verified, "%s vouched for by the seed's view", id)
	}
	carried := func(to string) []ID {
		a.send(Packet{Kind: MsgPing, To: node(to), Ping: Ping{Seq: 7}})
		pk, _ := drain(a)
		require.Len(t, pk, 1)
		var ids []ID
		for _, u := range pk[0].Updates {
			ids = append(ids, u.Node.ID)
		}
		return ids
	}
	limit := retransmitLimit(a.cfg.RetransmitMult, a.groupSize())
	require.Greater(t, limit, 1)
	for range 2 * limit {
		for _, to := range []string{"s", "t", "u"} {
			assert.Empty(t, carried(to), "to %s, of the seed's group", to)
		}
	}
	require.Len(t, a.queue.items, 3, "nothing spent on the seed's group")
	assert.ElementsMatch(t, []ID{"s", "t", "u"}, carried("b"), "to b, of a's group")
	for range limit - 1 {
		carried("c")
	}
	assert.Empty(t, a.queue.items, "λ·ceil(log10(n+1)) copies to a's group")

	a.enqueue(Update{Kind: UpdateAlive, Node: node("t"), Incarnation: 1, From: "t"})
	assert.Equal(t, []ID{"t"}, carried("u"), "a newer update about t, to the seed's group")
}

// TestViewMarksClearedOnceSpent: a stream of joiners from distinct
// addresses, each sending a view of its own group (a view source whose
// join this member answered, spreadsView) with one member new to this
// one, marks each new member with the view that brought it (peer.viewOf).
// The marks are bounded by the view (MaxMembers), here by the unverified
// members it may hold (unverifiedQuota, 64: the first 32 sources and
// their members), and cleared on every member once the queue holds no
// entry of any such view: kept, they outlived the entries they served,
// held the IDs of senders long gone, and kept a later view of the same
// source from the members the first had brought.
func TestViewMarksClearedOnceSpent(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	a.Tick(0)
	drain(a)
	marked := func() (n int) {
		for _, p := range a.all {
			if p.viewOf != "" {
				n++
			}
		}
		return n
	}
	now := time.Millisecond
	for i := range 100 {
		g := Node{ID: ID(fmt.Sprintf("g%d", i)), Addr: fmt.Sprintf("10.9.%d.1:7946", i)}
		h := Node{ID: ID(fmt.Sprintf("h%d", i)), Addr: fmt.Sprintf("10.8.%d.1:7946", i)}
		require.NoError(t, a.Step(now, &Packet{Kind: MsgJoin, From: g, To: a.Self(), Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
		drain(a)
		require.NoError(t, a.Step(now, &Packet{Kind: MsgSync, From: g, To: a.Self(), Updates: []Update{
			{Kind: UpdateAlive, Node: g, From: g.ID}, {Kind: UpdateAlive, Node: h, From: h.ID}}}))
		drain(a)
		if q := a.peers[h.ID]; q != nil {
			require.Equal(t, g.ID, q.viewOf, "%s brought by %s's view", h.ID, g.ID)
		}
		require.LessOrEqual(t, marked(), unverifiedFloor, "source %d", i)
	}
	require.Equal(t, 32, marked(), "the first 32 sources' members, 64 unverified with theirs")
	for range 1000 {
		if len(a.queue.items) == 0 {
			break
		}
		a.send(Packet{Kind: MsgPing, To: node("b"), Ping: Ping{Seq: 8}})
		drain(a)
	}
	require.Empty(t, a.queue.items)
	assert.Zero(t, marked(), "cleared once no view's entry is queued")
	assert.False(t, a.queue.viewMarked)
}
