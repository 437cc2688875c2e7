package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinSuspicions starts 32 members with empty views; member i joins
// through member 0 at (1+i) s, every datagram lost with probability loss,
// and the group runs until 92 s. No member crashes, so every suspicion is
// false. It returns the suspicions all members raised themselves and
// their failed probes (swim.Stats).
func joinSuspicions(t *testing.T, seed uint64, loss float64) (suspicions, failed int) {
	t.Helper()
	const n = 32
	s, err := New(Config{N: n, Seed: seed, NoBootstrap: true, StartSpread: time.Second, Loss: loss})
	require.NoError(t, err)
	for i := 1; i < n; i++ {
		s.At(time.Duration(1+i)*time.Second, func() { assert.NoError(t, s.Join(i, 0)) })
	}
	s.RunUntil(92 * time.Second)
	for i := range n {
		st := s.Member(i).Stats()
		suspicions += st.Suspicions
		failed += st.ProbesFailed
	}
	return suspicions, failed
}

// joinSuspicionsOver sums joinSuspicions over the seeds from, from+1, …,
// from+runs−1.
func joinSuspicionsOver(t *testing.T, from uint64, runs int, loss float64) (suspicions, failed int) {
	t.Helper()
	for seed := from; seed < from+uint64(runs); seed++ {
		s, f := joinSuspicions(t, seed, loss)
		suspicions += s
		failed += f
	}
	return suspicions, failed
}

// TestJoinUnderLossFewFalseSuspicions: 32 members join through one seed
// while 1 % and 5 % of all datagrams are lost, over the sim seeds 100–159,
// and the suspicions of live members stay within 3× those before
// verification by proof of receipt (83684bc: 2 at 1 %, 36 at 5 %). With
// the unanswered challenge standing for the next probe and one failed
// probe suspecting a member not verified, they were 116 and 411: a real
// joiner's lost challenge or ack made its next probe fail for certain
// (docs/experiments.md, “SWIM: real joiners under loss and the
// challenge ledger”, with the session 19 review's counts). The 120
// runs take about 2 s of CPU, so the test runs under -short too.
func TestJoinUnderLossFewFalseSuspicions(t *testing.T) {
	for _, c := range []struct {
		loss   float64
		before int // at 83684bc
	}{{0.01, 2}, {0.05, 36}} {
		s, f := joinSuspicionsOver(t, 100, 60, c.loss)
		t.Logf("loss %.0f %%: %d suspicions, %d failed probes over seeds 100-159 (83684bc: %d)", 100*c.loss, s, f, c.before)
		assert.LessOrEqual(t, s, 3*c.before, "loss %.0f %%", 100*c.loss)
	}
}
