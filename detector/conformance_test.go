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
	for _, cfg := range []detector.FixedConfig{{}, {Timeout: 250 * time.Millisecond, RestartJump: 5}, {Timeout: 1}} {
		t.Run(cfg.Timeout.String(), func(t *testing.T) {
			f, err := detector.NewFixed(cfg)
			if err != nil {
				t.Fatal(err)
			}
			detectortest.Run(t, func() detector.Detector {
				d, _ := detector.NewFixed(cfg)
				return d
			}, detectortest.Options{LinearParam: float64(f.Timeout()), TauNonDecreasing: true, NoWarmUp: true})
		})
	}
}
