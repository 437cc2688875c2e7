package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinStorm starts n members with empty views; members 1…n−1 join through
// member 0 alone, member i at 1 s + i·gap (gap 0: all at once). It returns
// the longest and the mean time from a member's Join to the first other
// member in its view (when its Join would return), and the time from the
// first Join until every member holds all n alive, each sampled every
// 10 ms; −1 when not reached within 60 s.
func joinStorm(t *testing.T, n int, seed uint64, gap time.Duration) (longest, mean, full time.Duration, refused int) {
	t.Helper()
	s, err := New(Config{N: n, Seed: seed, NoBootstrap: true, StartSpread: time.Second})
	require.NoError(t, err)
	const start = time.Second
	joinAt := make([]time.Duration, n)
	answered := make([]time.Duration, n)
	for i := 1; i < n; i++ {
		joinAt[i], answered[i] = start+time.Duration(i)*gap, -1
		s.At(joinAt[i], func() { assert.NoError(t, s.Join(i, 0)) })
	}
	full = -1
	var sum time.Duration
	left := n - 1
	for at := start; at <= start+60*time.Second && (left > 0 || full < 0); at += 10 * time.Millisecond {
		s.RunUntil(at)
		all := true
		for i := 1; i < n; i++ {
			k := s.Member(i).NumAlive()
			if answered[i] < 0 && at >= joinAt[i] && k > 1 {
				answered[i] = at - joinAt[i]
				longest = max(longest, answered[i])
				sum += answered[i]
				left--
			}
			all = all && k == n
		}
		if full < 0 && all && s.Member(0).NumAlive() == n {
			full = at - start
		}
	}
	for i := range n {
		refused += s.Member(i).Stats().PullsRefused
	}
	if left > 0 {
		return -1, -1, full, refused
	}
	return longest, sum / time.Duration(n-1), full, refused
}

// TestJoinStormThroughOneSeed: 63 members joining through one seed within
// 0.2 s (or at one instant) are all answered at their first attempt, with
// no retry (a retry comes a ProbeInterval later), and reach a full view
// within 60 s; no pull is refused. The pull bound (swim.Config.PullsPerSender,
// PullsPerPeriod) must leave room for a group forming through one seed: with
// PullsPerPeriod 8, joins wait for retries and this fails.
func TestJoinStormThroughOneSeed(t *testing.T) {
	const n = 64
	for _, gap := range []time.Duration{3 * time.Millisecond, 0} {
		for seed := uint64(1); seed <= 3; seed++ {
			longest, mean, full, refused := joinStorm(t, n, seed, gap)
			t.Logf("gap %v, seed %d: join answered after %v at most (mean %v), full view after %v, %d pulls refused",
				gap, seed, longest, mean, full, refused)
			require.GreaterOrEqual(t, longest, time.Duration(0), "gap %v, seed %d: a join never answered", gap, seed)
			assert.Less(t, longest, time.Second, "gap %v, seed %d: a join needed a retry", gap, seed)
			assert.GreaterOrEqual(t, full, time.Duration(0), "gap %v, seed %d: no full view within 60 s", gap, seed)
			assert.Zero(t, refused, "gap %v, seed %d: pulls refused in a legitimate join storm", gap, seed)
		}
	}
}

// TestJoinStormFullViewSoon: 63 members joining through one seed within
// 0.2 s (or at one instant) all hold all 64 members within 8 s of the first
// join, 127 within 10 s at N = 128 and 199 within 12 s at N = 200 (not in
// -short). Beyond the unverified quota (64 members) each joiner must take
// the seed's view as its answer even when another member's view comes
// first: taking that one instead left views 60 members short for good
// at N = 150 and 200. The join announcements
// die out before every earlier member has heard of every later one (each
// joiner learns the earlier ones from the seed's view and passes none of
// them on); the settling exchange (swim's settlePull, three periods after
// the last member learnt by gossip) mends the rest. Without it a few pairs
// waited for a probe or the first periodic exchange: full view after
// 4.7–50.2 s at N = 64 over seeds 1–8 and both spacings (15 of 16 runs
// above 8 s), and only 5 of 16 runs within 60 s at N = 128 (38–48 s);
// with it 3.5–5.1 s and 3.8–7.3 s.
func TestJoinStormFullViewSoon(t *testing.T) {
	type size struct {
		n     int
		bound time.Duration
	}
	sizes := []size{{64, 8 * time.Second}}
	if !testing.Short() {
		sizes = append(sizes, size{128, 10 * time.Second}, size{200, 12 * time.Second})
	}
	for _, sz := range sizes {
		n, bound := sz.n, sz.bound
		for _, gap := range []time.Duration{3 * time.Millisecond, 0} {
			for seed := uint64(1); seed <= 4; seed++ {
				_, _, full, _ := joinStorm(t, n, seed, gap)
				t.Logf("N = %d, gap %v, seed %d: full view after %v", n, gap, seed, full)
				assert.GreaterOrEqual(t, full, time.Duration(0), "N = %d, gap %v, seed %d: no full view within 60 s", n, gap, seed)
				assert.LessOrEqual(t, full, bound, "N = %d, gap %v, seed %d: full view", n, gap, seed)
			}
		}
	}
}
