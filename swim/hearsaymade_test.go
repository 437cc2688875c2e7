package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHearsayNotLaunderedIntoConfirmations (issue 27, atk27 F3): a
// stranger's Suspect(b) sent to a, c, d and e is, at each, that member's
// own suspicion timer, told to b only; none of them gossips it, so a
// does not count c, d and e as Lifeguard confirmations. Before, each
// gossiped it From itself, and at a the three live senders' copies took
// the deadline from the maximum (24.001 s) to the minimum (4.001 s), one
// stranger datagram per member. The members' packets of the next period
// (their first probes, with the queue) are delivered among them.
func TestHearsayNotLaunderedIntoConfirmations(t *testing.T) {
	x := Node{ID: "x", Addr: "x:1"}
	ids := []string{"a", "c", "d", "e"}
	ms := map[ID]*Member{}
	for _, id := range ids {
		var peers []string
		for _, o := range []string{"a", "b", "c", "d", "e", "f"} {
			if o != id {
				peers = append(peers, o)
			}
		}
		ms[ID(id)] = newTest(t, id, ModeLifeguard, nil, peers...)
	}
	var out []Packet
	for _, id := range ids {
		m := ms[ID(id)]
		require.NoError(t, m.Step(time.Millisecond, gossipNode(x, Update{Kind: UpdateSuspect, Node: node("b"), From: "x"})))
		pk, _ := drain(m)
		require.Equal(t, StateSuspect, m.State("b"))
		for _, p := range pk {
			if hasUpdate(p, UpdateSuspect, "b", 0) {
				assert.Equal(t, ID("b"), p.To.ID, "%s told the suspicion to b only", id)
			}
		}
		out = append(out, pk...)
		m.Tick(time.Second) // the first probe, carrying the queue
		pk, _ = drain(m)
		out = append(out, pk...)
	}
	for _, p := range out {
		if r := ms[p.To.ID]; r != nil {
			require.NoError(t, r.Step(1100*time.Millisecond, &p))
			drain(r)
		}
	}
	for _, id := range ids {
		s := ms[ID(id)].peers["b"].susp
		assert.Equal(t, 24001*time.Millisecond, s.deadline, "%s: the maximum timeout", id)
		assert.Empty(t, s.confirmers, id)
	}
}

// TestViewAccusationIsNoSelfConfirmation (issue 27, atk27 F11): a holds
// b suspect from c's suspicion. A view transfer naming b suspect at the
// same incarnation, from a stranger or from a live member, changes
// nothing: it is no confirmation by a itself (the view path took it as
// a's own suspicion, and the confirmation counted a: deadline 24.001 s ->
// 11.382 s, confirmers [a]). The same view above the held incarnation
// keeps the timer (atk27 F1) and, from the live member only, raises the
// held incarnation (rv27).
func TestViewAccusationIsNoSelfConfirmation(t *testing.T) {
	for _, from := range []Node{{ID: "x", Addr: "x:1"}, node("d")} {
		for _, inc := range []Incarnation{0, 1} {
			a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
			a.Tick(0)
			require.NoError(t, a.Step(time.Millisecond, gossipFrom("c", Update{Kind: UpdateSuspect, Node: node("b"), From: "c"})))
			drain(a)
			p := a.peers["b"]
			view := &Packet{Kind: MsgSync, From: from, To: a.Self(), Updates: []Update{
				{Kind: UpdateAlive, Node: from, From: from.ID},
				{Kind: UpdateSuspect, Node: node("b"), Incarnation: inc, From: "y"}}}
			require.NoError(t, a.Step(2*time.Millisecond, view))
			pk, evs := drain(a)
			assert.Equal(t, 24001*time.Millisecond, p.susp.deadline, "%s at %d", from.ID, inc)
			assert.Empty(t, p.susp.confirmers, "%s at %d", from.ID, inc)
			if from.ID == "d" {
				assert.Equal(t, inc, p.inc)
			} else {
				assert.Zero(t, p.inc, "a stranger's raise ignored")
			}
			assert.Empty(t, eventsAbout(evs, "b"))
			for _, pt := range pk {
				assert.False(t, pt.To.ID != "b" && hasUpdate(pt, UpdateSuspect, "b", inc), "%s at %d: not gossiped to %s", from.ID, inc, pt.To.ID)
			}
		}
	}
}

// TestOwnProbeMakesHearsaySuspicionOwn: a suspicion a made from a
// stranger's hearsay becomes a's own word when a's own probe of the
// suspect fails: counted in Stats.Suspicions, queued and sent to the
// suspect, From a, as after any failed probe, at the timer already
// running (start 100 ms, deadline 24.1 s), with no confirmation by a
// itself.
func TestOwnProbeMakesHearsaySuspicionOwn(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To
	require.NoError(t, a.Step(100*time.Millisecond, gossipNode(Node{ID: "x", Addr: "x:1"},
		Update{Kind: UpdateSuspect, Node: target, From: "x"})))
	drain(a)
	p := a.peers[target.ID]
	require.True(t, p.susp.hearsay)
	assert.Nil(t, a.queue.byID[target.ID], "hearsay is not queued")
	assert.Equal(t, 0, a.Stats().Suspicions)

	a.Tick(500 * time.Millisecond) // ping-reqs
	drain(a)
	a.Tick(time.Second) // no answer: the probe fails
	pk, _ = drain(a)
	assert.False(t, p.susp.hearsay)
	assert.Equal(t, 1, a.Stats().Suspicions)
	own := Update{Kind: UpdateSuspect, Node: target, From: "a"}
	require.NotNil(t, a.queue.byID[target.ID])
	assert.Equal(t, own, a.queue.byID[target.ID].u)
	assert.Contains(t, pk, Packet{Kind: MsgGossip, From: node("a"), To: target, Updates: []Update{own}})
	assert.Equal(t, 100*time.Millisecond, p.susp.start)
	assert.Equal(t, 24100*time.Millisecond, p.susp.deadline)
	assert.Empty(t, p.susp.confirmers)
}

// TestHearsaySuspicionsPerPeriod (issue 27, atk27 F15): at most three
// suspicions are made from hearsay and view transfers in a protocol
// period, each sent to its suspect; the others are dropped
// (Stats.HearsayDropped) and the members stay alive. The next period
// has a new budget. A stranger's spray made every member suspect every
// other one and send each suspicion at once, and every suspect refute.
func TestHearsaySuspicionsPerPeriod(t *testing.T) {
	peers := []string{"b", "c", "d", "e", "f", "g"}
	a := newTest(t, "a", ModeLifeguard, nil, peers...)
	a.Tick(0)
	drain(a)
	x := Node{ID: "x", Addr: "x:1"}
	var ups []Update
	for _, id := range peers {
		ups = append(ups, Update{Kind: UpdateSuspect, Node: node(id), From: "x"})
	}
	require.NoError(t, a.Step(time.Millisecond, gossipNode(x, ups[:4]...)))
	view := &Packet{Kind: MsgSync, From: x, Updates: append([]Update{{Kind: UpdateAlive, Node: x, From: "x"}}, ups[4:]...)}
	require.NoError(t, a.Step(2*time.Millisecond, view))
	pk, _ := drain(a)
	var suspects, told []ID
	for _, id := range peers {
		if a.State(ID(id)) == StateSuspect {
			suspects = append(suspects, ID(id))
		}
	}
	for _, p := range only(t, pk, MsgGossip) {
		told = append(told, p.To.ID)
	}
	assert.Equal(t, []ID{"b", "c", "d"}, suspects)
	assert.Equal(t, []ID{"b", "c", "d"}, told)
	assert.Equal(t, 3, a.Stats().HearsayDropped)

	// The next protocol period: three more.
	a.Tick(time.Second)
	drain(a)
	require.NoError(t, a.Step(time.Second+time.Millisecond, view))
	assert.Equal(t, StateSuspect, a.State("f"))
	assert.Equal(t, StateSuspect, a.State("g"))
	assert.Equal(t, 3, a.Stats().HearsayDropped)
}
