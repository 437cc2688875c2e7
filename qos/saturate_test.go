package qos_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/twowfd"
)

// A timeout beyond the Duration range (fdreplay --range fixed=100:1e20)
// saturates at math.MaxInt64 ns: no mistake, QAP 1, TD near the top of the
// range; a millisecond-to-Duration conversion that wrapped would give a
// negative timeout, a mistake and a negative QAP.
func TestFixedSweepSaturatesHugeTimeouts(t *testing.T) {
	var hbs []detector.Heartbeat
	for i := range 200 {
		a := time.Duration(i)*100*time.Millisecond + time.Duration(i%7)*time.Millisecond
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a, Sent: a - 5*time.Millisecond, HasSent: true})
	}
	fam := qos.FixedFamily(nil)
	fam.Values = []float64{100, 1e9, 1e20}
	for _, perPoint := range []bool{false, true} {
		curves, err := qos.Sweep([]qos.Stream{{Name: "p", Heartbeats: hbs}}, []qos.Family{fam},
			qos.SweepConfig{Config: qos.Config{WarmUp: 10}, PerPointOnly: perPoint})
		require.NoError(t, err)
		require.Len(t, curves, 1)
		require.Empty(t, curves[0].Err)
		for _, pt := range curves[0].Points[1:] {
			assert.Zero(t, pt.Mistakes, "T=%g ms, per point %v", pt.Value, perPoint)
			assert.Equal(t, 1.0, pt.QAP)
			assert.Positive(t, pt.TD.Mean)
		}
		// τ saturates at MaxInt64, so TD_k = τ − σ_k is within the trace's span of it.
		assert.Greater(t, curves[0].Points[2].TD.Max, time.Duration(math.MaxInt64)-time.Minute)
	}
}

// Near the end of the Duration range a detector saturates τ at
// math.MaxInt64 (detector.AddSat) rather than wrapping, so τ is no longer
// linear in the margin there: the one-pass sweeps of NFD-E and 2W-FD gave
// TDs past the saturated τ (10 000 s instead of 6 800 s here). They now
// replay per point when a query point would saturate, and agree with the
// replays.
func TestLinearSweepsNearEndOfRange(t *testing.T) {
	var hbs []detector.Heartbeat
	a := time.Duration(math.MaxInt64 - int64(2*time.Hour))
	for i := range 3000 {
		a += 100*time.Millisecond + time.Duration(i*7919%23)*time.Millisecond
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
	}
	alphas := []time.Duration{0, time.Millisecond, time.Second, 10000 * time.Second}
	for _, fam := range []qos.Family{
		qos.ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 100}}, alphas),
		qos.TwoWFDFamily(twowfd.Config{LongWindowSize: 100}, alphas),
	} {
		streams := []qos.Stream{{Name: "p", Heartbeats: hbs}}
		fast, err := qos.Sweep(streams, []qos.Family{fam}, qos.SweepConfig{})
		require.NoError(t, err)
		slow, err := qos.Sweep(streams, []qos.Family{fam}, qos.SweepConfig{PerPointOnly: true})
		require.NoError(t, err)
		require.Empty(t, fast[0].Err)
		require.Len(t, fast[0].Points, len(alphas))
		for i, p := range slow[0].Points {
			q := fast[0].Points[i]
			assert.Equal(t, p.Mistakes, q.Mistakes, "%s α=%v", fam.Name, alphas[i])
			assert.InDelta(t, float64(p.TD.Mean), float64(q.TD.Mean), 2, "%s α=%v", fam.Name, alphas[i])
			assert.InDelta(t, float64(p.TD.Max), float64(q.TD.Max), 2, "%s α=%v", fam.Name, alphas[i])
			assert.InDelta(t, p.QAP, q.QAP, 1e-12, "%s α=%v", fam.Name, alphas[i])
		}
		// The largest margin cannot be waited out before the end of time.
		assert.Less(t, slow[0].Points[3].TD.Max, 2*time.Hour+10*time.Minute)
	}
}
