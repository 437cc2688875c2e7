package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A GossipFanout or IndirectChecks larger than any group (a mistyped or
// hostile setting) reaches every live member, and the per-period forward
// budget holds. Before, forwardsPerFanout·GossipFanout overflowed for a
// fanout of 2^61 or more: the budget came out zero or negative, so a member
// sent no accusation back to the relay of a stale Alive (accuseBack) and
// forwarded no refutation or declaration; and pick's 4k and 8k overflowed,
// so no member was picked for a gossip or a ping-req, silently.
func TestHugeGossipFanoutKeepsForwardBudget(t *testing.T) {
	for _, fanout := range []int{1 << 61, 1 << 62} {
		b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.GossipFanout = new(fanout) }, "x", "c", "d")
		require.NoError(t, b.Step(time.Second, gossipFrom("d", Update{Kind: UpdateDead, Node: node("x"), Incarnation: 5, From: "d"})))
		drain(b)
		require.NoError(t, b.Step(2*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 1, From: "x"})))
		pk, _ := drain(b)
		to := map[ID]bool{}
		for _, p := range pk {
			if hasUpdate(p, UpdateDead, "x", 5) {
				to[p.To.ID] = true
			}
		}
		assert.Equal(t, map[ID]bool{"c": true, "x": true}, to, "fanout %d: the accusation goes back to the relay and the accused", fanout)

		// A refutation of a suspicion b held is forwarded to every other
		// live member (c and d here), the sender and the subject excluded.
		a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.GossipFanout = new(fanout) }, "x", "c", "d", "e")
		require.NoError(t, a.Step(time.Second, gossipFrom("c", Update{Kind: UpdateSuspect, Node: node("x"), From: "c"})))
		drain(a)
		require.NoError(t, a.Step(2*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 1, From: "x"})))
		pk, _ = drain(a)
		var fwd []ID
		for _, p := range only(t, pk, MsgGossip) {
			fwd = append(fwd, p.To.ID)
		}
		assert.ElementsMatch(t, []ID{"d", "e"}, fwd, "fanout %d: the refutation is forwarded", fanout)

		p := newTest(t, "p", ModeLifeguard, func(c *Config) { c.IndirectChecks = new(fanout) }, "x", "c", "d")
		p.Tick(0)
		pk, _ = drain(p)
		require.Len(t, only(t, pk, MsgPing), 1)
		p.Tick(p.Config().ProbeTimeout) // no ack: ping-reqs
		pk, _ = drain(p)
		assert.Len(t, only(t, pk, MsgPingReq), 2, "IndirectChecks %d: both other members are asked", fanout)
	}
}
