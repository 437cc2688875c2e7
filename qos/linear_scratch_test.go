package qos

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/stretchr/testify/require"
)

// One worker sweeping the linear curves of several streams in a row, each
// curve in the storage the previous one left (linearScratch: a longer
// stream's first, then a shorter one's, grids and floors included), gives
// every curve as a sweep of its stream alone does, and so when the curves
// of a stream are interleaved with curves of other kinds, which let the
// storage go.
func TestLinearScratchReusedAcrossCurves(t *testing.T) {
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 100}
	fams := []Family{
		ChenFamily(chen.Config{Estimator: est}, durs([]float64{0.1, 1, 10, 100, 1000})),
		FixedFamily(durs([]float64{50, 100, 200, 400, 800})),
		PhiAkkaFamily(phiAkkaBenchConfig, []float64{1, 4, 16}),
	}
	fams[0].Apart = []float64{7}
	long := generate(genOpts{n: 40000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, dup: 0.002, pause: 0.002, seed: 3})
	short := generate(genOpts{n: 20000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 4})
	for k := range short {
		if short[k].Seq >= 10000 { // a stopped sender: TD floored
			short[k].Sent += 20 * time.Second
			short[k].Arrival += 20 * time.Second
		}
	}
	streams := []Stream{{Name: "long", Heartbeats: long}, {Name: "short", Heartbeats: short}, {Name: "again", Heartbeats: long}}
	cfg := Config{Intervals: true, WarmUp: 50}
	for _, order := range [][]Family{fams, {fams[2], fams[0], fams[1]}} {
		got, err := Sweep(streams, order, SweepConfig{Config: cfg, Workers: 1})
		require.NoError(t, err)
		for i, s := range streams {
			alone, err := Sweep([]Stream{s}, order, SweepConfig{Config: cfg, Workers: 1})
			require.NoError(t, err)
			for j := range order {
				c := got[i*len(order)+j]
				require.Nil(t, c.Err)
				require.Equal(t, alone[j].Points, c.Points, "%s %s", s.Name, c.Family)
				require.Equal(t, alone[j].Apart, c.Apart, "%s %s", s.Name, c.Family)
			}
		}
	}
}
