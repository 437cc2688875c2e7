package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// The live case a reviewer found in a 3-agent fdswim group: two members
// hear each other at a steady rhythm for minutes (the third is dead), then
// the third rejoins and the rhythm at which each hears the other changes
// (their probes now alternate between two targets). With the phi
// package's defaults (σ floor μ/100, no pause, SkipIfSuspected on) the
// default peer detector then suspected the healthy peer for good: every
// longer interval arrived after τ and was left out of the window. With
// swim.DefaultPeerDetectorFor(ProbeInterval) no healthy member's detector
// suspects a healthy peer at any instant sampled every 250 ms over the
// minute after the rejoin, for 40 phases of the periods (seeds); before the
// change 6 of them did (seeds 6, 10, 15, 23, 32, 36; φ up to 127).
func TestRejoinDoesNotMakeDetectorsSuspect(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		s, err := New(Config{N: 3, Seed: seed, Member: swim.Config{Mode: swim.ModeDetector}, StartSpread: time.Second})
		require.NoError(t, err)
		s.RunUntil(5 * time.Second)
		s.Crash(2)
		s.RunUntil(120 * time.Second) // the pair alone, well past c's declaration
		require.Equal(t, swim.StateDead, s.Member(0).State(s.Node(2).ID), "seed %d", seed)
		require.NoError(t, s.Restart(2, 0))
		suspected, worst := 0, 0.0
		for now := 121 * time.Second; now <= 180*time.Second; now += 250 * time.Millisecond {
			s.RunUntil(now)
			for i := range 2 {
				peer := s.Node(1 - i).ID
				for _, st := range s.Member(i).Members(now) {
					if st.Node.ID == peer {
						if st.Suspected {
							suspected++
						}
						worst = max(worst, st.Level)
					}
				}
			}
		}
		assert.Zero(t, suspected, "seed %d: samples where a member's detector suspected its healthy peer (worst level %.4g)", seed, worst)
		assert.Less(t, worst, 8.0, "seed %d: worst level of a healthy peer", seed)
	}
}
