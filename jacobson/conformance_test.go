package jacobson_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/jacobson"
)

// The conformance kit on the defaults, a clamped detector dividing by the
// sequence gap, and a small K with a short TO_init.
func TestConformance(t *testing.T) {
	detectortest.RunConfigs(t, map[string]jacobson.Config{
		"default": {},
		"clamped-divide-by-gap": {MinTimeout: 150 * time.Millisecond, MaxTimeout: 2 * time.Second,
			DivideByGap: true, RestartJump: 10},
		"small-K": {K: 0.5, InitialTimeout: 200 * time.Millisecond},
	}, jacobson.New, func(_ jacobson.Config, d *jacobson.Detector) detectortest.Options {
		return detectortest.Options{LinearParam: d.K(), NoWarmUp: true}
	})
}
