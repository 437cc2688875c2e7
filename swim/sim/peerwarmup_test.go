package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/swim"
)

// detectorsOnHealthy counts, over every ordered pair of a healthy group,
// the detectors that say they suspect the peer (PeerStatus.Suspected), the
// ones whose level is past Θ = 8 whatever their warm-up, and the ones
// warmed up.
func detectorsOnHealthy(s *Sim, n int, now time.Duration) (suspected, past8, warm int) {
	for i := range n {
		for _, st := range s.Member(i).Members(now)[1:] {
			if st.Suspected {
				suspected++
			}
			if st.Level > 8 {
				past8++
			}
			if !st.WarmingUp {
				warm++
			}
		}
	}
	return suspected, past8, warm
}

// In a group of n a member hears a given peer about every (n−1)/2 periods,
// so a fresh per-peer φ rests for minutes on its bootstrap (μ = 1 period)
// or on two or three intervals: 20 s after a group of 32 formed, the level
// of more than half of its detectors is past Θ although every peer is
// healthy. PeerStatus.Suspected and the ModeDetector gate must not take
// that verdict as is: a detector says nothing while WarmingUp, and the
// default one needs swim.DefaultPeerMinSamples (8) intervals: with phi's
// default of 2 some warmed-up detectors still suspected healthy peers a
// minute in. That is in SWIM's shuffled probe order (ShuffledProbes),
// where a member hears a peer 1 to 2(n−1)−1 periods apart; on the ring the
// two hear each other once per n−1 rounds each way, regular enough that
// two intervals misled no detector of this run, and the default is the
// same for both orders. Figures: go test -run TestPeerDetectorWarmUp -v ./swim/sim
func TestPeerDetectorWarmUp(t *testing.T) {
	const n = 32
	two := func() (detector.Detector, error) {
		return phi.NewNormal(phi.NormalConfig{
			WindowSize:        swim.DefaultPeerWindow,
			MinStdDev:         new(time.Second / swim.DefaultPeerMinStdDevDivisor),
			AcceptablePause:   new(swim.DefaultPeerPausePeriods * time.Second),
			BootstrapInterval: new(time.Second),
			SkipIfSuspected:   new(false),
			MinSamples:        new(2),
		})
	}
	pairs := n * (n - 1)
	for _, c := range []struct {
		name string
		det  func() (detector.Detector, error)
	}{{"MinSamples 2", two}, {"default", nil}} {
		s, err := New(Config{N: n, Seed: 11, Member: swim.Config{Mode: swim.ModeDetector, PeerDetector: c.det, ShuffledProbes: true}, StartSpread: time.Second})
		require.NoError(t, err)
		var suspSum int
		for _, at := range []time.Duration{20 * time.Second, 60 * time.Second, 120 * time.Second, 300 * time.Second} {
			s.RunUntil(at)
			susp, past8, warm := detectorsOnHealthy(s, n, at)
			t.Logf("%s, %v: %d of %d detectors suspect a healthy peer, %d past Θ, %d warmed up", c.name, at, susp, pairs, past8, warm)
			suspSum += susp
			if at == 20*time.Second {
				assert.Greater(t, past8, pairs/4, "%s: cold detectors past Θ on healthy peers (why they must not judge)", c.name)
			}
			if c.det == nil {
				assert.Zero(t, susp, "%v: a default detector suspects a healthy peer", at)
				if at == 300*time.Second {
					assert.Equal(t, pairs, warm, "every default detector warmed up after 300 periods")
				}
			}
		}
		if c.det != nil {
			assert.Positive(t, suspSum, "MinSamples 2: detectors warmed up on two intervals suspect healthy peers (why the default needs 8)")
		}
	}
}
