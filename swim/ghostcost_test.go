package swim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a ghost costs the address it is announced at (verify.go,
// “sending”; issue 27, user37 F6): a member told of it by gossip sends it
// the probe that would verify a real member, and nothing else.

// ghostTest returns a (Lifeguard, peers b, c and d from Bootstrap, so
// verified) told by b of the ghost g at a victim's address.
func ghostTest(t *testing.T, mut func(*Config)) (*Member, Node) {
	t.Helper()
	a := newTest(t, "a", ModeLifeguard, mut, "b", "c", "d")
	a.Tick(0)
	drain(a)
	g := Node{ID: "g", Addr: "victim:7946"}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: "b"}}}))
	drain(a)
	require.False(t, a.peers["g"].verified)
	return a, g
}

// ghostsTest returns a (Lifeguard, peers b, c and d from Bootstrap, so
// verified) told by b of n ghosts g0, g1... at a victim's address.
func ghostsTest(t *testing.T, n int) *Member {
	t.Helper()
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	var ups []Update
	for i := range n {
		ups = append(ups, Update{Kind: UpdateAlive, Node: Node{ID: ID(fmt.Sprintf("g%d", i)), Addr: "victim:7946"}, From: "b"})
	}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(), Updates: ups}))
	drain(a)
	return a
}

// runAnswering ticks m up to until, acking at once every ping it sends to
// a member of answer, and returns every packet it sent.
func runAnswering(t *testing.T, m *Member, until time.Duration, answer ...string) []Packet {
	t.Helper()
	var all []Packet
	tickUntil(m, until, func(at time.Duration, pk []Packet, _ []Event) {
		all = append(all, pk...)
		for _, p := range pk {
			if p.Kind != MsgPing || !slices.Contains(answer, string(p.To.ID)) {
				continue
			}
			require.NoError(t, m.Step(at, &Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}))
			more, _ := drain(m)
			all = append(all, more...)
		}
	})
	return all
}

// A probe of a member not verified that goes unanswered asks no
// intermediate to ping it: it was never heard from, and each ghost drew
// IndirectChecks relayed pings from every member. A verified member's
// failed probe still does (d, silent here).
func TestNoPingReqsForUnverifiedTarget(t *testing.T) {
	a, g := ghostTest(t, nil)
	pk := runAnswering(t, a, 20*time.Second, "b", "c")
	about := map[ID]int{}
	probed := map[ID]int{}
	for _, p := range pk {
		switch p.Kind {
		case MsgPingReq:
			about[p.PingReq.Target.ID]++
		case MsgPing:
			probed[p.To.ID]++
		}
	}
	assert.Positive(t, probed[g.ID], "g is probed")
	assert.Zero(t, about[g.ID], "ping-reqs about g")
	assert.Positive(t, about["d"], "ping-reqs about d, verified")
	assert.Contains(t, []State{StateSuspect, StateDead}, a.peers["g"].state)
}

// Until it is declared dead, a ghost gets one ping from a, the probe
// that would verify a real member: not the suspicion a pushes to a
// suspect it heard from (failProbe), nor a second probe while suspect.
// The ghost, at a victim's address, drew both from every member.
func TestUnverifiedSuspectGetsOnePing(t *testing.T) {
	a, g := ghostTest(t, nil)
	var toVictim []Packet
	tickUntil(a, time.Minute, func(at time.Duration, pk []Packet, _ []Event) {
		if a.peers["g"].state == StateDead {
			return
		}
		for _, p := range pk {
			switch {
			case p.To.Addr == g.Addr:
				toVictim = append(toVictim, p)
			case p.Kind == MsgPing:
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}))
				drain(a)
			}
		}
	})
	require.Equal(t, StateDead, a.peers["g"].state)
	kinds := make([]MessageKind, len(toVictim))
	for i, p := range toVictim {
		kinds[i] = p.Kind
	}
	require.Len(t, toVictim, 1, "to the victim: %v", kinds)
	assert.Equal(t, MsgPing, toVictim[0].Kind)
	assert.Empty(t, toVictim[0].Updates)
}

// Eager pushes go to members a verified only: with b and c the only ones
// eligible for a declaration of d, or of a ghost, the push fell back to
// the other ghosts a was told of, at a victim's address, one MsgGossip each
// with the ghost's own notice.
func TestEagerPushesOnlyToVerified(t *testing.T) {
	a := ghostsTest(t, 5)
	pk := runAnswering(t, a, time.Minute, "b", "c")
	require.Equal(t, StateDead, a.peers["d"].state)
	gossips := map[string]int{}
	for _, p := range pk {
		if p.Kind == MsgGossip {
			gossips[p.To.Addr]++
		}
	}
	assert.Positive(t, gossips["b:7946"]+gossips["c:7946"], "pushes to b and c")
	assert.Zero(t, gossips["victim:7946"], "pushes to the ghosts")
}

// Reconnect pings go to dead members a verified (d), never to a ghost it
// declared dead, which drew one from every member holding it dead every
// ReconnectInterval.
func TestReconnectOnlyToVerifiedDead(t *testing.T) {
	a, g := ghostTest(t, nil)
	var dead time.Duration
	toVictim, toD := 0, 0
	tickUntil(a, 5*time.Minute, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			switch {
			case dead > 0 && p.To.Addr == g.Addr:
				toVictim++
			case dead > 0 && p.To.ID == "d" && p.Kind == MsgPing:
				toD++
			case p.Kind == MsgPing && p.To.ID != "d" && p.To.Addr != g.Addr:
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}))
				drain(a)
			}
		}
		if dead == 0 && a.peers["g"].state == StateDead && a.peers["d"].state == StateDead {
			dead = at
		}
	})
	require.Positive(t, dead)
	assert.Zero(t, toVictim, "packets to g after its death")
	assert.Positive(t, toD, "reconnect pings to d")
}

// A stale Alive of a ghost a suspects, relayed by b, gets the suspicion
// back to b only (accuseBack): the ghost, never heard from, at a victim's
// address, drew it there from every member the relay reached. A member
// a verified (c) is still told, and so is a ghost that sends its stale
// Alive itself.
func TestAccusationNotToUnverified(t *testing.T) {
	a, g := ghostTest(t, nil)
	for _, id := range []ID{"g", "c"} {
		p := a.peers[id]
		require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node("d"), To: a.Self(),
			Updates: []Update{{Kind: UpdateSuspect, Node: p.node, From: "d"}}}))
		drain(a)
		require.Equal(t, StateSuspect, p.state)
	}
	told := func(from Node, n Node) map[string]int {
		require.NoError(t, a.Step(3*time.Millisecond, &Packet{Kind: MsgGossip, From: from, To: a.Self(),
			Updates: []Update{{Kind: UpdateAlive, Node: n, From: from.ID}}}))
		pk, _ := drain(a)
		to := map[string]int{}
		for _, p := range pk {
			if p.Kind == MsgGossip && hasUpdate(p, UpdateSuspect, string(n.ID), 0) {
				to[p.To.Addr]++
			}
		}
		return to
	}
	assert.Equal(t, map[string]int{"b:7946": 1}, told(node("b"), g), "g's stale Alive relayed by b")
	assert.Equal(t, map[string]int{"b:7946": 1, "c:7946": 1}, told(node("b"), node("c")), "c's, relayed by b")
	assert.Equal(t, map[string]int{g.Addr: 1}, told(g, g), "g's, from g")
}

// A member named in an update as a suspicion's source, or as a
// declarer, is pushed a's confirmation of that suspicion (suspecters) or
// the leave it missed (correctLeft) only when a verified it: anyone could
// name a ghost at a victim's address there, and have every member that
// heard the update send it the push.
func TestPushesToNamedMembersOnlyVerified(t *testing.T) {
	a, g := ghostTest(t, nil)
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(),
		Updates: []Update{{Kind: UpdateSuspect, Node: node("c"), From: g.ID}}}))
	drain(a)
	require.Equal(t, StateSuspect, a.peers["c"].state)
	confirmed := 0
	var toVictim []MessageKind
	tickUntil(a, 6*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.To.Addr == g.Addr && p.Kind != MsgPing {
				toVictim = append(toVictim, p.Kind)
			}
			if p.Kind == MsgGossip && hasUpdate(p, UpdateSuspect, "c", 0) && p.Updates[0].From == a.Self().ID {
				confirmed++
			}
			if p.Kind == MsgPing && (p.To.ID == "b" || p.To.ID == "d") {
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}))
				drain(a)
			}
		}
	})
	require.Positive(t, confirmed, "a confirmed its suspicion of c")
	assert.Empty(t, toVictim, "packets to g, named as c's suspecter")

	// d leaves; b relays a Dead of d that g declared.
	require.NoError(t, a.Step(7*time.Second, &Packet{Kind: MsgGossip, From: node("d"), To: a.Self(),
		Updates: []Update{{Kind: UpdateDead, Node: node("d"), From: "d"}}}))
	drain(a)
	require.Equal(t, StateLeft, a.peers["d"].state)
	require.NoError(t, a.Step(7*time.Second+time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(),
		Updates: []Update{{Kind: UpdateDead, Node: node("d"), From: g.ID}}}))
	pk, _ := drain(a)
	to := map[string]int{}
	for _, p := range pk {
		if p.Kind == MsgGossip && hasUpdate(p, UpdateDead, "d", 0) && p.Updates[0].From == "d" {
			to[p.To.Addr]++
		}
	}
	assert.Equal(t, map[string]int{"b:7946": 1}, to, "the leave corrected")
}

// An isolated member (no member left to probe, some held dead) asks dead
// members it verified for their view (isolated), as it pings them
// (tickReconnect): never a ghost held dead, whose address is a victim's.
// Here a holds b, c and d, which never answer, and 8 ghosts: every view
// request went to one of the 11 dead members at random, most to the
// victim.
func TestIsolatedAsksOnlyVerifiedDead(t *testing.T) {
	a := ghostsTest(t, 8)
	asked := map[string]int{}
	tickUntil(a, 10*time.Minute, func(_ time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind == MsgJoin {
				asked[p.To.Addr]++
			}
		}
	})
	for _, id := range []ID{"b", "c", "d", "g0"} {
		require.Equal(t, StateDead, a.peers[id].state, "%s", id)
	}
	assert.Positive(t, asked["b:7946"]+asked["c:7946"]+asked["d:7946"], "view requests to b, c and d")
	assert.Zero(t, asked["victim:7946"], "view requests to the ghosts")
}

// A packet that claims to come from a ghost, or from a held ID at a
// victim's address, but reaches a from another address
// (StepFromOtherSource: a forger's, as far as the transport can tell)
// draws no answer to the victim: neither the accusation of the ghost's
// stale Alive nor of the conflict, nor as the relay of a stale Alive
// (accuseBack), nor the leave of a Dead it sent (correctLeft). A member's
// own packet from the address it claims still does
// (TestAccusationNotToUnverified, TestPushesToNamedMembersOnlyVerified).
func TestAccusationNotToForgedSender(t *testing.T) {
	a, g := ghostTest(t, nil)
	for _, u := range []Update{
		{Kind: UpdateSuspect, Node: g, From: "d"},
		{Kind: UpdateSuspect, Node: node("c"), From: "d"},
		{Kind: UpdateDead, Node: node("d"), From: "d"},
	} {
		require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(), Updates: []Update{u}}))
		drain(a)
	}
	require.Equal(t, StateSuspect, a.peers["g"].state)
	require.Equal(t, StateSuspect, a.peers["c"].state)
	require.Equal(t, StateLeft, a.peers["d"].state)
	for i, pkt := range []*Packet{
		// g's stale Alive, from g
		{Kind: MsgGossip, From: g, To: a.Self(), Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}},
		// c's ID at the victim's address (noteSender's conflict)
		{Kind: MsgGossip, From: Node{ID: "c", Addr: g.Addr}, To: a.Self()},
		// a stale Alive of c, which a suspects, relayed by g (accuseBack)
		{Kind: MsgGossip, From: g, To: a.Self(), Updates: []Update{{Kind: UpdateAlive, Node: node("c"), From: "c"}}},
		// a Dead of d, which left, from g (correctLeft)
		{Kind: MsgGossip, From: g, To: a.Self(), Updates: []Update{{Kind: UpdateDead, Node: node("d"), From: g.ID}}},
	} {
		require.NoError(t, a.StepFromOtherSource(time.Duration(3+i)*time.Millisecond, pkt))
		pk, _ := drain(a)
		for _, p := range pk {
			assert.NotEqual(t, g.Addr, p.To.Addr, "packet %d: %v to the victim", i, p.Kind)
		}
	}
}
