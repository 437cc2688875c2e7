package figure

import (
	"testing"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/internal/qostest"
	"github.com/stretchr/testify/require"
)

var ms = qostest.Ms

// jitterLoss is qostest.JitterLoss's stream.
func jitterLoss(t *testing.T) []detector.Heartbeat {
	_, hbs := qostest.JitterLoss(t, "p")
	return hbs
}

// sweep replays hbs through fixed timeouts and Chen's margins (ms).
func sweep(t *testing.T, hbs []detector.Heartbeat, fixed, alpha []float64) []qos.Curve {
	t.Helper()
	var fams []qos.Family
	if len(fixed) > 0 {
		fams = append(fams, qos.FixedFamily(qostest.Durations(fixed...)))
	}
	if len(alpha) > 0 {
		fams = append(fams, qos.ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 50}}, qostest.Durations(alpha...)))
	}
	c, err := qos.Sweep([]qos.Stream{{Name: "gen", Heartbeats: hbs}}, fams, qos.SweepConfig{Workers: 2})
	require.NoError(t, err)
	return c
}

// logRange returns n values from lo to hi evenly spaced on a log scale.
func logRange(t *testing.T, lo, hi float64, n int) []float64 {
	v, err := qos.Range(lo, hi, n, true)
	require.NoError(t, err)
	return v
}
