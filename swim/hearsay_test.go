package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventsAbout returns the kinds of the events about id, in order.
func eventsAbout(evs []Event, id ID) []EventKind {
	var ks []EventKind
	for _, e := range evs {
		if e.Node.ID == id {
			ks = append(ks, e.Kind)
		}
	}
	return ks
}

// gossipNode is gossipFrom from a node at any address.
func gossipNode(from Node, us ...Update) *Packet {
	return &Packet{Kind: MsgGossip, From: from, Updates: us}
}

// TestStrangersDeadIsSuspicion (issue 27, user46 M3): a Dead about a live
// member, gossiped by a sender a does not hold live at the address it
// came from, is hearsay: a's own suspicion (From a, sent to b at once),
// never a death, and b's refutation clears it. The same declaration
// relayed by c, held alive at its address, kills at once: a real crash
// spreads as before. Before, x's Dead made a emit EventDead for b, and
// b's refutation EventJoin: one flap per forged datagram.
func TestStrangersDeadIsSuspicion(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	b := node("b")
	dead := Update{Kind: UpdateDead, Node: b, Incarnation: 0, From: "x"}
	require.NoError(t, a.Step(time.Millisecond, gossipFrom("x", dead)))
	pk, evs := drain(a)
	assert.Equal(t, StateSuspect, a.State("b"))
	assert.Equal(t, []EventKind{EventSuspect}, eventsAbout(evs, "b"))
	assert.Equal(t, ID("a"), evs[0].From, "a's own suspicion")
	told := false
	for _, p := range pk {
		if p.To.ID == "b" && hasUpdate(p, UpdateSuspect, "b", 0) {
			told = true
		}
	}
	assert.True(t, told, "b hears its suspicion at once and can refute")
	assert.Equal(t, 1, a.Stats().AccusationsUnvouched)

	// b refutes: alive again, no death in between.
	require.NoError(t, a.Step(2*time.Millisecond, gossipFrom("b", Update{Kind: UpdateAlive, Node: b, Incarnation: 1, From: "b"})))
	_, evs = drain(a)
	assert.Equal(t, []EventKind{EventAlive}, eventsAbout(evs, "b"))

	// Ten more of x's declarations in the same protocol period, each at
	// b's incarnation after b's refutation of the one before: two more
	// suspicions (three in a period, hearsayPerPeriod), each refuted, the
	// other eight dropped (HearsayDropped); no EventDead, no EventJoin.
	var kinds []EventKind
	for i := range 10 {
		now := time.Duration(10+i) * time.Millisecond
		inc := Incarnation(1 + i)
		require.NoError(t, a.Step(now, gossipFrom("x", Update{Kind: UpdateDead, Node: b, Incarnation: inc, From: "x"})))
		require.NoError(t, a.Step(now, gossipFrom("b", Update{Kind: UpdateAlive, Node: b, Incarnation: inc + 1, From: "b"})))
		_, evs = drain(a)
		kinds = append(kinds, eventsAbout(evs, "b")...)
	}
	assert.Equal(t, []EventKind{EventSuspect, EventAlive, EventSuspect, EventAlive}, kinds)
	assert.Equal(t, 8, a.Stats().HearsayDropped)
	assert.Equal(t, 11, a.Stats().AccusationsUnvouched)

	// The same declaration relayed by c (held alive at c:7946) kills.
	require.NoError(t, a.Step(30*time.Millisecond, gossipFrom("c", Update{Kind: UpdateDead, Node: b, Incarnation: 11, From: "d"})))
	_, evs = drain(a)
	assert.Equal(t, StateDead, a.State("b"))
	require.Equal(t, []EventKind{EventDead}, eventsAbout(evs, "b"))
	assert.Equal(t, ID("d"), evs[0].From)
	assert.Equal(t, 11, a.Stats().AccusationsUnvouched)
}

// TestHearsaySenders: which senders' accusations are hearsay. A member
// held dead, and a member's ID in a packet from another address
// (StepFromOtherSource), are not held live where they send from; a
// Suspect is hearsay as a Dead is. A member's own leave keeps its rules
// (unsigned here: applied, EventLeave). A stranger that first announces
// itself is a member held alive at its address, and its word counts: in
// plain mode anyone can join (the limit of the rule, docs/algorithms.md).
func TestHearsaySenders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(a *Member)
		send  func(a *Member, u Update) error
		u     Update
		state State
		kinds []EventKind
		by    ID // the event's From
	}{
		{"member held dead", func(a *Member) {
			require.NoError(t, a.Step(time.Millisecond, gossipFrom("c", Update{Kind: UpdateDead, Node: node("d"), From: "c"})))
		}, func(a *Member, u Update) error { return a.Step(2*time.Millisecond, gossipFrom("d", u)) },
			Update{Kind: UpdateDead, Node: node("b"), From: "d"}, StateSuspect, []EventKind{EventSuspect}, "a"},
		{"live member from another address", nil, func(a *Member, u Update) error {
			return a.StepFromOtherSource(2*time.Millisecond, gossipFrom("c", u))
		}, Update{Kind: UpdateDead, Node: node("b"), From: "c"}, StateSuspect, []EventKind{EventSuspect}, "a"},
		{"stranger's suspicion", nil, func(a *Member, u Update) error { return a.Step(2*time.Millisecond, gossipFrom("x", u)) },
			Update{Kind: UpdateSuspect, Node: node("b"), From: "x"}, StateSuspect, []EventKind{EventSuspect}, "a"},
		{"stranger's forged leave", nil, func(a *Member, u Update) error { return a.Step(2*time.Millisecond, gossipFrom("x", u)) },
			Update{Kind: UpdateDead, Node: node("b"), From: "b"}, StateLeft, []EventKind{EventLeave}, "b"},
		{"stranger announced first", func(a *Member) {
			require.NoError(t, a.Step(time.Millisecond, gossipFrom("x", Update{Kind: UpdateAlive, Node: node("x"), From: "x"})))
		}, func(a *Member, u Update) error { return a.Step(2*time.Millisecond, gossipFrom("x", u)) },
			Update{Kind: UpdateDead, Node: node("b"), From: "x"}, StateDead, []EventKind{EventDead}, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
			a.Tick(0)
			if tc.setup != nil {
				tc.setup(a)
			}
			drain(a)
			require.NoError(t, tc.send(a, tc.u))
			_, evs := drain(a)
			assert.Equal(t, tc.state, a.State("b"))
			require.Equal(t, tc.kinds, eventsAbout(evs, "b"))
			for _, e := range evs {
				if e.Node.ID == "b" {
					assert.Equal(t, tc.by, e.From)
				}
			}
		})
	}
}

// TestHearsayIsNoConfirmation: about a member already suspect at its
// incarnation, a stranger's accusation changes nothing: no confirmation
// (a stranger could name any number of accusers, each shortening the
// Lifeguard timeout), no event. The same Suspect from a live member
// confirms: the deadline moves closer.
func TestHearsayIsNoConfirmation(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
	a.Tick(0)
	require.NoError(t, a.Step(time.Millisecond, gossipFrom("c", Update{Kind: UpdateSuspect, Node: node("b"), From: "c"})))
	drain(a)
	p := a.peers["b"]
	require.Equal(t, StateSuspect, p.state)
	deadline := p.susp.deadline
	for i, id := range []ID{"x1", "x2", "x3", "x4"} {
		kind := UpdateSuspect
		if i%2 == 1 {
			kind = UpdateDead
		}
		require.NoError(t, a.Step(2*time.Millisecond, gossipNode(Node{ID: id, Addr: string(id) + ":1"}, Update{Kind: kind, Node: node("b"), From: id})))
	}
	_, evs := drain(a)
	assert.Empty(t, eventsAbout(evs, "b"))
	assert.Equal(t, StateSuspect, p.state)
	assert.Equal(t, deadline, p.susp.deadline)
	assert.Empty(t, p.susp.confirmers)
	assert.Equal(t, 4, a.Stats().AccusationsUnvouched)

	require.NoError(t, a.Step(3*time.Millisecond, gossipFrom("d", Update{Kind: UpdateSuspect, Node: node("b"), From: "d"})))
	assert.Equal(t, []ID{"d"}, p.susp.confirmers)
	assert.Less(t, p.susp.deadline, deadline)
}

// TestHearsaySignedCapped: with signed self-updates an accusation above
// the stored incarnation is taken at it (credible), so a stranger's Dead
// at 5 about b at 0 is a's suspicion at 0, which b's signed refutation at
// 1 clears; about b already suspect it is never more than a confirmation,
// so it changes nothing.
func TestHearsaySignedCapped(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.SigningKey = testKey("a") }, "b", "c", "d")
	a.Tick(0)
	drain(a)
	require.NoError(t, a.Step(time.Millisecond, gossipFrom("x", Update{Kind: UpdateDead, Node: node("b"), Incarnation: 5, From: "x"})))
	_, evs := drain(a)
	require.Equal(t, []EventKind{EventSuspect}, eventsAbout(evs, "b"))
	assert.Equal(t, Incarnation(0), a.peers["b"].inc)
	assert.Equal(t, 1, a.Stats().AccusationsCapped)
	deadline := a.peers["b"].susp.deadline
	require.NoError(t, a.Step(2*time.Millisecond, gossipFrom("x", Update{Kind: UpdateDead, Node: node("b"), Incarnation: 7, From: "x"})))
	_, evs = drain(a)
	assert.Empty(t, eventsAbout(evs, "b"))
	assert.Equal(t, deadline, a.peers["b"].susp.deadline)
	assert.Equal(t, Incarnation(0), a.peers["b"].inc)
}
