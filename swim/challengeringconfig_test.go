package swim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk30 F4: the challenges' ring (challengesKept) is allocated at the
// first challenge with 2 × PullsPerPeriod entries, and PullsPerPeriod has
// no upper bound: a configuration that sets it high to leave pulls
// unbounded (valid since PullsPerPeriod exists, and harmless before
// 6cb9b34, where it was only a count) makes the first forged join
// allocate 2 × PullsPerPeriod × 24 bytes, or, past math.MaxInt/2, panic
// on a negative length. The values here panic without allocating (the
// overflow, and a length over the allocator's limit); math.MaxInt32
// would ask for about 100 GB. Config.Validate must bound it, or the ring
// must not grow with it.
func TestChallengeRingHugePullsPerPeriod(t *testing.T) {
	for _, pulls := range []int{math.MaxInt, 1 << 44} {
		var a *Member
		func() {
			defer func() {
				if r := recover(); r != nil {
					a = nil
				}
			}()
			a = newTest(t, "a", ModeSWIM, func(c *Config) { c.PullsPerPeriod = pulls }, "b")
		}()
		if a == nil {
			continue // refused at New: fine
		}
		a.join.noChallenge = false
		f, g := node("f"), node("g")
		assert.NotPanics(t, func() {
			_ = a.Step(time.Millisecond, &Packet{Kind: MsgJoin, From: f, To: Node{Addr: "a:7946"},
				Updates: []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}})
			// g, told of by b, then heard from: a challenge of an
			// unverified member, the ring's (receipt.go).
			_ = a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}})
			_ = a.Step(3*time.Millisecond, &Packet{Kind: MsgPing, From: g, To: node("a"), Ping: Ping{Seq: 1, MatchBySeq: true}})
		}, "PullsPerPeriod %d: a forged join's challenge", pulls)
		assert.Positive(t, a.Stats().VerifyChallenges, "PullsPerPeriod %d", pulls)
		require.LessOrEqual(t, cap(a.probing.sentChallenges.ring), 1<<16, "PullsPerPeriod %d: ring entries", pulls)
	}
}
