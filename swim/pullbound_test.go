package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pullFrom is a pull (MsgJoin) from n carrying n's Alive, with digest d
// (zero: a join or a view request).
func pullFrom(to, n Node, d ViewDigest) *Packet {
	return &Packet{Kind: MsgJoin, From: n, To: to, Digest: d,
		Updates: []Update{{Kind: UpdateAlive, Node: n, From: n.ID}}}
}

// viewsSent counts the views in pk by address: every view's first MsgSync
// packet starts with the sender's own Alive.
func viewsSent(pk []Packet) map[string]int {
	views := map[string]int{}
	for _, p := range pk {
		if p.Kind == MsgSync && p.Updates[0].Node.ID == p.From.ID {
			views[p.To.Addr]++
		}
	}
	return views
}

// TestPullFloodFromManySenders: pulls from 1,000 addresses within one
// period get PullsPerPeriod answers in all; an answer to this member's own
// exchange (the view request of the member it sent its digest to) is never
// refused.
func TestPullFloodFromManySenders(t *testing.T) {
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.PullsPerPeriod = 50 }, "a", "c")
	b.Tick(0)
	drain(b)
	b.list = []*peer{b.peers["a"]}
	b.pushPull(0)
	drain(b)
	now := 100 * time.Millisecond
	for i := range 1000 {
		x := Node{ID: ID(fmt.Sprintf("x%d", i)), Addr: fmt.Sprintf("x%d:7946", i)}
		require.NoError(t, b.Step(now, pullFrom(b.Self(), x, ViewDigest{})))
	}
	pk, _ := drain(b)
	total := 0
	for _, n := range viewsSent(pk) {
		total += n
	}
	assert.Equal(t, 50, total)
	assert.Equal(t, 950, b.Stats().PullsRefused)
	// a's request for this member's view, in answer to its digest, is
	// answered over the spent budget.
	require.NoError(t, b.Step(now, pullFrom(b.Self(), node("a"), ViewDigest{})))
	pk, _ = drain(b)
	assert.Equal(t, 1, viewsSent(pk)[node("a").Addr])
	assert.Equal(t, 950, b.Stats().PullsRefused)
}
