package swim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that starts alone and then learns a group of 128 schedules its
// first anti-entropy exchange within the interval for 128 members
// (4 × 30 s), not the 30 s of a group of one: of 200 such members (other
// random sources), about a quarter exchange in the first 30 s, and all of
// them by 120 s, rather than all of them in the first 30 s.
func TestFirstPushPullFollowsGroupSize(t *testing.T) {
	var nodes []Node
	for i := 0; i < 127; i++ {
		nodes = append(nodes, node(fmt.Sprintf("p%03d", i)))
	}
	early, total := 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		m, err := New(Config{Self: node("a"), Mode: ModeLifeguard}, rand.New(rand.NewPCG(seed, 9)))
		require.NoError(t, err)
		m.Tick(0)
		m.Bootstrap(nodes)
		first := time.Duration(-1)
		for now := time.Duration(0); now <= 121*time.Second && first < 0; now += 100 * time.Millisecond {
			m.Tick(now)
			pk, _ := drain(m)
			for _, p := range pk {
				if p.Kind == MsgJoin && !p.Digest.IsZero() {
					first = now
				}
				if p.Kind == MsgPing { // every member answers
					ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
					require.NoError(t, m.Step(now, &ack))
				}
			}
		}
		require.GreaterOrEqual(t, first, time.Duration(0), "seed %d: no exchange in 121 s", seed)
		total++
		if first < 30*time.Second {
			early++
		}
	}
	frac := float64(early) / float64(total)
	assert.InDelta(t, 0.25, frac, 0.1, "members exchanging in the first 30 s")
}

// A member that joins while it holds a group of its own (two groups
// merging: one's member joins through the other's) sends its view to the
// seed that answered, once: the seed's group learns the joiner's from
// the seed, not only when the joiner's members happen to probe its
// members. A member joining alone sends none (its view is its Alive,
// which its join carried).
func TestMergingJoinerSendsItsView(t *testing.T) {
	for _, merging := range []bool{true, false} {
		var peers []string
		if merging {
			peers = []string{"b", "c"}
		}
		a := newTest(t, "a", ModeLifeguard, nil, peers...)
		require.NoError(t, a.Join(0, []string{node("s").Addr}))
		drain(a)
		answer := &Packet{Kind: MsgSync, From: node("s"), To: node("a"), JoinToken: a.join.token,
			Updates: []Update{{Kind: UpdateAlive, Node: node("s"), From: "s"}, {Kind: UpdateAlive, Node: node("t"), From: "t"}}}
		require.NoError(t, a.Step(time.Millisecond, answer))
		pk, _ := drain(a)
		views := only(t, pk, MsgSync)
		if !merging {
			assert.Empty(t, views, "a member joining alone")
			continue
		}
		require.Len(t, views, 1)
		assert.Equal(t, node("s"), views[0].To)
		var ids []ID
		for _, u := range views[0].Updates {
			ids = append(ids, u.Node.ID)
		}
		assert.ElementsMatch(t, []ID{"a", "b", "c", "s", "t"}, ids)
		require.NoError(t, a.Step(2*time.Millisecond, answer))
		pk, _ = drain(a)
		assert.Empty(t, only(t, pk, MsgSync), "a second view from the seed")
	}
}

// The members a view adds are gossiped on (applyView) when the view is
// another group's, merging with this member's: the seed's answer to the
// join of a member that held others, and, at the seed, the view such a
// joiner sends back (onView). Joining alone, a queues nothing (the group
// holds the seed's view), nor for an exchange's view later (its new
// members are joiners already gossiped). Without it two groups merging
// learnt each other only through anti-entropy (swim/sim
// TestMergeTwoGroupsFullView).
func TestViewAddedMembersGossiped(t *testing.T) {
	queued := func(a *Member) []ID {
		var ids []ID
		for _, b := range a.queue.items {
			ids = append(ids, b.u.Node.ID)
		}
		return ids
	}
	view := func(from, to string, ids ...string) *Packet {
		pk := &Packet{Kind: MsgSync, From: node(from), To: node(to)}
		for _, id := range ids {
			pk.Updates = append(pk.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
		}
		return pk
	}
	for _, merging := range []bool{true, false} {
		var peers []string
		if merging {
			peers = []string{"b", "c"}
		}
		a := newTest(t, "a", ModeLifeguard, nil, peers...)
		require.NoError(t, a.Join(0, []string{node("s").Addr}))
		drain(a)
		a.queue.items, a.queue.byID = nil, nil
		answer := view("s", "a", "s", "t")
		answer.JoinToken = a.join.token // the seed's answer to a's join
		require.NoError(t, a.Step(time.Millisecond, answer))
		drain(a)
		if merging {
			assert.ElementsMatch(t, []ID{"s", "t"}, queued(a), "merging")
		} else {
			assert.Empty(t, queued(a), "joining alone")
		}
		a.queue.items, a.queue.byID = nil, nil
		require.NoError(t, a.Step(10*time.Second, view("s", "a", "s", "t", "u")))
		drain(a)
		assert.Empty(t, queued(a), "merging %v: an exchange's view", merging)
	}

	// The seed's side: j joins through s, then sends its view.
	s := newTest(t, "s", ModeLifeguard, nil, "b", "c")
	join := &Packet{Kind: MsgJoin, From: node("j"), To: node("s"), Updates: []Update{{Kind: UpdateAlive, Node: node("j"), From: "j"}}}
	require.NoError(t, s.Step(time.Millisecond, join))
	drain(s)
	s.queue.items, s.queue.byID = nil, nil
	require.NoError(t, s.Step(2*time.Millisecond, view("j", "s", "j", "v", "w")))
	drain(s)
	assert.ElementsMatch(t, []ID{"v", "w"}, queued(s), "the merging joiner's view")
	// The same view claiming j from another address within the period: a
	// forger's, whose members are not gossiped on.
	s.queue.items, s.queue.byID = nil, nil
	require.NoError(t, s.StepFromOtherSource(3*time.Millisecond, view("j", "s", "j", "y")))
	drain(s)
	assert.Empty(t, queued(s), "a view naming j from another address")
	s.queue.items, s.queue.byID = nil, nil
	require.NoError(t, s.Step(5*time.Second, view("j", "s", "j", "v", "w", "x")))
	drain(s)
	assert.Empty(t, queued(s), "a view from j periods later")
}
