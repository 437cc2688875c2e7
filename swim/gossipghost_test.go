package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member known only by gossip (never heard from at its address) gets
// one unpaid probe ping there (receipt.go), not one per revival: a
// ghost at a victim's address, revived by a gossiped Alive at a higher
// incarnation each time this member's probe has suspected it, drew a
// ping from every member that held it after each revival (issue 27,
// user40 F4: 88 pings for 80 revivals at n = 8; docs/experiments.md,
// “SWIM: one unpaid ping per gossiped member”). Six revivals here,
// b and c acking their probes: g is probed after each (its probe
// fails: it leaves alive), pinged once.
func TestGossipedMemberOneUnpaidPingAcrossRevivals(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	a.Tick(0)
	drain(a)
	g := Node{ID: "g", Addr: "victim:1"}
	now := time.Millisecond
	pings := 0
	for inc := Incarnation(1); inc <= 6; inc++ {
		require.NoError(t, a.Step(now, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(),
			Updates: []Update{{Kind: UpdateAlive, Node: g, From: "b", Incarnation: inc}}}))
		require.Equal(t, StateAlive, a.State("g"), "revived at incarnation %d", inc)
		drain(a)
		for a.State("g") == StateAlive && now < time.Duration(inc)*time.Minute {
			next, ok := a.NextDeadline()
			require.True(t, ok)
			now = next
			a.Tick(now)
			pk, _ := drain(a)
			for _, p := range pk {
				switch {
				case p.To.Addr == g.Addr && p.Kind == MsgPing:
					pings++
				case p.Kind == MsgPing && (p.To.ID == "b" || p.To.ID == "c"):
					require.NoError(t, a.Step(now, &Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}))
					drain(a)
				}
			}
		}
		// Only this member's own probe of g moves it from alive here.
		require.NotEqual(t, StateAlive, a.State("g"), "g's probe failed after revival %d", inc)
	}
	assert.Equal(t, 1, pings, "one unpaid ping, at the first probe")
	assert.False(t, a.peers["g"].direct)
}
