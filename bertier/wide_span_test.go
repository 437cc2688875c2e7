package bertier_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Found by detectortest: after a jump of centuries from near
// math.MinInt64, EA_{ℓ+1} + α measured from the newest arrival exceeded
// math.MaxInt64 although the instant τ fits; τ was clamped relative to the
// arrival (centuries too early) and LinearForm disagreed with it.
func TestFreshnessPointBeyondMaxInt64FromNegativeArrival(t *testing.T) {
	d := newDet(t, bertier.Config{Estimator: chen.EstimatorConfig{Interval: 20 * time.Millisecond, WindowSize: 3},
		Gain: 0.5, Beta: 4, Phi: 1.5})
	start := time.Duration(math.MinInt64 + int64(time.Second))
	for i := range 5 {
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: start + time.Duration(i)*20*time.Millisecond})
	}
	a := time.Duration(-4_000_000_000_000_000_000) // 5.2e18 ns (165 years) later
	d.Observe(detector.Heartbeat{Seq: 5, HasSeq: true, Arrival: a})
	last, _ := d.Estimator().Last()
	f := d.ErrorFilter()
	rel := d.Estimator().ExpectedArrivalSince(last+1, a) + 4*f.SRTTNanos() + 1.5*f.RTTVARNanos()
	require.Greater(t, rel, float64(math.MaxInt64), "the case needs τ − A beyond math.MaxInt64")
	tau, ok := d.FreshnessPoint()
	require.True(t, ok)
	want := float64(a) + rel
	assert.InEpsilon(t, want, float64(tau), 1e-12)
	off, scale, ok := d.LinearForm()
	require.True(t, ok)
	assert.InEpsilon(t, float64(tau), float64(off)+scale*1.5, 1e-12)
}
