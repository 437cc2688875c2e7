package swim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk30d F1: in a view full of live members (MaxMembers above
// forgetScan), a flood of broadcasts from made-up origins relayed by a
// live member still forgets live members' windows: at the bound at most
// one window is of an origin not held live, and forgettableOrigin scans
// only the first forgetScan the map yields, so it misses that one with
// probability (MaxMembers-forgetScan)/MaxMembers and forgets a live one.
// The live members' earlier broadcasts were then delivered again; now a
// made-up origin's broadcast that finds no such window is refused
// (Stats.BroadcastOriginsRefused).
func TestLiveOriginWindowsOutliveFloodFullView(t *testing.T) {
	const n = 200
	peers := make([]string, n-1)
	for i := range peers {
		peers[i] = fmt.Sprintf("p%03d", i)
	}
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.MaxMembers = n }, peers...)
	live := 0
	for _, p := range a.peers {
		if p.state == StateAlive || p.state == StateSuspect {
			live++
		}
	}
	require.Equal(t, n-1, live, "every peer held live")
	send := func(origin ID, seq uint64) int {
		pk := Packet{Kind: MsgGossip, From: node("p000"), To: node("a"),
			Broadcasts: []Broadcast{{Origin: origin, Seq: seq, Data: []byte("x")}}}
		require.NoError(t, a.Step(0, &pk))
		return len(a.Ready().Messages)
	}
	for _, p := range peers {
		require.Equal(t, 1, send(ID(p), 1), "%s", p)
	}
	for i := range 1000 {
		send(ID(fmt.Sprintf("made-up-%d", i)), 1)
	}
	again := 0
	for _, p := range peers {
		again += send(ID(p), 1)
	}
	assert.Zero(t, again, "live members' broadcasts delivered again after the flood; origins forgotten %d",
		a.Stats().BroadcastOriginsForgotten)
	assert.Positive(t, a.Stats().BroadcastOriginsRefused)
}
