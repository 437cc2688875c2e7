package qos

import (
	"testing"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/require"
)

func newPhiNormal(t *testing.T, theta float64) detector.Detector {
	t.Helper()
	d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 50, Threshold: theta, MinSamples: new(50)})
	require.NoError(t, err)
	return d
}

func TestPhiNormalAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			for _, th := range []float64{0.5, 2, 8} {
				checkAgainstReference(t, func() detector.Detector { return newPhiNormal(t, th) }, hbs, 0)
			}
		})
	}
}

// With SkipIfSuspected off the sweep is one pass; with phi's default (on)
// every point is a replay of its own, and the curve is the same as one
// replay per point by construction.
func TestPhiNormalFastSweepEqualsReplays(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			checkFastSweep(t, PhiNormalFamily(phi.NormalConfig{WindowSize: 50, MinSamples: new(50), SkipIfSuspected: new(false)},
				mustRange(t, 0.5, 16, 25, false)), hbs)
		})
	}
}
