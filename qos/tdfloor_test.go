package qos

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// example95Pause is the docs/algorithms.md, “Replaying a trace” trace followed
// by heartbeat 11, sent after an 800 ms sender pause (at 1900 instead of 1100,
// no sequence gap) and arriving at 1925.
func example95Pause() []detector.Heartbeat {
	hbs := example95()
	return append(hbs, detector.Heartbeat{Seq: 11, HasSeq: true, Sent: ms(1900), HasSent: true, Arrival: ms(1925)})
}

// After a sender pause without a sequence gap Chen's EA lags: with n = 3 the
// window after heartbeat 11 holds A − Δ·s = 90, 21, 825 (mean 312), so EA_12 =
// 312 + 1200 = 1512 and τ = 1542 ms at α = 30 ms, before A_11 = 1925. The
// monitor suspects from A_11 on, so a crash right after sending 11 (σ = 1900)
// is detected after TD = 1925 − 1900 = 25 ms; τ − σ = −358 ms is no detection
// time. The other TD_k are those of docs/algorithms.md, “Replaying a trace”
// (sum 1145.333333).
func TestTDNotBelowDelayWhenTauPrecedesArrival(t *testing.T) {
	res, err := ReplaySlice(newChen(t, 3, ms(30)), example95Pause(), Config{})
	require.NoError(t, err)
	require.Equal(t, 8, res.Evaluated)
	assert.Equal(t, ms(25), res.LastTD)
	assert.InDelta(t, (1145.333333+25)/8, toMS(res.TD.Mean), 1e-6)
	assert.InDelta(t, 157.666667, toMS(res.TD.P50), 1e-6) // sorted: 25, 151, 156.67, 157.67, ...
	assert.InDelta(t, 181.666667, toMS(res.TD.Max), 1e-6)

	// Arrival-based: TD_11 = d̄ (q suspects at A_11).
	res, err = ReplaySlice(newChen(t, 3, ms(30)), example95Pause(), Config{Clock: ClockUnsynchronized, DelayOffset: ms(7)})
	require.NoError(t, err)
	assert.Equal(t, ms(7), res.LastTD)

	// The one-pass sweep agrees: α = 0 and 30 clamp TD_11, α = 1000 ms
	// does not (τ = 2512 > 1925: TD_11 = 612 ms).
	c, err := Sweep([]Stream{{Heartbeats: example95Pause()}},
		[]Family{ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 3}}, durs([]float64{0, 30, 1000}))},
		SweepConfig{})
	require.NoError(t, err)
	require.Empty(t, c[0].Err)
	require.Equal(t, OnePass, c[0].Method)
	for i, want := range []struct{ mean, last float64 }{
		{(1145.333333 - 7*30 + 25) / 8, 25},
		{(1145.333333 + 25) / 8, 25},
		{(1145.333333 + 7*970 + 612) / 8, 612},
	} {
		p := c[0].Points[i]
		assert.InDelta(t, want.mean, toMS(p.TD.Mean), 1e-6, "α=%g", p.Value)
		assert.InDelta(t, want.last, toMS(p.LastTD), 1e-6, "α=%g", p.Value)
	}
}

// On a long trace with sender pauses (the gc-pause preset, 4 hours, more
// heartbeats than allPercentiles samples) the one-pass Chen sweep equals
// one replay per point, TD percentiles included, and no TD_k is below the
// smallest one-way delay.
func TestTDFloorOnePassEqualsReplays(t *testing.T) {
	p, err := trace.LookupPreset("gc-pause")
	require.NoError(t, err)
	p.Config.Duration = 4 * time.Hour
	for i := range 40 {
		p.Config.Pauses = append(p.Config.Pauses, trace.Period{At: time.Duration(i+2) * 5 * time.Minute, Length: ms(600)})
	}
	recs, err := trace.Generate(p.Config, trace.NewRand(11))
	require.NoError(t, err)
	hbs := heartbeats(recs)
	require.Greater(t, len(hbs), 8*16384)
	f := ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}}, durs([]float64{0, 20, 100, 400}))
	checkFastSweep(t, f, hbs)

	// Every TD_k is at least its own delay A_k − σ_k, hence the mean is at
	// least the mean delay (the literal τ − σ falls below it after pauses).
	var sum time.Duration
	for _, hb := range hbs {
		sum += hb.Arrival - hb.Sent
	}
	meanDelay := sum / time.Duration(len(hbs))
	c, err := Sweep([]Stream{{Heartbeats: hbs}}, []Family{f}, SweepConfig{PerPointOnly: true})
	require.NoError(t, err)
	require.Empty(t, c[0].Err)
	for _, pt := range c[0].Points {
		assert.Greater(t, pt.TD.Mean, meanDelay-ms(0.1), "α=%g", pt.Value)
	}
}

// A failed point says once where it failed: "qos: bertier: no heartbeat
// evaluated ...", not "qos: bertier =0: qos: no heartbeat evaluated", and
// still unwraps to ErrNoEvaluation.
func TestSweepErrorMessages(t *testing.T) {
	short := example95()[:2]
	fams := []Family{
		BertierFamily(bertier.Config{Estimator: chen.EstimatorConfig{Interval: ms(100), WindowSize: 3}}),
		FixedFamily([]time.Duration{ms(150)}),
		PhiAkkaFamily(testAkka, []float64{8}),
	}
	c, err := Sweep([]Stream{{Heartbeats: short}}, fams, SweepConfig{Config: Config{WarmUp: 5}})
	require.NoError(t, err)
	want := []string{
		"qos: bertier: no heartbeat evaluated: all 2 fresh heartbeat(s) were in the warm-up of 5",
		"qos: fixed: no heartbeat evaluated: all 2 fresh heartbeat(s) were in the warm-up of 5",
		"qos: phi-akka threshold=8: no heartbeat evaluated: all 2 fresh heartbeat(s) were in the warm-up of 5",
	}
	for i, w := range want {
		assert.EqualError(t, c[i].Err, w)
		assert.ErrorIs(t, c[i].Err, ErrNoEvaluation)
	}
	_, err = replayPoint(&fams[1], 0, sliceSource(short), Config{WarmUp: 5})
	assert.ErrorIs(t, err, ErrNoEvaluation)
}
