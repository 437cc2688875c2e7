package phi_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/phi"
)

// The conformance kit on each model's defaults and on the configurations
// the former property test covered (remedies, extreme thresholds, no pause,
// uncapped intervals). p of the linear form is z(Θ) for the normal model
// and Θ for Cassandra's; SkipIfSuspected makes the window depend on Θ, so
// LinearForm is then never ok.
func TestConformance(t *testing.T) {
	t.Run("normal", func(t *testing.T) {
		detectortest.RunConfigs(t, map[string]phi.NormalConfig{
			"default": {},
			"remedies": {WindowSize: 20, Threshold: 3, SkipIfSuspected: true, MaxInterval: time.Second,
				DivideBySeqGap: true, MinStdDev: 2 * time.Millisecond},
			"threshold-250": {WindowSize: 200, Threshold: 250},
		}, phi.NewNormal, func(cfg phi.NormalConfig, d *phi.Normal) detectortest.Options {
			return detectortest.Options{LinearParam: phi.ZOfLevel(d.Threshold()), SkipLinear: cfg.SkipIfSuspected}
		})
	})
	t.Run("akka", func(t *testing.T) {
		detectortest.RunConfigs(t, map[string]phi.AkkaConfig{
			"default": {},
			"tight": {MaxSampleSize: 30, Threshold: 2, AcceptableHeartbeatPause: -1,
				MinStdDeviation: time.Millisecond, FirstHeartbeatEstimate: 100 * time.Millisecond},
		}, phi.NewAkka, nil)
	})
	t.Run("cassandra", func(t *testing.T) {
		detectortest.RunConfigs(t, map[string]phi.CassandraConfig{
			"default":  {},
			"uncapped": {WindowSize: 10, Threshold: 1, MaxInterval: -1},
		}, phi.NewCassandra, func(_ phi.CassandraConfig, d *phi.Cassandra) detectortest.Options {
			return detectortest.Options{LinearParam: d.Threshold()}
		})
	})
}
