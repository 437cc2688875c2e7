package qos

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newChen(t *testing.T, n int, alpha time.Duration) detector.Detector {
	t.Helper()
	d, err := chen.New(chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: n}, Margin: new(alpha)})
	require.NoError(t, err)
	return d
}

// docs/algorithms.md, “Replaying a trace”: Chen NFD-E, n = 3, α = 30 ms, on the
// trace with heartbeat 7 lost; evaluation starts when the window is full (k =
// 3).
func TestExample95(t *testing.T) {
	res, err := ReplaySlice(newChen(t, 3, ms(30)), example95(), Config{RecordMistakes: true})
	require.NoError(t, err)
	const nsTol = 1 // freshness points are rounded to the nanosecond
	assert.Equal(t, 2, res.WarmUp)
	assert.Equal(t, 7, res.Evaluated)
	assert.Equal(t, ms(318), res.Start)
	assert.Equal(t, ms(703), res.Span)
	assert.Equal(t, 2, res.Mistakes)
	assert.InDelta(t, 105.333333, toMS(res.Suspected), 1e-6)
	assert.InDelta(t, 2.844950, res.MRPerSecond, 1e-6)
	assert.InDelta(t, 0.850166, res.QAP, 1e-6)
	assert.InDelta(t, 52.666667, toMS(res.MeanTM), 1e-6)
	assert.InDelta(t, 351.5, toMS(res.MeanTMR), 1e-6)
	assert.InDelta(t, 298.833333, toMS(res.MeanTG), 1e-6)
	assert.InDelta(t, 163.619048, toMS(res.TD.Mean), 1e-6)
	assert.InDelta(t, 181.666667, toMS(res.TD.Max), 1e-6)
	assert.InDelta(t, 178.666667, toMS(res.LastTD), 1e-6)
	// TD_k sorted: 151, 156.67, 157.67, 159, 160.67, 178.67, 181.67.
	assert.InDelta(t, 159.0, toMS(res.TD.P50), 1e-6)
	assert.InDelta(t, 181.666667, toMS(res.TD.P99), 1e-6)
	assert.True(t, res.ClockSync)
	require.Len(t, res.MistakeIntervals, 2)
	// The mistakes of the table: (760.67, 835) and (959, 990).
	assert.InDelta(t, 760.666667, toMS(res.MistakeIntervals[0].Start), 1e-6)
	assert.Equal(t, ms(835), res.MistakeIntervals[0].End)
	assert.Equal(t, ms(959), res.MistakeIntervals[1].Start)
	assert.Equal(t, ms(990), res.MistakeIntervals[1].End)
	_ = nsTol

	// The one-pass sweep gives the same point at α = 30 ms.
	c, err := Sweep([]Stream{{Heartbeats: example95()}},
		[]Family{ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 3}}, durs([]float64{0, 30, 1000}))},
		SweepConfig{})
	require.NoError(t, err)
	require.Empty(t, c[0].Err)
	assert.Equal(t, OnePass, c[0].Method)
	p := c[0].Points[1]
	assert.Equal(t, 2, p.Mistakes)
	assert.InDelta(t, 2.844950, p.MRPerSecond, 1e-6)
	assert.InDelta(t, 0.850166, p.QAP, 1e-6)
	assert.InDelta(t, 163.619048, toMS(p.TD.Mean), 1e-6)
	assert.InDelta(t, 181.666667, toMS(p.TD.Max), 1e-6)
	// α = 0: τ = EA; arrivals after EA: 440 > 421, 522 < 527.67, 630 > 626.67,
	// 835 > 730.67, 990 > 929, 1021 < 1051.67: gaps 3, 5, 6, 8 give four
	// mistakes, but 6 and 8 are separate (835 < 929), so 4.
	assert.Equal(t, 4, c[0].Points[0].Mistakes)
	assert.Equal(t, 0, c[0].Points[2].Mistakes)
	assert.Equal(t, 1.0, c[0].Points[2].QAP)
}

func TestChenAgreesWithReference(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			for _, a := range []time.Duration{ms(5), ms(40)} {
				checkAgainstReference(t, func() detector.Detector { return newChen(t, 50, a) }, hbs, 0)
			}
		})
	}
}

func TestChenFastSweepEqualsReplays(t *testing.T) {
	for name, hbs := range agreementTraces() {
		t.Run(name, func(t *testing.T) {
			checkFastSweep(t, ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 50}}, durs(mustRange(t, 1, 300, 25, true))), hbs)
		})
	}
}
