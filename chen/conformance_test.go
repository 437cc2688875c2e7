package chen_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector/detectortest"
)

// The conformance kit on the defaults, a small window with a short warm-up,
// and a window that never restarts with a margin of an hour. τ is not
// asserted non-decreasing: EA drops when a late heartbeat's offset leaves
// the window.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]chen.Config{
		"default":      {},
		"small-window": {Estimator: chen.EstimatorConfig{WindowSize: 5}, Margin: 30 * time.Millisecond, MinSamples: 2},
		"never-restart": {Estimator: chen.EstimatorConfig{Interval: 50 * time.Millisecond, WindowSize: 40,
			RestartJump: math.MaxUint64}, Margin: time.Hour},
	}, chen.New, func(_ chen.Config, d *chen.Detector) detectortest.Options {
		return detectortest.Options{LinearParam: float64(d.Margin())}
	})
}
