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

// TestPullFloodFromOneSender: a peer that sends 1,000 pulls within one
// protocol period (joins, view requests, anti-entropy digests that differ)
// gets PullsPerSender of them answered, the rest refused and counted,
// whichever IDs it claims at its address; the next period it is answered
// again. Before the bound every pull cost a digest over the view and a
// whole view sent back: an amplification.
func TestPullFloodFromOneSender(t *testing.T) {
	for _, name := range []string{"joins", "digests", "IDs"} {
		t.Run(name, func(t *testing.T) {
			peers := make([]string, 40)
			for i := range peers {
				peers[i] = fmt.Sprintf("p%02d", i)
			}
			b := newTest(t, "b", ModeLifeguard, nil, peers...)
			b.Tick(0)
			drain(b)
			now := 100 * time.Millisecond
			for i := range 1000 {
				x := Node{ID: "x", Addr: "x:7946"}
				var d ViewDigest
				switch name {
				case "digests":
					d = ViewDigest{Members: 3, Hash: uint64(i)}
				case "IDs":
					x.ID = ID(fmt.Sprintf("x%d", i))
				}
				require.NoError(t, b.Step(now+time.Duration(i)*time.Microsecond, pullFrom(b.Self(), x, d)))
			}
			pk, _ := drain(b)
			views := viewsSent(pk)
			assert.Equal(t, DefaultPullsPerSender, views["x:7946"], "views sent to the flooding address")
			assert.Equal(t, 1000-DefaultPullsPerSender, b.Stats().PullsRefused)
			if name == "digests" {
				assert.Equal(t, DefaultPullsPerSender, b.Stats().DigestMismatches, "no digest computed for a refused pull")
			}
			// The next period, the sender is answered again.
			require.NoError(t, b.Step(now+DefaultProbeInterval, pullFrom(b.Self(), Node{ID: "x", Addr: "x:7946"}, ViewDigest{})))
			pk, _ = drain(b)
			assert.Equal(t, 1, viewsSent(pk)["x:7946"])
		})
	}
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

// TestPullBoundConfig: the bounds' defaults, and negative values refused.
func TestPullBoundConfig(t *testing.T) {
	m := newTest(t, "a", ModeLifeguard, nil)
	assert.Equal(t, 2, m.Config().PullsPerSender)
	assert.Equal(t, 128, m.Config().PullsPerPeriod)
	for _, mut := range []func(*Config){
		func(c *Config) { c.PullsPerSender = -1 },
		func(c *Config) { c.PullsPerPeriod = -1 },
	} {
		cfg := Config{Self: node("a")}
		mut(&cfg)
		_, err := New(cfg, newTestRand())
		assert.ErrorIs(t, err, ErrConfig)
	}
}
