package qos

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// setSpan on a slice (spanSorted, by binary search) equals the pass over
// any other Source, which adds each gap in turn: for starts before, at,
// between and after the arrivals, with arrivals repeated and cells left
// empty by a pause, and on a stream spanning more than 2^53 ns, where
// spanSorted leaves it to the pass.
func TestSpanSortedEqualsPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var hbs []detector.Heartbeat
	at := time.Duration(-5e9)
	for k := range 3000 {
		switch {
		case k == 1500:
			at += 40e9 // a pause: cells without an arrival
		case rng.IntN(20) > 0:
			at += time.Duration(rng.Int64N(200e6))
		}
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(k), HasSeq: true, Arrival: at})
	}
	wide := append([]detector.Heartbeat{{Arrival: -1 << 53}}, hbs...)
	for _, s := range [][]detector.Heartbeat{hbs, wide, hbs[:1], hbs[:2], nil} {
		starts := []time.Duration{-1 << 62, -1 << 53, 0, 1 << 62}
		for range 20 {
			if len(s) > 0 {
				a := s[rng.IntN(len(s))].Arrival
				starts = append(starts, a, a+1, a-1)
			}
		}
		g := newCellGrid(sliceSource(s))
		for _, start := range starts {
			got, want := newCellSeries(g), newCellSeries(g)
			require.NoError(t, got.setSpan(sliceSource(s), start))
			require.NoError(t, want.setSpan(&countingSource{Source: sliceSource(s)}, start))
			require.Equal(t, want.span, got.span, "%d heartbeats from %v", len(s), start)
		}
	}
	g := newCellGrid(sliceSource(wide))
	require.False(t, newCellSeries(g).spanSorted(sliceSource(wide), -1<<53), "a span of 2^53 ns is left to the pass")
}
