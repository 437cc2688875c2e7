package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that missed a refutation keeps an older accusation (Suspect or
// Dead in an incarnation the accused has left behind); every other member
// ignores that accusation as stale, so only the accused can correct it. When
// the accused hears its own stale accusation (a buddy-system ping, or the
// Dead notice of a reconnect ping) it re-announces its current Alive, so the
// lagging member comes back into the common view instead of holding the
// member dead for good.
func TestStaleAccusationAnsweredWithCurrentAlive(t *testing.T) {
	v := newTest(t, "v", ModeLifeguard, nil, "q", "r")
	// v refutes a suspicion in incarnation 0 and the Alive(v, 1) is fully
	// disseminated.
	sus := Packet{Kind: MsgPing, From: node("r"), To: node("v"), Ping: Ping{Seq: 1},
		Updates: []Update{{Kind: UpdateSuspect, Node: node("v"), Incarnation: 0, From: "r"}}}
	require.NoError(t, v.Step(time.Second, &sus))
	require.Equal(t, Incarnation(1), v.Incarnation())
	for i := 0; i < 20; i++ {
		p := Packet{Kind: MsgPing, From: node("r"), To: node("v"), Ping: Ping{Seq: uint32(10 + i)}}
		require.NoError(t, v.Step(time.Second, &p))
	}
	drain(v)
	lhm := v.LocalHealthMultiplier()

	// q missed Alive(v, 1): its suspicion in incarnation 0 ran out.
	q := newTest(t, "q", ModeLifeguard, nil, "v", "r")
	q.apply(0, Update{Kind: UpdateDead, Node: node("v"), Incarnation: 0, From: "q"}, false)
	require.Equal(t, StateDead, q.State("v"))
	// q's reconnect ping to v carries Dead(v, 0).
	q.Tick(0)
	q.Tick(DefaultReconnectInterval)
	pk, _ := drain(q)
	var ping *Packet
	for i := range pk {
		if pk[i].Kind == MsgPing && pk[i].To.ID == "v" {
			ping = &pk[i]
		}
	}
	require.NotNil(t, ping, "reconnect ping to the member believed dead")
	require.True(t, hasUpdate(*ping, UpdateDead, "v", 0))
	require.NoError(t, v.Step(31*time.Second, ping))
	assert.Equal(t, Incarnation(1), v.Incarnation(), "a stale accusation is not refuted with a new incarnation")
	assert.Equal(t, lhm, v.LocalHealthMultiplier(), "nor counted against the local health")
	pk, _ = drain(v)
	require.Len(t, pk, 1)
	assert.True(t, hasUpdate(pk[0], UpdateAlive, "v", 1), "the ack re-announces the current Alive")
	require.NoError(t, q.Step(31*time.Second, &pk[0]))
	assert.Equal(t, StateAlive, q.State("v"), "q takes v back")

	// The same for a stale suspicion carried by a buddy-system ping.
	q2 := newTest(t, "q", ModeLifeguard, nil, "v", "r")
	q2.apply(0, Update{Kind: UpdateSuspect, Node: node("v"), Incarnation: 0, From: "q"}, false)
	p := Packet{Kind: MsgPing, From: node("q"), To: node("v"), Ping: Ping{Seq: 99},
		Updates: []Update{{Kind: UpdateSuspect, Node: node("v"), Incarnation: 0, From: "q"}}}
	require.NoError(t, v.Step(40*time.Second, &p))
	pk, _ = drain(v)
	require.Len(t, pk, 1)
	require.NoError(t, q2.Step(40*time.Second, &pk[0]))
	assert.Equal(t, StateAlive, q2.State("v"))
	assert.Equal(t, Incarnation(1), v.Incarnation())
}

// Dead and Left are the two final states of one incarnation, and all views
// must agree on which: a member's own leave ranks above a Dead that others
// declared, in whichever order the two arrive. (CI once saw a member that
// had declared a leaver dead under load keep Dead while the others kept
// Left.)
func TestLeaveOverridesDeadInSameIncarnation(t *testing.T) {
	leave := Update{Kind: UpdateDead, Node: node("x"), Incarnation: 2, From: "x"}
	dead := Update{Kind: UpdateDead, Node: node("x"), Incarnation: 2, From: "q"}

	a := newTest(t, "a", ModeLifeguard, nil, "x", "q")
	a.apply(0, Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 2, From: "x"}, false)
	a.apply(time.Second, dead, true)
	require.Equal(t, StateDead, a.State("x"))
	drain(a)
	a.apply(2*time.Second, leave, true)
	assert.Equal(t, StateLeft, a.State("x"), "the leave overrides Dead")
	_, ev := drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventLeave, ev[0].Kind)
	assert.Empty(t, a.tomb, "a member that left is no reconnect candidate")

	b := newTest(t, "b", ModeLifeguard, nil, "x", "q")
	b.apply(0, Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 2, From: "x"}, false)
	b.apply(time.Second, leave, true)
	drain(b)
	b.apply(2*time.Second, dead, true)
	assert.Equal(t, StateLeft, b.State("x"), "a Dead does not override the leave")
	_, ev = drain(b)
	assert.Empty(t, ev)

	// An older leave does not override a Dead of a later incarnation.
	c := newTest(t, "c", ModeLifeguard, nil, "x", "q")
	c.apply(0, Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 3, From: "x"}, false)
	c.apply(time.Second, Update{Kind: UpdateDead, Node: node("x"), Incarnation: 3, From: "q"}, true)
	c.apply(2*time.Second, leave, true)
	assert.Equal(t, StateDead, c.State("x"))
}

// A member that knows x left and hears x declared dead corrects the sender
// and the declarer: they missed the leave, whose own retransmissions may be
// over, and would otherwise keep Dead until anti-entropy (CI: one agent of
// six kept Dead for a leaver; swim/sim: about 1 leave in 40 in a group of 6).
// In the eager modes the leave goes to them at once; in every mode it is
// queued again for piggybacking.
func TestLeaveCorrectsDeadHolders(t *testing.T) {
	leave := Update{Kind: UpdateDead, Node: node("x"), Incarnation: 2, From: "x"}
	dead := Update{Kind: UpdateDead, Node: node("x"), Incarnation: 2, From: "q"}
	for _, mode := range []Mode{ModeDetector, ModeLifeguard, ModeSWIM} {
		a := newTest(t, "a", mode, nil, "x", "q", "r", "s")
		a.apply(0, Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 2, From: "x"}, false)
		a.apply(time.Second, leave, true)
		require.Equal(t, StateLeft, a.State("x"))
		a.piggyback(nil, 1<<20) // the leave's retransmissions are over
		for a.queue.byID["x"] != nil {
			a.piggyback(nil, 1<<20)
		}
		drain(a)

		g := Packet{Kind: MsgGossip, From: node("r"), To: node("a"), Updates: []Update{dead}}
		require.NoError(t, a.Step(2*time.Second, &g))
		assert.Equal(t, StateLeft, a.State("x"), "%v: a Dead does not override the leave", mode)
		pk, ev := drain(a)
		assert.Empty(t, ev)
		if mode == ModeSWIM {
			assert.Empty(t, pk, "plain SWIM corrects by piggybacking only")
		} else {
			var to []ID
			for _, p := range pk {
				require.Equal(t, MsgGossip, p.Kind)
				assert.Equal(t, []Update{leave}, p.Updates)
				to = append(to, p.To.ID)
			}
			assert.ElementsMatch(t, []ID{"r", "q"}, to, "%v: the sender and the declarer get the leave at once", mode)
		}
		ups := a.piggyback(nil, 1<<20)
		assert.Contains(t, ups, leave, "%v: the leave is gossiped again", mode)

		// A stale Dead from an earlier incarnation is corrected too: its
		// holder would accept the later leave.
		a.piggyback(nil, 1<<20)
		for a.queue.byID["x"] != nil {
			a.piggyback(nil, 1<<20)
		}
		drain(a)
		old := Packet{Kind: MsgGossip, From: node("s"), To: node("a"),
			Updates: []Update{{Kind: UpdateDead, Node: node("x"), Incarnation: 1, From: "s"}}}
		require.NoError(t, a.Step(3*time.Second, &old))
		assert.Equal(t, StateLeft, a.State("x"))
		assert.Contains(t, a.piggyback(nil, 1<<20), leave, "%v: corrected after a stale Dead", mode)

		// A view transfer is not corrected: the exchange's pull carries the leave.
		a.piggyback(nil, 1<<20)
		for a.queue.byID["x"] != nil {
			a.piggyback(nil, 1<<20)
		}
		drain(a)
		sync := Packet{Kind: MsgSync, From: node("r"), To: node("a"), Updates: []Update{dead}}
		require.NoError(t, a.Step(4*time.Second, &sync))
		pk, _ = drain(a)
		assert.Empty(t, pk)
		assert.Nil(t, a.queue.byID["x"])
	}
}
