package swim

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldUnverified counts the live members m holds that it has not verified,
// the count m.unverified keeps.
func heldUnverified(m *Member) int {
	n := 0
	for _, p := range m.peers {
		if (p.state == StateAlive || p.state == StateSuspect) && !p.verified {
			n++
		}
	}
	return n
}

// A member's verification holds for the address it was verified at
// (readdress): b, configured (verified), leaves or is declared dead, and
// gossip from c, which anyone can forge in plain mode, moves b's entry to
// a victim's address and revives it there (reclaim, with the default
// DeadReclaimTime of 0; a Dead above the stored incarnation moves it
// without any reclaim time). a then holds b unverified, counted as such,
// and for a minute sends the victim nothing from its queues, a 300-byte
// broadcast included (issue 27, user37 F2: the group sent the victim
// full packets, about 80-120× the attacker's bytes over real sockets).
func TestMovedMemberUnverified(t *testing.T) {
	victim := Node{ID: "b", Addr: "victim:7946"}
	for _, tc := range []struct {
		name string
		ups  []Update // after b is down at incarnation 0
	}{
		{"left, then alive", []Update{
			{Kind: UpdateDead, Node: node("b"), From: "b"},
			{Kind: UpdateAlive, Node: victim, Incarnation: 1, From: "b"},
		}},
		{"dead, dead above, alive", []Update{
			{Kind: UpdateDead, Node: node("b"), From: "c"},
			{Kind: UpdateDead, Node: victim, Incarnation: 1, From: "c"},
			{Kind: UpdateAlive, Node: victim, Incarnation: 2, From: "b"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
			a.Tick(0)
			pk, _ := drain(a)
			// The first probe is answered: one of b at its old address
			// failing after the move would suspect b at the victim's,
			// and a suspect a has not verified is not probed again.
			pings := only(t, pk, MsgPing)
			require.Len(t, pings, 1)
			require.NoError(t, a.Step(time.Millisecond/2, &Packet{Kind: MsgAck, From: pings[0].To, To: a.Self(), Ack: Ack{Seq: pings[0].Ping.Seq}}))
			drain(a)
			require.True(t, a.peers["b"].verified)
			require.Equal(t, 0, a.unverified)
			for i, u := range tc.ups {
				require.NoError(t, a.Step(time.Duration(i+1)*time.Millisecond,
					&Packet{Kind: MsgGossip, From: node("c"), To: a.Self(), Updates: []Update{u}}))
				drain(a)
			}
			b := a.peers["b"]
			require.Equal(t, victim, b.node)
			require.Equal(t, StateAlive, b.state)
			assert.False(t, b.verified, "verified at b:7946, not at the victim's address")
			assert.Equal(t, 1, a.unverified)
			assert.Equal(t, heldUnverified(a), a.unverified)
			assert.Nil(t, a.verifiedAt["b:7946"], "b no longer holds its old address")
			require.NoError(t, a.Broadcast("k", bytes.Repeat([]byte("x"), 300)))
			pk, _ = advance(a, time.Minute)
			pinged := 0
			for _, p := range pk {
				if p.To.Addr != victim.Addr {
					continue
				}
				if p.Kind == MsgPing {
					pinged++
				}
				assert.True(t, bareFor(p, a.Self().ID), "%v to the victim: %d updates, %d broadcasts, %d bytes",
					p.Kind, len(p.Updates), len(p.Broadcasts), p.Size())
			}
			assert.Positive(t, pinged, "b at the victim's address is probed")
			assert.Equal(t, heldUnverified(a), a.unverified)
		})
	}
}

// Two nodes reviving b's ID from one declaration (reviveTie): the one at
// the lower address takes the live entry, unverified, since a verified b
// at its old address; a packet from it there draws a challenge whose ack
// verifies it there (receipt.go). b revived by c's gossip at the address
// it was verified at stays verified (verify.go, on revivals: unverifying
// it raised swim/sim's false positives).
func TestRevivalTieUnverified(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	step := func(at time.Duration, from Node, u Update) {
		t.Helper()
		require.NoError(t, a.Step(at, &Packet{Kind: MsgGossip, From: from, To: a.Self(), Updates: []Update{u}}))
		drain(a)
	}
	step(time.Millisecond, node("c"), Update{Kind: UpdateDead, Node: node("b"), From: "c"})
	step(2*time.Millisecond, node("c"), Update{Kind: UpdateAlive, Node: node("b"), Incarnation: 1, From: "b"})
	require.True(t, a.peers["b"].verified, "revived at the address it was verified at")
	require.Equal(t, 0, a.unverified)
	lower := Node{ID: "b", Addr: "a0:7946"}
	step(3*time.Millisecond, node("c"), Update{Kind: UpdateAlive, Node: lower, Incarnation: 1, From: "b"})
	b := a.peers["b"]
	require.Equal(t, lower, b.node, "the lower address wins the tie")
	assert.False(t, b.verified)
	assert.Equal(t, 1, a.unverified)
	assert.Equal(t, heldUnverified(a), a.unverified)
	stepAnswered(t, a, 4*time.Millisecond, &Packet{Kind: MsgGossip, From: lower, To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: lower, Incarnation: 1, From: "b"}}})
	assert.True(t, b.verified, "answered a challenge at its new address")
	assert.Equal(t, 0, a.unverified)
}

// A member that moves while probed at its old address (it left and
// restarted elsewhere, its leave and its Alive at the new address
// arriving mid-probe; readdress) is not
// suspected when the probe of its old address fails: nothing was sent to
// where it is now. It was suspected at its new address, unverified
// there, so neither pushed the suspicion nor probed again while suspect.
func TestMovedWhileProbedNotSuspected(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	pk, _ := drain(a)
	pings := only(t, pk, MsgPing)
	require.Len(t, pings, 1)
	target := pings[0].To
	moved := Node{ID: target.ID, Addr: "new:7946"}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: node("c"), To: a.Self(),
		Updates: []Update{{Kind: UpdateDead, Node: target, From: target.ID}}}))
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: moved, To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: moved, Incarnation: 1, From: target.ID}}}))
	drain(a)
	p := a.peers[target.ID]
	require.Equal(t, moved, p.node)
	next := a.probing.next
	_, ev := advance(a, next)
	for _, e := range ev {
		assert.False(t, e.Kind == EventSuspect && e.Node.ID == target.ID, "%v suspected at %v", target.ID, e.Node.Addr)
	}
	assert.Equal(t, StateAlive, p.state)
	assert.Zero(t, a.Stats().Suspicions)
}
