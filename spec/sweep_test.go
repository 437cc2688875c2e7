package spec

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sweep of Satzger's threshold, a quantile level, keeps its ceiling of 1
// whatever the family's other settings, so that a family named by its
// settings ("satzger(window=500)") is neither extended nor advised past 1.
// Exponential delays (mean 50 ms) on 100 ms heartbeats: no threshold in
// 0.5..0.9 makes no mistake, so the setting is at the upper edge.
func TestSweepKeepsParameterCeiling(t *testing.T) {
	w, err := ParseSweep("satzger(window=500) threshold=0.5..0.9")
	require.NoError(t, err)
	f, err := w.Family(5)
	require.NoError(t, err)
	assert.Equal(t, "satzger(window=500)", f.Name)
	assert.Equal(t, 1.0, f.Max)

	rng := rand.New(rand.NewPCG(3, 5))
	hbs := make([]detector.Heartbeat, 6000)
	for i := range hbs {
		sent := time.Duration(i+1) * 100 * time.Millisecond
		d := 10*time.Millisecond + time.Duration(rng.ExpFloat64()*float64(50*time.Millisecond))
		hbs[i] = detector.Heartbeat{Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + d}
	}
	slices.SortStableFunc(hbs, func(a, b detector.Heartbeat) int { return cmp.Compare(a.Arrival, b.Arrival) })
	v, err := qos.Decide(qos.Stream{Name: "s", Heartbeats: hbs}, []qos.Family{f}, nil, qos.Targets{NoMistakes: true}, qos.DecideConfig{Holdout: -1})
	require.NoError(t, err)
	require.Len(t, v.Ops, 1)
	assert.Equal(t, qos.UpperEdge, v.Ops[0].Edge)
	assert.Equal(t, "--range satzger(window=500)=0.5:1", v.Ops[0].Widen)
}
