package qos

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/satzger"
	"github.com/stretchr/testify/require"
)

// A shared-state sweep of a stream past Spill.InMemory keeps at most
// sharedSpillChunk thresholds' TD files (and their samples and buffers,
// about 200 KiB each) at once: 300 thresholds take three passes of the
// stream, not one holding 300 files, and the curves equal the sweep in
// memory.
func TestSharedSweepSpillsBoundedPerPass(t *testing.T) {
	hbs := generate(genOpts{n: 2000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 4})
	values := make([]float64, 300)
	for i := range values {
		values[i] = 0.5 + 0.49*float64(i)/float64(len(values))
	}
	fams := []Family{SatzgerFamily(satzger.Config{WindowSize: 100, BootstrapInterval: new(ms(100))}, values)}
	mem, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, fams, SweepConfig{})
	require.NoError(t, err)
	require.Equal(t, Method(SharedState), mem[0].Method)
	src := &countingSource{Source: spooled(t, hbs)}
	cfg := Config{Spill: Spill{InMemory: 100, After: 64}}
	got, err := Sweep([]Stream{{Name: "s", Source: src}}, fams, SweepConfig{Config: cfg})
	require.NoError(t, err)
	requireSameCurves(t, mem, got)
	require.Equal(t, int64((len(values)+sharedSpillChunk-1)/sharedSpillChunk), src.passes.Load())
}

// A ranked sweep (sweepRanked) of many thresholds takes them rankedChunk
// at a time: each keeps a sample and rank windows of a few percent of the
// stream, so all at once would take memory in proportion to points ×
// heartbeats (560 MB for fdreplay -d satzger --points 1000 on 2^20
// heartbeats). The points equal the sweep of the thresholds one by one.
func TestRankedSweepTakesBoundedThresholds(t *testing.T) {
	const n = 4000
	rankedTwoPerPass(t, n)
	hbs := generate(genOpts{n: n, interval: ms(100), delay: ms(40), spread: ms(15), loss: 0.05, pause: 0.01, seed: 4})
	cfg := satzger.Config{WindowSize: 100, BootstrapInterval: new(ms(100))}
	values := make([]float64, 3*rankedChunk+5)
	class := make([]int, len(values))
	for i := range values {
		values[i] = 0.5 + 0.499*float64(i)/float64(len(values))
		class[i] = i
	}
	widest := 0
	newDet := func(v float64) (thresholdDetector, error) {
		c := cfg
		c.Threshold = v
		return satzger.New(c)
	}
	trackAll := func(src thresholdDetector, ths []float64) func([]time.Duration) {
		widest = max(widest, len(ths))
		ts, _ := src.(*satzger.Detector).TrackAll(ths)
		return ts.FreshnessPoints
	}
	pts, err := sweepShared(newDet, nil, trackAll, values, class, sliceSource(hbs), Config{})
	require.NoError(t, err)
	require.LessOrEqual(t, widest, rankedChunk, "thresholds in one pass")
	for _, i := range []int{0, rankedChunk, len(values) - 1} {
		one, err := sweepShared(newDet, nil, nil, values[i:i+1], []int{0}, sliceSource(hbs), Config{})
		require.NoError(t, err)
		require.Equal(t, one[0].Result, pts[i].Result, "θ = %g", values[i])
	}
}
