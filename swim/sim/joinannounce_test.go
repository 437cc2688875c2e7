package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestJoinFullViewAtOnce: n−1 members joining one after the other through
// one seed, 3 ms apart (bench/memberlist's single-seed start), all hold
// all n members within 0.5 s of the last join at n = 8, 32 and 64, over
// seeds not used elsewhere. The joiners' announcements (swim's
// announceJoin) reach every member the seed's view names; without them
// the seed's rumour left a residue that waited for the settling exchange:
// 0.4–4.65 s at n = 8, 0.65–3.65 s at 32, 3.7–4.85 s at 64 over seeds 11–16.
func TestJoinFullViewAtOnce(t *testing.T) {
	const gap = 3 * time.Millisecond
	for _, n := range []int{8, 32, 64} {
		for seed := uint64(11); seed <= 16; seed++ {
			s, err := New(Config{N: n, Seed: seed, NoBootstrap: true, StartSpread: time.Second,
				Member: swim.Config{Mode: swim.ModeDetector}})
			require.NoError(t, err)
			const start = time.Second
			for i := 1; i < n; i++ {
				s.At(start+time.Duration(i)*gap, func() { assert.NoError(t, s.Join(i, 0)) })
			}
			last := start + time.Duration(n-1)*gap
			full := time.Duration(-1)
			for at := last; at <= last+10*time.Second; at += 10 * time.Millisecond {
				s.RunUntil(at)
				all := true
				for i := 0; i < n && all; i++ {
					all = s.Member(i).NumAlive() == n
				}
				if all {
					full = at - last
					break
				}
			}
			assert.GreaterOrEqual(t, full, time.Duration(0), "n = %d, seed %d: no full view within 10 s", n, seed)
			assert.LessOrEqual(t, full, 500*time.Millisecond, "n = %d, seed %d: full view after the last join", n, seed)
		}
	}
}
