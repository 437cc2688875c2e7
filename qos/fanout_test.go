package qos

import (
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// countingSource counts the passes started over a Source.
type countingSource struct {
	Source
	passes atomic.Int64
}

func (c *countingSource) Pass() (iter.Seq[detector.Heartbeat], func() error) {
	c.passes.Add(1)
	return c.Source.Pass()
}

// A spooled stream is read a small constant number of times by a sweep of
// every method (linear, grouped, shared estimator, shared state, replay
// per point) with intervals, however many families and points read it:
// each read feeds all of them. The curves equal the sweep in memory.
func TestSweepReadsSpoolFewTimes(t *testing.T) {
	hbs := generate(genOpts{n: 3000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, dup: 0.002, pause: 0.002, seed: 9})
	fams := streamingFamilies(t)
	points := 0
	for _, f := range fams {
		points += len(f.Values)
	}
	for _, cfg := range []Config{{}, {WarmUp: 37, RecordMistakes: true, Intervals: true}} {
		mem, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, fams, SweepConfig{Config: cfg})
		require.NoError(t, err)
		src := &countingSource{Source: spooled(t, hbs)}
		got, err := Sweep([]Stream{{Name: "s", Source: src}}, fams, SweepConfig{Config: cfg, Workers: 1})
		require.NoError(t, err)
		requireSameCurves(t, mem, got)
		require.LessOrEqual(t, src.passes.Load(), int64(4), "%d families, %d points", len(fams), points)
		require.Greater(t, points, 40)
	}
}

// A member that stops reading early does not hold the others back, and
// one that leaves without reading does not block the read.
func TestFanSourceEarlyStop(t *testing.T) {
	hbs := make([]detector.Heartbeat, 3*fanBlock+5)
	for k := range hbs {
		hbs[k] = detector.Heartbeat{Seq: uint64(k), HasSeq: true, Arrival: time.Duration(k) * time.Millisecond}
	}
	f := newFanSource(SliceSource(hbs), 3)
	counts := make(chan int, 3)
	for m := range 3 {
		go func() {
			defer f.leave()
			if m == 2 {
				counts <- -1
				return
			}
			seq, done := f.Pass()
			n := 0
			for range seq {
				n++
				if m == 1 && n == 10 {
					break
				}
			}
			require.NoError(t, done())
			counts <- n
		}()
	}
	got := map[int]bool{}
	for range 3 {
		got[<-counts] = true
	}
	require.Equal(t, map[int]bool{-1: true, 10: true, len(hbs): true}, got)
	require.Equal(t, 1, f.reads)
}

// Config.Spill: a negative bound is refused, naming the field; the files
// go to Dir (one that does not exist fails the replay, naming it), and a
// replay in memory writes no file.
func TestSpillConfig(t *testing.T) {
	hbs := generate(genOpts{n: 500, interval: ms(100), delay: ms(30), spread: ms(8), seed: 3})
	det := func() detector.Detector { return newFixed(t, ms(300)) }
	_, err := ReplaySlice(det(), hbs, Config{Spill: Spill{After: -1}})
	require.ErrorContains(t, err, "Spill.After -1 is negative")
	missing := t.TempDir() + "/missing"
	cfg := Config{Spill: Spill{Dir: missing, After: 10}}
	_, err = ReplaySource(det(), spooled(t, hbs), cfg)
	require.ErrorContains(t, err, missing)
	_, err = ReplaySlice(det(), hbs, cfg)
	require.NoError(t, err)
}
