package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodTest returns a (peers b, c, d from Bootstrap) told by b of ghosts
// members it never heard from.
func floodTest(t *testing.T, mode Mode, ghosts int) *Member {
	a := newTest(t, "a", mode, nil, "b", "c", "d")
	var ups []Update
	for i := range ghosts {
		g := node(fmt.Sprintf("g%04d", i))
		ups = append(ups, Update{Kind: UpdateAlive, Node: g, From: g.ID})
	}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: ups}))
	drain(a)
	return a
}

// Members a was only told of take at most one probe in three (unverified
// Cost), and count in the n of the log n formulas only up to the members
// heard from: 300 of them beside 3 known leave the known ones two thirds
// of the probes and the n of the suspicion timeout at 7, not 304. Every probe is acked by the known members, none by the
// ghosts.
func TestUnverifiedMembersDoNotDiluteProbing(t *testing.T) {
	a := floodTest(t, ModeSWIM, 300)
	assert.Equal(t, 304, a.NumAlive())
	assert.Equal(t, 7, a.groupSize())
	known, ghosts := 0, 0
	tickUntil(a, 29*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind != MsgPing || p.To.ID == "" {
				continue
			}
			switch p.To.ID {
			case "b", "c", "d":
				known++
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
				drain(a)
			default:
				ghosts++
			}
		}
	})
	// 30 periods (0 s to 29 s): 10 probes to ghosts at most, the rest
	// to b, c and d.
	assert.Equal(t, 30, known+ghosts)
	assert.LessOrEqual(t, ghosts, 10)
	assert.GreaterOrEqual(t, known, 20)
	// A ghost probed and unanswered is suspected with the timeout of the
	// known group (α·T = 4 s for n ≤ 10), not of 304 members
	// (α·log10(304)·T = 9.9 s).
	for _, ps := range a.Members(29 * time.Second) {
		if ps.State == StateSuspect {
			assert.Equal(t, 4*time.Second, ps.SuspicionDeadline-ps.Since, ps.Node.ID)
		}
	}
}

// A member heard from directly is verified and probed as any other; one
// answering through an intermediate (a relayed ack) is vouched for.
func TestUnverifiedMemberVerifiedWhenHeard(t *testing.T) {
	a := floodTest(t, ModeSWIM, 4)
	require.Equal(t, 4, a.unverified)
	g0 := node("g0000")
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgPing, From: g0, To: node("a"), Ping: Ping{Seq: 9}}))
	drain(a)
	assert.Equal(t, 3, a.unverified, "a ping from g0000 verifies it")
	assert.True(t, a.peers["g0000"].verified)
	a.Tick(0)
	drain(a)
	// Gossip relayed by several members does not verify.
	for _, from := range []string{"b", "c", "d"} {
		g := node("g0001")
		require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node(from), To: node("a"),
			Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	}
	assert.False(t, a.peers["g0001"].verified)
	assert.Equal(t, 3, a.unverified)
	// Its death takes it out of the count.
	require.NoError(t, a.Step(3*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateDead, Node: node("g0001"), From: "b"}}}))
	assert.Equal(t, 2, a.unverified)
}
