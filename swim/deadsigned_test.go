package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With signed self-updates, a declaration above the incarnation the
// suspected member asserted is capped to it before it is taken, and the
// corroborated forwarding passes on the capped declaration, never the
// forger's number; a leave without the member's signature is refused and
// not forwarded.
func TestSignedDeclarationForwardedCapped(t *testing.T) {
	var peers []string
	for i := range 20 {
		peers = append(peers, fmt.Sprintf("m%02d", i))
	}
	a := signedTest(t, "a", ModeLifeguard, peers...)
	a.Tick(0)
	drain(a)
	for _, id := range []string{"m01", "m02"} {
		require.NoError(t, a.Step(time.Millisecond, gossipFrom("m00", Update{Kind: UpdateSuspect, Node: node(id), From: "m00"})))
	}
	drain(a)

	require.NoError(t, a.Step(10*time.Millisecond, gossipFrom("m19", Update{Kind: UpdateDead, Node: node("m01"), Incarnation: 5, From: "m00"})))
	pk, _ := drain(a)
	fw := only(t, pk, MsgGossip)
	require.Len(t, fw, DefaultGossipFanout)
	seen := 0
	for _, p := range fw {
		for _, u := range p.Updates {
			if u.Node.ID == "m01" {
				seen++
				assert.Equal(t, UpdateDead, u.Kind)
				assert.Equal(t, Incarnation(0), u.Incarnation, "capped to what m01 asserted")
			}
		}
	}
	assert.Equal(t, DefaultGossipFanout, seen, "each forwarded packet carries the declaration")
	assert.Equal(t, StateDead, a.State("m01"))

	require.NoError(t, a.Step(20*time.Millisecond, gossipFrom("m19", Update{Kind: UpdateDead, Node: node("m02"), Incarnation: 1, From: "m02"})))
	pk, _ = drain(a)
	assert.Empty(t, only(t, pk, MsgGossip), "an unsigned leave")
	assert.Equal(t, StateSuspect, a.State("m02"))
}
