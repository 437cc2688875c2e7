package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that joins through a seed of another group (merging) queues
// the members the seed's view adds, news to its own group (applyView),
// and piggybacks them to its own group's members only: sent to the
// members that view brought, which hold them all, they were spent there
// (swim/sim: a block of the first group unknown to most of the second for
// minutes). A newer update about one of them (its refutation) goes to
// everyone.
func TestMergedViewNotPiggybackedToItsGroup(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	drain(a)
	a.queue.items, a.queue.byID = nil, nil
	answer := &Packet{Kind: MsgSync, From: node("s"), To: node("a"), JoinToken: a.join.token}
	for _, id := range []string{"s", "t", "u"} {
		answer.Updates = append(answer.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
	}
	require.NoError(t, a.Step(time.Millisecond, answer))
	drain(a)
	for _, id := range []ID{"s", "t", "u"} {
		require.True(t, a.peers[id].verified, "%s vouched for by the seed's view", id)
	}
	carried := func(to string) []ID {
		a.send(Packet{Kind: MsgPing, To: node(to), Ping: Ping{Seq: 7}})
		pk, _ := drain(a)
		require.Len(t, pk, 1)
		var ids []ID
		for _, u := range pk[0].Updates {
			ids = append(ids, u.Node.ID)
		}
		return ids
	}
	limit := retransmitLimit(a.cfg.RetransmitMult, a.groupSize())
	require.Greater(t, limit, 1)
	for range 2 * limit {
		for _, to := range []string{"s", "t", "u"} {
			assert.Empty(t, carried(to), "to %s, of the seed's group", to)
		}
	}
	require.Len(t, a.queue.items, 3, "nothing spent on the seed's group")
	assert.ElementsMatch(t, []ID{"s", "t", "u"}, carried("b"), "to b, of a's group")
	for range limit - 1 {
		carried("c")
	}
	assert.Empty(t, a.queue.items, "λ·ceil(log10(n+1)) copies to a's group")

	a.enqueue(Update{Kind: UpdateAlive, Node: node("t"), Incarnation: 1, From: "t"})
	assert.Equal(t, []ID{"t"}, carried("u"), "a newer update about t, to the seed's group")
}
