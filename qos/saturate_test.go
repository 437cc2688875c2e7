package qos_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
)

// A timeout beyond the Duration range (fdreplay --range fixed=100:1e20)
// saturates at math.MaxInt64 ns: no mistake, QAP 1, TD near the top of the
// range. Before, the millisecond-to-Duration conversion wrapped to a
// negative timeout and the sweep reported a mistake and a negative QAP.
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
			qos.SweepOptions{Config: qos.Config{WarmUp: 10}, PerPointOnly: perPoint})
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
