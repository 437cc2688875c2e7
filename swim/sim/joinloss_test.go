package sim

import (
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinLossy starts n members with empty views; members 1…n−1 join
// through member 0, member i at 1 s + i·gap, every datagram lost with
// probability loss. It returns the time from the last Join until every
// member holds all n alive, sampled every 10 ms; −1 when not reached
// within 60 s.
func joinLossy(t *testing.T, n int, seed uint64, gap time.Duration, loss float64) time.Duration {
	t.Helper()
	s, err := New(Config{N: n, Seed: seed, NoBootstrap: true, StartSpread: time.Second, Loss: loss})
	require.NoError(t, err)
	const start = time.Second
	for i := 1; i < n; i++ {
		s.At(start+time.Duration(i)*gap, func() { assert.NoError(t, s.Join(i, 0)) })
	}
	last := start + time.Duration(n-1)*gap
	for at := last; at <= last+60*time.Second; at += 10 * time.Millisecond {
		s.RunUntil(at)
		all := true
		for i := 0; i < n && all; i++ {
			all = s.Member(i).NumAlive() == n
		}
		if all {
			return at - last
		}
	}
	return -1
}

// joinLossyRuns runs joinLossy for 32 members joining 1 s apart with
// loss, over the seeds 100 to 100+runs−1, and returns the times sorted (a
// run without a full view within 60 s counts as 99 s).
func joinLossyRuns(t *testing.T, runs int, loss float64) []time.Duration {
	t.Helper()
	var fulls []time.Duration
	for seed := uint64(100); seed < 100+uint64(runs); seed++ {
		full := joinLossy(t, 32, seed, time.Second, loss)
		if full < 0 {
			full = 99 * time.Second
		}
		fulls = append(fulls, full)
	}
	slices.Sort(fulls)
	return fulls
}

// TestJoinUnderLossFullView: 32 members join through one seed 1 s apart
// while 20 % of all datagrams are lost; over 400 seeds, at most a fifth of
// the runs take more than 10 s from the last join until every member
// holds all 32, and the 90th percentile is at most 25 s. A member that
// missed a joiner's announcement and every copy of it learns of the joiner
// when the joiner's next packet makes it ask for the joiner's view; that
// exchange takes up to four datagrams (the joiner challenges the
// request), and when one was lost the member waited for the joiner's
// next probe of it, a pass of the ring later, or for an anti-entropy
// exchange, which one settling exchange per interval held back when the
// member had settled after an earlier join. Over 40 seeds, with neither
// the retried view request (swim/viewretry.go) nor a second settling
// exchange per interval (settleBurst), 14 runs took more than 10 s and the
// 90th percentile was 35.7 s; with the retry alone 7 and 15.8 s; with both
// 4 and 9.1 s, and 7 and 12.4 s once the detector gate's retry ended with
// its period (other suspicions under this loss; TestSecondJoinSettles
// checks the settling exchange alone). 200 runs are in docs/experiments.md,
// “SWIM: retried view requests”.
//
// The sample was 40 seeds with a bound of 20 s on the 90th percentile
// until the distribution of 6,000 seeds showed that bound a lottery:
// about 7.8 % of the runs take over 20 s, so 29 of 150 disjoint samples
// of 40 seeds exceed it at the same code, and a change that only redraws
// the random trajectories turned the test red (docs/experiments.md,
// “Refutations and restatements to members not verified (F1)”). Of 15
// disjoint samples of 400 seeds, at the code of this test and of the one
// before it, none has over 69 runs above 10 s or a 90th percentile over
// 25 s, nor at 8d7f0e0 (no ping-reqs for members not verified) over 64
// or 19.3 s (docs/experiments.md, “SWIM: what a ghost costs its
// victim”); the variant without retry and settling exchange (over 40 seeds
// 35 % above 10 s, 90th percentile 35.7 s) is well past both bounds.
func TestJoinUnderLossFullView(t *testing.T) {
	if testing.Short() && raceOn {
		t.Skip("400 joins of 32 members under -race")
	}
	const runs = 400
	fulls := joinLossyRuns(t, runs, 0.2)
	p90 := fulls[(runs*9+9)/10-1] // nearest rank
	t.Logf("full view after the last join: median %v, p90 %v, max %v", fulls[runs/2], p90, fulls[runs-1])
	over := len(fulls) - sort.Search(len(fulls), func(i int) bool { return fulls[i] > 10*time.Second })
	assert.LessOrEqual(t, over, runs/5, "runs above 10 s")
	assert.LessOrEqual(t, p90, 25*time.Second, "90th percentile")
}
