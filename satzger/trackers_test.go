package satzger

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// Trackers give every threshold the freshness point FreshnessPointAt
// gives it, in every state: before the first heartbeat, on the bootstrap
// sample, while the window fills (ranks change with N'), across stale,
// backward and restarted heartbeats, and with unsorted, repeated and
// extreme thresholds and a scale that makes crossings round.
func TestTrackersEqualFreshnessPointAt(t *testing.T) {
	ths := []float64{0.99, 0.5, 1, 1e-9, 0.5, 0.75, 0.999, 0.01, 0.3333333333333333}
	for _, size := range []int{1, 5, 300} {
		d, err := New(Config{WindowSize: size, Scale: 0.7, MinSamples: new(0)})
		require.NoError(t, err)
		tr, ok := d.TrackAll(ths)
		require.True(t, ok)
		rng := rand.New(rand.NewPCG(11, uint64(size)))
		taus := make([]time.Duration, len(ths))
		check := func(step int) {
			tr.FreshnessPoints(taus)
			for i, th := range ths {
				want, _ := d.FreshnessPointAt(th)
				if taus[i] != want {
					t.Fatalf("window %d, step %d, threshold %v: τ %v, FreshnessPointAt %v", size, step, th, taus[i], want)
				}
			}
		}
		check(-1)
		at, seq := time.Duration(0), uint64(0)
		for step := range 4000 {
			switch rng.IntN(10) {
			case 0:
				at += time.Duration(rng.Int64N(int64(2 * time.Second)))
			case 1:
				at -= time.Millisecond // backwards: dropped
			case 2:
				seq -= 1000 // a restart
			case 3:
				seq -= 2 // stale
			default:
				at += time.Duration(90+rng.IntN(20)) * time.Millisecond
			}
			seq++
			d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
			check(step)
		}
	}
	_, ok := (&Detector{}).TrackAll([]float64{0.5, 1.5})
	require.False(t, ok, "a threshold above 1")
	_, ok = (&Detector{}).TrackAll([]float64{0})
	require.False(t, ok, "a threshold of 0")
}
