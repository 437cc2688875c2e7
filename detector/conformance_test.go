package detector_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
)

// The conformance kit on the fixed timeout (ALGORITHMS.md §1): τ = T_last +
// T never moves backwards on a later heartbeat, and there is no warm-up.
func TestFixedConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]detector.FixedConfig{
		"default":         {},
		"250ms-restart-5": {Timeout: 250 * time.Millisecond, RestartJump: 5},
		"1ns":             {Timeout: 1},
	}, detector.NewFixed, func(_ detector.FixedConfig, f *detector.Fixed) detectortest.Options {
		return detectortest.Options{LinearParam: float64(f.Timeout()), TauNonDecreasing: true, NoWarmUp: true}
	})
}
