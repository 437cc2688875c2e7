package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Join through a known member: the joiner gets the view, the known member
// gossips the joiner.
func TestJoin(t *testing.T) {
	b := newTest(t, "b", ModeLifeguard, nil, "c", "d")
	a := newTest(t, "a", ModeLifeguard, nil)
	require.ErrorIs(t, a.Join(0, nil), ErrNoSeeds)
	require.NoError(t, a.Join(0, []string{"b:7946"}))
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	assert.Equal(t, MsgJoin, pk[0].Kind)
	assert.Equal(t, ID(""), pk[0].To.ID)
	require.NoError(t, b.Step(time.Millisecond, &pk[0]))
	out, ev := drain(b)
	require.Len(t, ev, 1)
	assert.Equal(t, EventJoin, ev[0].Kind)
	syncs := only(t, out, MsgSync)
	require.Len(t, syncs, 1)
	for _, s := range syncs {
		require.NoError(t, a.Step(2*time.Millisecond, &s))
	}
	assert.Equal(t, 4, a.NumAlive())
	_, ev = drain(a)
	assert.Len(t, ev, 3)
	// The joiner answers b's challenge (receipt.go), and b now
	// piggybacks the joiner's Alive.
	answerChallenge(t, b, a, 3*time.Millisecond, out)
	b.Tick(time.Second)
	out, _ = drain(b)
	assert.True(t, hasUpdate(only(t, out, MsgPing)[0], UpdateAlive, "a", 0))
	// a no longer resends joins.
	a.Tick(2 * time.Second)
	out, _ = drain(a)
	assert.Empty(t, only(t, out, MsgJoin))
}

// Voluntary leave: the Dead-from-self update spreads, receivers record a
// leave (not a failure), and the member stops after the retransmit limit.
func TestLeave(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	b := newTest(t, "b", ModeLifeguard, nil, "a")
	require.NoError(t, a.Leave(0))
	assert.ErrorIs(t, a.Leave(0), ErrLeft)
	pk, _ := drain(a)
	require.Len(t, pk, 1, "the leave goes at once to GossipFanout members (b only here)")
	assert.Equal(t, MsgGossip, pk[0].Kind)
	require.True(t, hasUpdate(pk[0], UpdateDead, "a", 0))
	require.NoError(t, b.Step(time.Millisecond, &pk[0]))
	_, ev := drain(b)
	require.Len(t, ev, 1)
	assert.Equal(t, EventLeave, ev[0].Kind)
	assert.Equal(t, StateLeft, b.State("a"))
	a.Tick(0)
	pk, _ = drain(a)
	require.Len(t, pk, 1)
	require.True(t, hasUpdate(pk[0], UpdateDead, "a", 0), "and is piggybacked")
	for i := 1; i < 10 && !a.Left(); i++ {
		a.Tick(time.Duration(i) * time.Second)
		drain(a)
	}
	assert.True(t, a.Left())
	_, ok := a.NextDeadline()
	assert.False(t, ok)
	// A leaving member does not refute its own leave.
	assert.Equal(t, Incarnation(0), a.Incarnation())

	// Plain SWIM only piggybacks it.
	s := newTest(t, "s", ModeSWIM, nil, "b")
	require.NoError(t, s.Leave(0))
	pk, _ = drain(s)
	assert.Empty(t, pk)
}

// A packet from a member believed dead gets the Dead update back, so that
// a live member cut off by a partition refutes it.
func TestDeadNotice(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	a.apply(0, Update{Kind: UpdateDead, Node: node("b"), Incarnation: 4, From: "c"}, false)
	p := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: 5}}
	require.NoError(t, a.Step(time.Second, &p))
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	assert.True(t, hasUpdate(pk[0], UpdateDead, "b", 4))
	b := newTest(t, "b", ModeLifeguard, nil, "a")
	require.NoError(t, b.Step(time.Second, &pk[0]))
	assert.Equal(t, Incarnation(5), b.Incarnation())
}

// TestLeaveAlone: a member with no other live member has nobody to tell
// of its leave: it has left at once, instead of holding its leave queued
// until the leave deadline (an fdswim agent alone took its whole
// --leave-timeout to stop).
func TestLeaveAlone(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Leave(0))
	assert.True(t, a.Left())
	_, ok := a.NextDeadline()
	assert.False(t, ok)

	b := newTest(t, "b", ModeLifeguard, nil, "c")
	b.apply(0, Update{Kind: UpdateDead, Node: node("c"), Incarnation: 0, From: "b"}, false)
	require.NoError(t, b.Leave(time.Second))
	assert.True(t, b.Left(), "its only peer is dead")
}
