package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Adversarial tests of corroborated forwarding (a Dead heard about a
// member held Suspect is passed on at once; TestEagerDeclarationForwarded
// has the ordinary case).

// declGroup is a in a group of 20 others (m00..m19), suspecting the given
// ones on b's word.
func declGroup(t *testing.T, suspects ...string) *Member {
	t.Helper()
	var peers []string
	for i := range 20 {
		peers = append(peers, fmt.Sprintf("m%02d", i))
	}
	a := newTest(t, "a", ModeLifeguard, nil, peers...)
	a.Tick(0)
	drain(a)
	for _, id := range suspects {
		require.NoError(t, a.Step(time.Millisecond, gossipFrom("m00", Update{Kind: UpdateSuspect, Node: node(id), From: "m00"})))
	}
	drain(a)
	return a
}

// A flood of declarations about members a suspected, crafted or not, is
// forwarded within the per-period budget shared with refutations
// (forwardsPerFanout·GossipFanout), whatever it carries; the next period
// brings a new budget, and what is not forwarded is still queued.
func TestDeclarationFloodWithinForwardBudget(t *testing.T) {
	ids := []string{"m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08", "m09", "m10"}
	a := declGroup(t, append(ids, "m11", "m12")...)
	var ups []Update
	for _, id := range ids {
		ups = append(ups, Update{Kind: UpdateDead, Node: node(id), From: "m00"})
	}
	require.NoError(t, a.Step(10*time.Millisecond, gossipFrom("m19", ups...)))
	pk, _ := drain(a)
	assert.Len(t, only(t, pk, MsgGossip), forwardsPerFanout*DefaultGossipFanout, "ten declarations: one period's budget")
	for _, id := range ids {
		assert.Equal(t, StateDead, a.State(ID(id)))
		assert.NotNil(t, a.bidx[ID(id)], "%s: still queued for the drain loop and piggybacking", id)
	}
	// The budget is shared: a refutation in the same period goes unforwarded.
	require.NoError(t, a.Step(20*time.Millisecond, gossipFrom("m19", Update{Kind: UpdateAlive, Node: node("m11"), Incarnation: 1, From: "m11"})))
	pk, _ = drain(a)
	assert.Empty(t, only(t, pk, MsgGossip), "the period's budget is spent")

	advance(a, a.period())
	require.NoError(t, a.Step(a.period()+10*time.Millisecond, gossipFrom("m19", Update{Kind: UpdateDead, Node: node("m12"), From: "m00"})))
	pk, _ = drain(a)
	assert.Len(t, only(t, pk, MsgGossip), DefaultGossipFanout, "a new period, a new budget")
}

// Declarations that must not be forwarded: about this member itself
// (refuted instead), older than the suspicion held (stale: ignored), a
// leave (the leaver's own word, gossiped), heard in a view transfer
// (enters as this member's own suspicion), naming the suspect's ID at
// another address (a conflicting claim), and in plain SWIM.
func TestDeclarationsNotForwarded(t *testing.T) {
	cases := map[string]func(a *Member) *Packet{
		"about this member": func(a *Member) *Packet {
			return gossipFrom("m19", Update{Kind: UpdateDead, Node: node("a"), From: "m00"})
		},
		"stale": func(a *Member) *Packet {
			require.NoError(t, a.Step(5*time.Millisecond, gossipFrom("m02", Update{Kind: UpdateSuspect, Node: node("m01"), Incarnation: 3, From: "m02"})))
			drain(a)
			return gossipFrom("m19", Update{Kind: UpdateDead, Node: node("m01"), Incarnation: 2, From: "m00"})
		},
		"leave": func(a *Member) *Packet {
			return gossipFrom("m19", Update{Kind: UpdateDead, Node: node("m01"), From: "m01"})
		},
		"view transfer": func(a *Member) *Packet {
			return &Packet{Kind: MsgSync, From: node("m19"), To: node("a"),
				Updates: []Update{{Kind: UpdateDead, Node: node("m01"), From: "m00"}}}
		},
		"another address": func(a *Member) *Packet {
			return gossipFrom("m19", Update{Kind: UpdateDead, Node: Node{ID: "m01", Addr: "elsewhere:1"}, From: "m00"})
		},
	}
	for name, pkt := range cases {
		a := declGroup(t, "m01")
		p := pkt(a)
		require.NoError(t, a.Step(10*time.Millisecond, p), name)
		pk, _ := drain(a)
		assert.Empty(t, only(t, pk, MsgGossip), name)
		assert.NotEqual(t, StateDead, a.State("m01"), name)
	}

	s := newTest(t, "a", ModeSWIM, nil, "b", "c", "d", "e")
	require.NoError(t, s.Step(0, gossipFrom("b", Update{Kind: UpdateSuspect, Node: node("c"), From: "b"})))
	require.NoError(t, s.Step(time.Millisecond, gossipFrom("d", Update{Kind: UpdateDead, Node: node("c"), From: "b"})))
	pk, _ := drain(s)
	assert.Empty(t, only(t, pk, MsgGossip), "plain SWIM")
	assert.Equal(t, StateDead, s.State("c"))
}

// A suspicion and a declaration of the same member in one packet are not
// a corroboration: the receiver did not suspect the member before the
// packet came, so it takes the declaration without forwarding it (one
// crafted packet made every receiver forward before). A member suspected
// by an earlier packet is forwarded as before.
func TestSuspicionAndDeclarationInOnePacketNotForwarded(t *testing.T) {
	a := declGroup(t, "m01")
	both := gossipFrom("m19",
		Update{Kind: UpdateSuspect, Node: node("m03"), From: "m19"},
		Update{Kind: UpdateDead, Node: node("m03"), From: "m19"})
	require.NoError(t, a.Step(10*time.Millisecond, both))
	pk, _ := drain(a)
	assert.Empty(t, only(t, pk, MsgGossip))
	assert.Equal(t, StateDead, a.State("m03"))

	require.NoError(t, a.Step(20*time.Millisecond, gossipFrom("m19", Update{Kind: UpdateDead, Node: node("m01"), From: "m00"})))
	pk, _ = drain(a)
	assert.Len(t, only(t, pk, MsgGossip), 2, "m01 was suspected by an earlier packet")
}
