package qos

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/sfd"
	"github.com/stretchr/testify/require"
)

// Settings scaled to the 100 ms traces of agreementTraces, windows of 50.
var (
	testAkka      = phi.AkkaConfig{WindowSize: 50, MinStdDev: new(ms(10)), AcceptablePause: new(time.Duration(0)), BootstrapInterval: new(ms(100)), MinSamples: new(20)}
	testCassandra = phi.CassandraConfig{WindowSize: 50, BootstrapInterval: new(2 * ms(100)), MaxInterval: new(2 * ms(100)), MinSamples: new(50)}
	testBertier   = bertier.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 50}}
)

func TestAkkaAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			for _, th := range []float64{1, 8} {
				checkAgainstReference(t, func() detector.Detector {
					c := testAkka
					c.Threshold = th
					d, err := phi.NewAkka(c)
					require.NoError(t, err)
					return d
				}, hbs, 0)
			}
		})
	}
}

func TestCassandraAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			for _, th := range []float64{0.5, 1} {
				checkAgainstReference(t, func() detector.Detector {
					c := testCassandra
					c.Threshold = th
					d, err := phi.NewCassandra(c)
					require.NoError(t, err)
					return d
				}, hbs, 0)
			}
		})
	}
}

func TestCassandraFastSweepEqualsReplays(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			checkFastSweep(t, PhiCassandraFamily(testCassandra, mustRange(t, 0.3, 3, 25, false)), hbs)
		})
	}
}

func TestBertierAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			checkAgainstReference(t, func() detector.Detector {
				d, err := bertier.New(testBertier)
				require.NoError(t, err)
				return d
			}, hbs, 0)
		})
	}
}

func TestSFDAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			checkAgainstReference(t, func() detector.Detector {
				d, err := sfd.New(sfd.Config{
					Estimator:      chen.EstimatorConfig{Interval: ms(100), WindowSize: 50},
					InitialMargin:  new(ms(20)),
					Step:           ms(5),
					SlotHeartbeats: 50,
					Targets:        sfd.Targets{MaxTD: ms(400), MaxMistakesPerSecond: 0.05, MinQAP: 0.99},
					UseSendTime:    true,
				})
				require.NoError(t, err)
				return d
			}, hbs, 0)
		})
	}
}
