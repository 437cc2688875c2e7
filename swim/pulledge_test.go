package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pullMember is b of {b, a, c} with both pull bounds at 1, past its first
// probe.
func pullMember(t *testing.T) *Member {
	t.Helper()
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.PullsPerSender, c.PullsPerPeriod = 1, 1 }, "a", "c")
	b.Tick(0)
	drain(b)
	return b
}

// views counts the views b sent since the last drain, by address.
func views(b *Member) map[string]int {
	pk, _ := drain(b)
	return viewsSent(pk)
}

// With both bounds at 1, a window of one ProbeInterval starts at the
// first pull after the last window ended: a pull 1 ns before its end is
// refused, one at its end is answered and opens the next window.
func TestPullBoundOneAtWindowEdges(t *testing.T) {
	b := pullMember(t)
	x := Node{ID: "x", Addr: "x:7946"}
	start := 100 * time.Millisecond
	pi := b.Config().ProbeInterval
	for _, c := range []struct {
		at       time.Duration
		answered bool
	}{
		{start, true},
		{start + pi - 1, false},
		{start + pi, true},
		{start + pi + 1, false},
		{start + 3*pi, true},
	} {
		require.NoError(t, b.Step(c.at, pullFrom(b.Self(), x, ViewDigest{})))
		n := 0
		if c.answered {
			n = 1
		}
		assert.Equal(t, n, views(b)["x:7946"], "pull at %v", c.at)
	}
	assert.Equal(t, 2, b.Stats().PullsRefused)
}

// One ID at many addresses gets no more than PullsPerPeriod answers in
// all; a pull without a sender address from an unknown ID is malformed
// and not answered; a known ID that leaves its address out is counted at the
// address the view holds for it, with its pulls from that address.
func TestPullBoundOneManyAddressesAndNone(t *testing.T) {
	b := pullMember(t)
	for i := range 100 {
		x := Node{ID: "x", Addr: fmt.Sprintf("x%d:7946", i)}
		require.NoError(t, b.Step(100*time.Millisecond, pullFrom(b.Self(), x, ViewDigest{})))
	}
	total := 0
	for _, n := range views(b) {
		total += n
	}
	assert.Equal(t, 1, total, "one ID at 100 addresses, PullsPerPeriod 1")
	// The 99 others claim x, held at its first address: refused as ID
	// conflicts (refuseJoin), each with one small MsgSync holding x's
	// entry and no view, before the pull bound is consulted.
	assert.Equal(t, 99, b.Stats().Conflicts)
	assert.Zero(t, b.Stats().PullsRefused)

	b = pullMember(t)
	b.cfg.PullsPerPeriod = 100
	// A pull without a sender address from an ID not in the view has
	// nobody to answer: a malformed packet, not a pull.
	for range 10 {
		pkt := &Packet{Kind: MsgJoin, From: Node{ID: "y"}, To: b.Self()}
		require.Error(t, b.Step(100*time.Millisecond, pkt))
		require.Error(t, b.Step(100*time.Millisecond, pullFrom(b.Self(), Node{ID: "y"}, ViewDigest{})))
	}
	assert.Empty(t, views(b))
	assert.Zero(t, b.Stats().PullsRefused)

	for _, from := range []Node{{ID: "c"}, node("c"), {ID: "c"}} {
		pkt := &Packet{Kind: MsgJoin, From: from, To: b.Self(), Digest: ViewDigest{Members: 9, Hash: 1}}
		require.NoError(t, b.Step(200*time.Millisecond, pkt))
	}
	assert.Equal(t, 1, views(b)[node("c").Addr])
	assert.Equal(t, 2, b.Stats().PullsRefused, "c with and without its address: one bucket")
}
