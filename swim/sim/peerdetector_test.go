package sim

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/twowfd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peerHeardInterval is Δ for the NFD-E based detectors below: about the
// mean interval at which a member of a group of 8 hears from a given peer
// (the messages carry no sequence numbers, so the detectors number them by
// arrival, and a Δ shorter than the real interval makes their expected
// arrivals fall further behind at every message: with Δ = the protocol
// period, κ-FD suspected every live peer all the time in this group and
// 2W-FD about half the time, and the detector gate of ModeDetector never
// acted).
const peerHeardInterval = 4 * time.Second

var newPeerDetectors = map[string]func() (detector.Detector, error){
	"2w-fd": func() (detector.Detector, error) {
		return twowfd.New(twowfd.Config{Interval: peerHeardInterval, LongWindowSize: swim.DefaultPeerWindow})
	},
	"satzger": func() (detector.Detector, error) {
		return satzger.New(satzger.Config{WindowSize: swim.DefaultPeerWindow})
	},
	"kappa": func() (detector.Detector, error) {
		return kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{Interval: peerHeardInterval, WindowSize: swim.DefaultPeerWindow}})
	},
}

// 2W-FD, Satzger's detector and κ-FD as SWIM's per-peer suspicion source
// (ModeDetector, swim.Config.PeerDetector): every crash is still declared
// dead by every live member.
func TestTwoWSatzgerKappaAsPeerDetector(t *testing.T) {
	for name, f := range newPeerDetectors {
		t.Run(name, func(t *testing.T) {
			res, err := Detection(16, 5, 11, swim.Config{Mode: swim.ModeDetector, PeerDetector: f})
			require.NoError(t, err)
			assert.Equal(t, 5, res.Crashes)
			assert.Zero(t, res.Undetected)
			assert.Less(t, res.AllDead, float64(60*time.Second/swim.DefaultProbeInterval))
		})
	}
}

// The per-peer detectors are really the suspicion source: in a healthy
// group they trust the live peers (a detector that always suspects fails
// here, and the gate of ModeDetector would never act), and after a crash
// the crashed peer's detector at every live member that still lists it
// suspects it (a detector that never suspects fails here).
func TestTwoWSatzgerKappaPeerVerdicts(t *testing.T) {
	const n, victim = 8, 3
	for name, f := range newPeerDetectors {
		t.Run(name, func(t *testing.T) {
			s, err := New(Config{N: n, Seed: 5, Member: swim.Config{Mode: swim.ModeDetector, PeerDetector: f}})
			require.NoError(t, err)
			susp, total := 0, 0
			for at := 60 * time.Second; at < 240*time.Second; at += 250 * time.Millisecond {
				s.RunUntil(at)
				for i := range n {
					for _, ps := range s.Member(i).Members(at) {
						if ps.Node.ID == s.Node(i).ID {
							continue
						}
						total++
						if ps.Suspected {
							susp++
						}
					}
				}
			}
			require.Equal(t, (n-1)*n*720, total, "every member lists every live peer")
			assert.Less(t, float64(susp)/float64(total), 0.02, "live peers suspected by their detectors")

			crash := 240 * time.Second
			s.Crash(victim)
			after := crash + 30*time.Second
			s.RunUntil(after)
			listed := 0
			for i := range n {
				if i == victim {
					continue
				}
				ps, ok := s.Member(i).Member(s.Node(victim).ID, after)
				if !ok {
					continue
				}
				listed++
				assert.True(t, ps.Suspected, "member %d's detector of the crashed member %d", i, victim)
			}
			assert.Positive(t, listed, "no live member lists the crashed one any more: the check is empty")
		})
	}
}
