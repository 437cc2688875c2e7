package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A declaration replayed many times is forwarded once, when it turns the
// suspicion into a death; the replays find the member dead at the same
// incarnation and are neither forwarded nor queued again.
func TestReplayedDeclarationForwardedOnce(t *testing.T) {
	a := declGroup(t, "m01")
	dead := Update{Kind: UpdateDead, Node: node("m01"), From: "m00"}
	require.NoError(t, a.Step(10*time.Millisecond, gossipFrom("m19", dead)))
	pk, _ := drain(a)
	require.Len(t, only(t, pk, MsgGossip), DefaultGossipFanout)
	for i := range 100 {
		require.NoError(t, a.Step(20*time.Millisecond+time.Duration(i)*time.Microsecond, gossipFrom("m18", dead)))
	}
	pk, _ = drain(a)
	assert.Empty(t, only(t, pk, MsgGossip), "replays")
	assert.Equal(t, StateDead, a.State("m01"))
}

// A declaration arriving at the very instant this member's own probe
// began suspecting the member is not a corroboration (the suspicion does
// not predate the packet): taken, not forwarded at once. A declaration one
// nanosecond later is.
func TestDeclarationAtOwnSuspicionInstant(t *testing.T) {
	for _, later := range []time.Duration{0, time.Nanosecond} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
		a.Tick(0)
		pk, _ := drain(a)
		target := pk[0].To.ID
		_, ev := advance(a, time.Second)
		require.Len(t, ev, 1)
		require.Equal(t, EventSuspect, ev[0].Kind)
		at := ev[0].At
		drain(a)
		from := "b"
		if target == "b" {
			from = "c"
		}
		require.NoError(t, a.Step(at+later, gossipFrom(from, Update{Kind: UpdateDead, Node: node(string(target)), From: ID(from)})))
		pk, _ = drain(a)
		assert.Equal(t, StateDead, a.State(target))
		if later == 0 {
			assert.Empty(t, only(t, pk, MsgGossip), "same instant")
		} else {
			assert.Len(t, only(t, pk, MsgGossip), DefaultGossipFanout, "suspected before the packet")
		}
	}
}

// A declaration at an implausible incarnation (far above the suspicion's)
// about a suspected member is refused like any other accusation, and so
// is not forwarded; one at a stale incarnation is ignored.
func TestDeclarationHugeIncarnationNotForwarded(t *testing.T) {
	for _, inc := range []Incarnation{MaxIncarnation, MaxIncarnationJump + 1} {
		a := declGroup(t, "m01")
		require.NoError(t, a.Step(10*time.Millisecond, gossipFrom("m19", Update{Kind: UpdateDead, Node: node("m01"), Incarnation: inc, From: "m00"})))
		pk, _ := drain(a)
		assert.Empty(t, only(t, pk, MsgGossip), "incarnation %d", inc)
		assert.Equal(t, StateSuspect, a.State("m01"), "incarnation %d", inc)
	}
}
