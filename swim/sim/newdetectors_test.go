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

// 2W-FD, Satzger's detector and κ-FD as SWIM's per-peer suspicion source
// (ModeDetector, swim.Config.PeerDetector): every crash is still declared
// dead by every live member. The messages heard from a peer carry no
// sequence numbers and are irregular, so the NFD-E based detectors number
// them by arrival with Δ = the protocol period.
func TestNewDetectorsAsPeerDetector(t *testing.T) {
	for name, f := range map[string]func() (detector.Detector, error){
		"2w-fd": func() (detector.Detector, error) {
			return twowfd.New(twowfd.Config{Interval: swim.DefaultProbeInterval, LongWindow: swim.DefaultPeerWindow})
		},
		"satzger": func() (detector.Detector, error) {
			return satzger.New(satzger.Config{WindowSize: swim.DefaultPeerWindow})
		},
		"kappa": func() (detector.Detector, error) {
			return kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{Interval: swim.DefaultProbeInterval, WindowSize: swim.DefaultPeerWindow}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := Detection(16, 5, 11, swim.Config{Mode: swim.ModeDetector, PeerDetector: f})
			require.NoError(t, err)
			assert.Equal(t, 5, res.Crashes)
			assert.Zero(t, res.Undetected)
			assert.Less(t, res.AllDead, float64(60*time.Second/swim.DefaultProbeInterval))
		})
	}
}
