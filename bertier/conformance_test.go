package bertier_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector/detectortest"
)

// The conformance kit on the defaults and on small windows with either loss
// rule and non-default gains; p of the linear form is φ.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]bertier.Config{
		"default": {},
		"small-window-error-vs-next": {Estimator: chen.EstimatorConfig{WindowSize: 8}, LossRule: bertier.ErrorVsNext,
			MinSamples: 2},
		"gains": {Estimator: chen.EstimatorConfig{Interval: 20 * time.Millisecond, WindowSize: 3}, Gain: 0.5,
			Beta: 2, Phi: 1.5},
	}, bertier.New, func(cfg bertier.Config, _ *bertier.Detector) detectortest.Options {
		if cfg.Phi == 0 {
			cfg.Phi = bertier.DefaultPhi
		}
		return detectortest.Options{LinearParam: cfg.Phi}
	})
}
