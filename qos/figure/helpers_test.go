package figure

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/require"
)

func ms(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Millisecond))) }

// jitterLoss is a generated stream: Δ = 100 ms, normal delay of mean 40 ms
// and s.d. 15 ms, 5 % loss, 150 s.
func jitterLoss(t *testing.T) []detector.Heartbeat {
	t.Helper()
	recs, err := trace.Generate(trace.GenConfig{Duration: 150 * time.Second,
		Delay: trace.Delay{Dist: trace.DelayNormal, Mean: ms(40), SD: ms(15)},
		Loss:  trace.Loss{Model: trace.LossBernoulli, P: 0.05}}, trace.NewRand(1))
	require.NoError(t, err)
	hbs := make([]detector.Heartbeat, len(recs))
	for i, r := range recs {
		hbs[i] = r.Heartbeat()
	}
	return hbs
}

// sweep replays hbs through fixed timeouts and Chen's margins (ms).
func sweep(t *testing.T, hbs []detector.Heartbeat, fixed, alpha []float64) []qos.Curve {
	t.Helper()
	var fams []qos.Family
	if len(fixed) > 0 {
		fams = append(fams, qos.FixedFamily(durs(fixed)))
	}
	if len(alpha) > 0 {
		fams = append(fams, qos.ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 50}}, durs(alpha)))
	}
	c, err := qos.Sweep([]qos.Stream{{Name: "gen", Heartbeats: hbs}}, fams, qos.SweepOptions{Workers: 2})
	require.NoError(t, err)
	return c
}

func durs(msv []float64) []time.Duration {
	d := make([]time.Duration, len(msv))
	for i, v := range msv {
		d[i] = ms(v)
	}
	return d
}

// logRange returns n values from lo to hi evenly spaced on a log scale.
func logRange(t *testing.T, lo, hi float64, n int) []float64 {
	v, err := qos.Range(lo, hi, n, true)
	require.NoError(t, err)
	return v
}
