package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relayedBroadcasts is a MsgGossip from `from` carrying k one-byte
// broadcasts from the origins o<first>..o<first+k-1>, numbered 1.
func relayedBroadcasts(from string, first, k int) *Packet {
	pk := &Packet{Kind: MsgGossip, From: node(from)}
	for i := range k {
		pk.Broadcasts = append(pk.Broadcasts, Broadcast{Origin: ID(fmt.Sprintf("o%d", first+i)), Seq: 1, Data: []byte("f")})
	}
	return pk
}

// queued lists the data of a's queued broadcasts, in queue order.
func queued(a *Member) []string {
	var out []string
	for _, q := range a.app.queue {
		out = append(out, string(q.b.Data))
	}
	return out
}

// TestOwnBroadcastsOutliveRelayedFlood (issue 27, user46 M1): a queue of
// 4 holds a's two broadcasts; ten relayed ones from b (held alive) arrive
// in one packet. All ten are delivered; the queue drops the eight
// relayed ones that do not fit (the oldest first among the unsent), never
// a's own: it ends with own-1, own-2, and the two newest relayed, o8 and
// o9. a's next packet carries its own first (newest first), then the
// relayed ones. Before, each arrival past the fourth dropped the oldest
// unsent, a's own first: the queue ended with o6..o9 and a's writes were
// lost with Broadcast's nil.
func TestOwnBroadcastsOutliveRelayedFlood(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxQueuedBroadcasts = 4 }, "b", "c", "d")
	require.NoError(t, a.Broadcast("", []byte("own-1")))
	require.NoError(t, a.Broadcast("", []byte("own-2")))
	require.NoError(t, a.Step(time.Millisecond, relayedBroadcasts("b", 0, 10)))
	r := a.Ready()
	assert.Len(t, r.Messages, 10, "every relayed broadcast delivered")
	assert.Equal(t, []string{"own-1", "own-2", "f", "f"}, queued(a))
	assert.Equal(t, []ID{"o8", "o9"}, []ID{a.app.queue[2].b.Origin, a.app.queue[3].b.Origin})
	st := a.Stats()
	assert.Equal(t, 8, st.BroadcastsDropped)
	assert.Zero(t, st.BroadcastsOwnDropped)

	a.send(Packet{Kind: MsgPing, To: node("c")})
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	var got []string
	for _, b := range pk[0].Broadcasts {
		got = append(got, string(b.Origin)+":"+string(b.Data))
	}
	assert.Equal(t, []string{"a:own-2", "a:own-1", "o9:f", "o8:f"}, got)
}

// TestOwnBroadcastsFirstWhenSent: this member's own broadcasts go first
// in a packet whatever their send counts; among each kind the least sent
// first, newest first among equals. BroadcastBudget 59 holds two: the
// 7-byte section, a's own (20 bytes: origin "a", number, no key, "own")
// and one relayed (19), after which fewer than 32 bytes are left. a's
// own, sent once to b, still goes first to c, then the newest of the
// relayed ones never sent (o2); before, the two relayed ones o2 and o1,
// at 0 sends, went and a's own waited.
func TestOwnBroadcastsFirstWhenSent(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.BroadcastBudget = 59 }, "b", "c", "d")
	require.NoError(t, a.Broadcast("", []byte("own")))
	a.send(Packet{Kind: MsgPing, To: node("b")})
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	require.Len(t, pk[0].Broadcasts, 1)
	require.NoError(t, a.Step(time.Millisecond, relayedBroadcasts("b", 0, 3)))
	drain(a)
	a.send(Packet{Kind: MsgPing, To: node("c")})
	pk, _ = drain(a)
	require.Len(t, pk, 1)
	var got []ID
	for _, b := range pk[0].Broadcasts {
		got = append(got, b.Origin)
	}
	assert.Equal(t, []ID{"a", "o2"}, got)
}

// TestOwnBroadcastDropped: this member's own broadcast is dropped only
// when its own fill the queue (counted in BroadcastsOwnDropped as well as
// BroadcastsDropped); a relayed one arriving then is delivered and
// dropped itself, and a relayed one in the queue goes before any own.
func TestOwnBroadcastDropped(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxQueuedBroadcasts = 2 }, "b", "c")
	for i := range 3 {
		require.NoError(t, a.Broadcast("", fmt.Appendf(nil, "own-%d", i)))
	}
	assert.Equal(t, []string{"own-1", "own-2"}, queued(a), "the oldest unsent own one went")
	st := a.Stats()
	assert.Equal(t, 1, st.BroadcastsDropped)
	assert.Equal(t, 1, st.BroadcastsOwnDropped)

	require.NoError(t, a.Step(time.Millisecond, relayedBroadcasts("b", 0, 1)))
	assert.Len(t, a.Ready().Messages, 1, "delivered")
	assert.Equal(t, []string{"own-1", "own-2"}, queued(a), "not queued over a's own")
	st = a.Stats()
	assert.Equal(t, 2, st.BroadcastsDropped)
	assert.Equal(t, 1, st.BroadcastsOwnDropped)

	b := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxQueuedBroadcasts = 2 }, "b", "c")
	require.NoError(t, b.Broadcast("", []byte("own-0")))
	require.NoError(t, b.Step(time.Millisecond, relayedBroadcasts("b", 0, 1)))
	require.NoError(t, b.Broadcast("", []byte("own-1")))
	assert.Equal(t, []string{"own-0", "own-1"}, queued(b), "the relayed one went")
	st = b.Stats()
	assert.Equal(t, 1, st.BroadcastsDropped)
	assert.Zero(t, st.BroadcastsOwnDropped)
}

// TestStrangersBroadcastsNotRelayed: broadcasts in a packet whose sender
// a does not hold alive or suspect at the address it came from (a
// stranger, a member's ID sent from elsewhere, a member held dead) are
// delivered and not passed on (Stats.BroadcastsUnrelayed) when they fill
// a gap below the highest number a delivered from their origin, and
// dropped otherwise (Stats.BroadcastsUnvouched): from an origin a has
// none from, or above its highest, where they would raise its window
// over the origin's genuine numbers (issue 27, atk27 F2). From b, held
// alive at its address, they are queued to pass on, and an origin's
// number above the dropped ones is delivered.
func TestStrangersBroadcastsNotRelayed(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	require.NoError(t, a.Step(time.Millisecond, gossipFrom("c", Update{Kind: UpdateDead, Node: node("d"), From: "c"})))
	drain(a)
	o := func(from string, seq uint64) *Packet {
		return &Packet{Kind: MsgGossip, From: node(from), Broadcasts: []Broadcast{{Origin: "o", Seq: seq, Data: fmt.Appendf(nil, "%d", seq)}}}
	}
	require.NoError(t, a.Step(2*time.Millisecond, relayedBroadcasts("x", 0, 3)))
	require.NoError(t, a.StepFromOtherSource(2*time.Millisecond, relayedBroadcasts("b", 3, 2)))
	require.NoError(t, a.Step(2*time.Millisecond, relayedBroadcasts("d", 5, 1)))
	assert.Empty(t, a.Ready().Messages, "origins a has nothing from")
	assert.Equal(t, 6, a.Stats().BroadcastsUnvouched)

	require.NoError(t, a.Step(3*time.Millisecond, o("b", 5))) // o's window at 5
	require.NoError(t, a.Step(3*time.Millisecond, o("x", 3)))
	require.NoError(t, a.StepFromOtherSource(3*time.Millisecond, o("b", 4)))
	require.NoError(t, a.Step(3*time.Millisecond, o("d", 1<<40)))
	require.NoError(t, a.Step(3*time.Millisecond, o("x", 6)))
	var got []string
	for _, m := range a.Ready().Messages {
		got = append(got, string(m.Data))
	}
	assert.Equal(t, []string{"5", "3", "4"}, got, "gaps below 5 delivered; 2^40 and 6 above it dropped")
	assert.Equal(t, 2, a.Stats().BroadcastsUnrelayed)
	assert.Equal(t, 8, a.Stats().BroadcastsUnvouched)
	assert.Len(t, a.app.queue, 1, "only b's is passed on")

	require.NoError(t, a.Step(4*time.Millisecond, o("b", 6)))
	assert.Len(t, a.Ready().Messages, 1, "o's next number, from b: not silenced")
	assert.Len(t, a.app.queue, 2)
}

// TestLiveOriginsBeforeMadeUp: among relayed broadcasts, those whose
// origin a holds alive go before, and are dropped after, those of origins
// not in the view: a member of the group flooding broadcasts under
// made-up origins does not crowd out the other members' (the insider of
// TestStrangerBroadcastFloodKeepsOwn). A queue of 3 holds a's own, c's
// (relayed by b) and the newest of five from made-up origins.
func TestLiveOriginsBeforeMadeUp(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxQueuedBroadcasts = 3 }, "b", "c", "d")
	require.NoError(t, a.Broadcast("", []byte("own")))
	pk := relayedBroadcasts("b", 0, 5)
	pk.Broadcasts = append([]Broadcast{{Origin: "c", Seq: 1, Data: []byte("c's")}}, pk.Broadcasts...)
	require.NoError(t, a.Step(time.Millisecond, pk))
	assert.Len(t, a.Ready().Messages, 6)
	assert.Equal(t, []string{"own", "c's", "f"}, queued(a))
	assert.Equal(t, ID("o4"), a.app.queue[2].b.Origin)
	assert.Equal(t, 4, a.Stats().BroadcastsDropped)

	a.send(Packet{Kind: MsgPing, To: node("d")})
	out, _ := drain(a)
	require.Len(t, out, 1)
	var got []ID
	for _, b := range out[0].Broadcasts {
		got = append(got, b.Origin)
	}
	assert.Equal(t, []ID{"a", "c", "o4"}, got)
}

// TestDeclaredMembersOwnBroadcastDelivered: a holds b dead (b paused, or
// cut off, past its suspicion timeout) and b, resumed before it heard of
// the declaration, broadcasts. Its broadcast rides on its next packet to
// a, from the address a holds it at; a delivers it and does not pass it
// on (Stats.BroadcastsUnrelayed), as a sender's own word about its own
// numbers. b counts a as reached and drops the broadcast from its queue,
// so one dropped at a (Stats.BroadcastsUnvouched, as from a stranger,
// since 07203c7) was lost for good: in a group of two, or wherever every
// member held b dead.
func TestDeclaredMembersOwnBroadcastDelivered(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	b := newTest(t, "b", ModeLifeguard, nil, "a")
	a.apply(0, Update{Kind: UpdateDead, Node: node("b"), From: "a"}, false)
	require.Equal(t, StateDead, a.State("b"))
	drain(a)
	require.NoError(t, b.Broadcast("", []byte("w")))
	b.send(Packet{Kind: MsgPing, To: node("a")})
	pk, _ := drain(b)
	require.Len(t, pk, 1)
	require.Len(t, pk[0].Broadcasts, 1)
	assert.Empty(t, queued(b), "a counted as reached: b sends no other copy")
	require.NoError(t, a.Step(time.Millisecond, &pk[0]))
	var got []string
	for _, m := range a.Ready().Messages {
		got = append(got, string(m.Data))
	}
	assert.Equal(t, []string{"w"}, got)
	assert.Equal(t, 1, a.Stats().BroadcastsUnrelayed)
	assert.Zero(t, a.Stats().BroadcastsUnvouched)
	assert.Empty(t, a.app.queue, "not passed on")
}
