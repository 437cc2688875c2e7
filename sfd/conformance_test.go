package sfd_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/sfd"
)

// The conformance kit on the defaults (no targets: NFD-E with α = Δ) and on
// adapting detectors with short slots, arrival- and send-time-based TD.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]sfd.Config{
		"default": {},
		"adapting": {Estimator: chen.EstimatorConfig{WindowSize: 10}, MinSamples: 3, SlotHeartbeats: 5,
			Step: 5 * time.Millisecond, MinMargin: time.Millisecond,
			Targets: sfd.Targets{MaxTD: 150 * time.Millisecond, MaxMistakesPerSecond: 0.05, MinQAP: 0.99}},
		"send-time": {Estimator: chen.EstimatorConfig{WindowSize: 4}, SlotHeartbeats: 3, UseSendTime: true,
			OneWayDelay: 10 * time.Millisecond, Targets: sfd.Targets{MaxTD: 20 * time.Millisecond}},
	}, sfd.New, nil)
}
