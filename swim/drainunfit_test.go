package swim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A queued update that no gossip packet can carry (a member with long
// metadata, learnt from a member with a larger MaxPacketSize or through a
// stream) keeps no drain round going: it would be skipped at every round,
// never counted as sent, and the member would wake every GossipInterval
// for as long as it stays queued.
func TestDrainLoopIgnoresUpdatesThatFitNoPacket(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxPacketSize = 400 }, "b", "c", "d", "e")
	a.Tick(0)
	drain(a)
	big := Update{Kind: UpdateAlive, Node: node("big"), From: "big",
		Versions: VersionRange{Min: 1, Max: 2}, Meta: strings.Repeat("m", 400)}
	p := Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{big}}
	require.NoError(t, a.Step(50*time.Millisecond, &p))
	drain(a)
	require.Equal(t, 1, a.Queued())
	at, _ := a.NextDeadline()
	assert.Greater(t, at, 200*time.Millisecond, "no drain round for an update no packet can carry")

	// One that fits is drained as usual.
	small := Update{Kind: UpdateAlive, Node: node("f"), From: "f"}
	p = Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{small}}
	require.NoError(t, a.Step(60*time.Millisecond, &p))
	at, _ = a.NextDeadline()
	assert.Equal(t, 200*time.Millisecond, at)
}
