package qos

import (
	"errors"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/sfd"
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
// once when it fits Spill.InMemory (it is read into memory), else each
// read feeds all of them. The curves equal the sweep in memory.
func TestSweepReadsSpoolFewTimes(t *testing.T) {
	hbs := generate(genOpts{n: 3000, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, dup: 0.002, pause: 0.002, seed: 9})
	fams := streamingFamilies(t)
	points := 0
	for _, f := range fams {
		points += len(f.Values)
	}
	require.Greater(t, points, 40)
	for _, cfg := range []Config{{}, {WarmUp: 37, RecordMistakes: true, Intervals: true}} {
		mem, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, fams, SweepConfig{Config: cfg})
		require.NoError(t, err)
		for _, tc := range []struct {
			inMemory  int
			maxPasses int64
		}{{0, 1}, {len(hbs), 1}, {len(hbs) - 1, 4}} {
			cfg := cfg
			cfg.Spill.InMemory = tc.inMemory
			src := &countingSource{Source: spooled(t, hbs)}
			for _, workers := range []int{1, 2} {
				src.passes.Store(0)
				got, err := Sweep([]Stream{{Name: "s", Source: src}, {Name: "s", Source: src}}, fams, SweepConfig{Config: cfg, Workers: workers})
				require.NoError(t, err)
				requireSameCurves(t, mem, got[:len(fams)])
				requireSameCurves(t, mem, got[len(fams):])
				require.LessOrEqual(t, src.passes.Load(), 2*tc.maxPasses, "InMemory %d: %d families, %d points", tc.inMemory, len(fams), points)
			}
		}
	}
}

// failingSource is a Source whose every pass fails with err after half
// its heartbeats.
type failingSource struct {
	Source
	err error
}

func (f failingSource) Pass() (iter.Seq[detector.Heartbeat], func() error) {
	seq, _ := f.Source.Pass()
	return func(yield func(detector.Heartbeat) bool) {
		n := 0
		for hb := range seq {
			if n++; n > f.Len()/2 || !yield(hb) {
				return
			}
		}
	}, func() error { return f.err }
}

// A stream that cannot be read into memory fails each of its curves with
// the read's error, naming the family; the other streams are swept.
func TestSweepLoadError(t *testing.T) {
	hbs := generate(genOpts{n: 1500, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 4})
	fams := streamingFamilies(t)
	bad := errors.New("disk gone")
	src := failingSource{Source: spooled(t, hbs), err: bad}
	got, err := Sweep([]Stream{{Name: "bad", Source: src}, {Name: "good", Source: spooled(t, hbs)}}, fams, SweepConfig{})
	require.NoError(t, err)
	mem, err := Sweep([]Stream{{Name: "good", Heartbeats: hbs}}, fams, SweepConfig{})
	require.NoError(t, err)
	requireSameCurves(t, mem, got[len(fams):])
	for i, c := range got[:len(fams)] {
		require.Empty(t, c.Points, c.Family)
		require.ErrorIs(t, c.Err, bad, c.Family)
		require.ErrorContains(t, c.Err, "qos: "+fams[i].Name, c.Family)
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

// runWithin fails the test when fn has not returned after d (a deadlock of
// the shared reads).
func runWithin(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("not done after %v: the shared reads deadlocked", d)
	}
}

// The per-point replays of a curve read through a fanSource run in
// batches of fanReplays: a read feeds at most that many replays (plus the
// stream's other sweeps), so memory and open spill files do not grow with
// the number of points, and the stream is read once per batch. The points
// equal the replays in memory.
func TestReplayEachBatchesOnFanSource(t *testing.T) {
	hbs := generate(genOpts{n: 600, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 5})
	vals := make([]float64, 2*fanReplays+3)
	for i := range vals {
		vals[i] = 1 + float64(i)/8
	}
	f := PhiNormalFamily(phi.NormalConfig{WindowSize: 50}, vals)
	cfg := Config{Intervals: true, Spill: Spill{After: 100}}
	want, _, err := replayEach(&f, SliceSource(hbs), cfg, func(int) {})
	require.NoError(t, err)
	fan := newFanSource(spooled(t, hbs), 1)
	var got []*Point
	runWithin(t, time.Minute, func() {
		defer fan.leave()
		got, _, err = replayEach(&f, fan, cfg, func(int) {})
	})
	require.NoError(t, err)
	require.Equal(t, want, got)
	one := &countingSource{Source: SliceSource(hbs)}
	_, err = replayPoint(&f, 0, one, cfg)
	require.NoError(t, err)
	require.Equal(t, fanReplays, fan.widest)
	require.Equal(t, 3*int(one.passes.Load()), fan.reads, "three batches")
	require.Equal(t, 0, fan.members)
}

// A curve that falls back to one replay per point on a fanSource, with a
// first value the constructor rejects (the replay of that point makes no
// pass), completes with the other points and the first value's error.
func TestReplayEachFirstValueRejectedOnFanSource(t *testing.T) {
	hbs := generate(genOpts{n: 600, interval: ms(100), delay: ms(30), spread: ms(8), loss: 0.01, seed: 6})
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 50}
	fams := []Family{
		SFDFamily(sfd.Config{Estimator: est}, []time.Duration{-ms(1), ms(50), ms(200)}),
		PhiAkkaFamily(phi.AkkaConfig{WindowSize: 50}, []float64{-1, 2, 8}),
	}
	for _, f := range fams {
		mem, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, []Family{f}, SweepConfig{})
		require.NoError(t, err)
		require.Equal(t, Method(PerPoint), mem[0].Method, f.Name)
		var got []Curve
		runWithin(t, time.Minute, func() {
			got, err = Sweep([]Stream{{Name: "s", Source: spooled(t, hbs)}}, []Family{f}, SweepConfig{})
		})
		require.NoError(t, err)
		requireSameCurves(t, mem, got)
		require.Len(t, got[0].Points, 2, f.Name)
		require.ErrorContains(t, got[0].Err, "=-1: ", f.Name)
	}
}

// replayEach of no values on a fanSource returns no point and leaves the
// membership as it was.
func TestReplayEachNoValuesOnFanSource(t *testing.T) {
	hbs := generate(genOpts{n: 100, interval: ms(100), delay: ms(30), spread: ms(8), seed: 7})
	fan := newFanSource(spooled(t, hbs), 1)
	none := PhiNormalFamily(phi.NormalConfig{WindowSize: 20}, nil)
	pts, method, err := replayEach(&none, fan, Config{}, func(int) { t.Fatal("progress without a point") })
	require.NoError(t, err)
	require.Empty(t, pts)
	require.Equal(t, Method(PerPoint), method)
	require.Equal(t, 1, fan.members)
	require.Equal(t, 0, fan.reads)
}
