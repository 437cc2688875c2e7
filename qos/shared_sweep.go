package qos

import (
	"time"

	"github.com/fdkit/fdkit/detector"
)

// thresholdDetector is a detector whose state does not depend on its
// threshold and that answers, from that state, the freshness point it
// would have with any threshold (satzger.Detector, kappa.Detector).
type thresholdDetector interface {
	detector.Detector
	FreshnessPointAt(threshold float64) (time.Duration, bool)
}

// A thresholdPass keeps one int64 per evaluated heartbeat and threshold
// (the delays are shared; the normal φ's passes 4 bytes while τ − A_k
// stays below 2^32 ns, tdNarrowBytes, and 8 from the first that does not,
// up to twice leanBudget then): on a stream in memory it takes as many
// thresholds as fit in leanBudget bytes of them, at least one, so that a
// sweep of a long stream in memory stays within the run's memory (a chunk
// more costs a pass of the detector's shared state, not a solve more;
// sweepRanked replaces several such passes by two). A variable so that
// tests sweep in several passes.
var leanBudget = 32 << 20

// sharedSpillChunk bounds the thresholds a pass over a stream past
// Spill.InMemory takes: each moves its TD_k to a tdSpill, which keeps a
// sample of up to tdSpillSample records and its write buffers (about 200
// KiB), so that --points 1000 does not hold 1000 of them at once (a pass
// more costs a read of the stream and of the shared state, not a solve
// more). fdreplay's 40 points take one pass.
const sharedSpillChunk = 128

// rankedChunk bounds the thresholds sweepRanked takes at once: each keeps
// a sample of about 16384 values and rank windows of a few percent of the
// stream's (about 0.5 MiB a threshold at 2^20 heartbeats), so that
// --points 1000 does not hold 1000 of them at once.
const rankedChunk = 64

// sweepShared computes the points of a threshold sweep of a detector whose
// state does not depend on the threshold (method SharedState): one detector
// observes the stream, and the replay of every distinct threshold steps
// through it side by side, reading that threshold's freshness point from
// the shared state, in thresholdPasses, which do the work that does not
// depend on τ once. On a stream in memory (a slice, or a Source of at most
// Config.Spill.InMemory heartbeats) a pass keeps the TD_k of its
// thresholds in memory; on a longer Source a pass takes up to
// sharedSpillChunk thresholds and moves their TD_k to files
// (newSpilledThresholdPass). Either
// way every field equals a replay of a detector built with that threshold,
// as long as its FreshnessPoint is FreshnessPointAt(its threshold) (true of
// both users). class[i] names the first value whose replay value i's
// equals (Satzger's thresholds of equal rank); only those are replayed.
// Thresholds are replayed in chunks, each with a detector of its own built
// with the chunk's first threshold (newDet(v)), whose own τ that replay
// reads without a second solve.
//
// track, when not nil, returns for a chunk's detector and a threshold a
// function equal to FreshnessPointAt(threshold) in every state (κ-FD's
// Tracker, which starts each solve from the previous crossing); trackAll,
// when not nil, for a chunk's detector and its thresholds a function that
// sets them all (κ-FD's Trackers), which the thresholdPass reads instead.
//
// It returns errNotLinear (Sweep then replays each point, which reports
// the errors) when newDet fails or a replay fails (arrivals out of order,
// nothing evaluated).
func sweepShared(newDet func(v float64) (thresholdDetector, error), track func(thresholdDetector, float64) func() (time.Duration, bool), trackAll func(thresholdDetector, []float64) func([]time.Duration), values []float64, class []int, hs Source, cfg Config) ([]*Point, error) {
	return sweepSharedPasses(newDet, track, trackAll, values, class, hs, cfg, 0, false)
}

// sweepSharedPasses is sweepShared for a detector whose cost in a pass
// grows with the thresholds the pass takes (the normal φ's set, one
// detector per group of its thresholds): on a stream in memory it keeps
// the usual passes, each a chunk of the thresholds, where they number at
// most leanPasses, instead of sweepRanked's two over all of them, and
// its passes keep each TD_k in tdNarrowBytes while they fit (flushNarrow),
// so that a pass takes twice the thresholds within leanBudget. With
// taped, sweepRanked's second pass replays the first's freshness points
// from a file instead of running the detector again (for a detector
// whose state costs about what its freshness points cost: the normal
// φ's set).
func sweepSharedPasses(newDet func(v float64) (thresholdDetector, error), track func(thresholdDetector, float64) func() (time.Duration, bool), trackAll func(thresholdDetector, []float64) func([]time.Duration), values []float64, class []int, hs Source, cfg Config, leanPasses int, taped bool) ([]*Point, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var reps []int // indices of the values replayed
	for i := range values {
		if class[i] == i {
			reps = append(reps, i)
		}
	}
	res := make([]Result, len(values))
	var spans *spanMemo
	if cfg.Intervals {
		spans = newSpanMemo(hs)
	}
	// In memory, a pass keeps the TD_k of as many thresholds as fit in
	// leanBudget; past Spill.InMemory every threshold's go to a file and
	// one pass takes up to sharedSpillChunk of them (on a fanSource, one
	// read of the stream).
	_, lean := hs.(sliceSource)
	lean = lean || hs.Len() <= cfg.Spill.inMemory()
	chunkLen := min(len(reps), sharedSpillChunk)
	narrow := lean && leanPasses > 0
	if lean {
		perTD := 8
		if narrow {
			perTD = tdNarrowBytes
		}
		chunkLen = max(1, leanBudget/(perTD*max(hs.Len(), 1)))
	}
	fillOf := func(src thresholdDetector, chunk []int) func([]time.Duration) {
		if trackAll != nil {
			ths := make([]float64, len(chunk))
			for j, i := range chunk {
				ths[j] = values[i]
			}
			return trackAll(src, ths)
		}
		return fillAll(chunkFPs(src, track, values, chunk))
	}
	if lean && hs.Len() >= rankedMin && len(reps) > chunkLen && (len(reps)+chunkLen-1)/chunkLen > leanPasses {
		var missed []int
		for lo := 0; lo < len(reps); lo += rankedChunk {
			m, err := sweepRanked(newDet, fillOf, values, reps[lo:min(lo+rankedChunk, len(reps))], res, hs, cfg, spans, taped)
			if err != nil {
				return nil, err
			}
			missed = append(missed, m...)
		}
		reps = missed
	}
	for lo := 0; lo < len(reps); lo += chunkLen {
		chunk := reps[lo:min(lo+chunkLen, len(reps))]
		src, err := newDet(values[chunk[0]]) // its own τ is the first replay's
		if err != nil {
			return nil, errNotLinear
		}
		out, err := passShared(src, len(chunk), fillOf(src, chunk), hs, cfg, spans, !lean, narrow)
		if err != nil {
			return nil, err
		}
		for j, i := range chunk {
			res[i] = out[j]
		}
	}
	pts := make([]*Point, len(values))
	for i, v := range values {
		r := res[class[i]]
		if class[i] != i && r.MistakeIntervals != nil {
			r.MistakeIntervals = append([]Interval(nil), r.MistakeIntervals...)
		}
		pts[i] = &Point{Value: v, Result: r}
	}
	return pts, nil
}

// chunkFPs returns the freshness point of each threshold values[i] of
// chunk on src, the detector built with the first.
func chunkFPs(src thresholdDetector, track func(thresholdDetector, float64) func() (time.Duration, bool), values []float64, chunk []int) []func() (time.Duration, bool) {
	fps := make([]func() (time.Duration, bool), len(chunk))
	for j, i := range chunk {
		switch th := values[i]; {
		case j == 0:
			fps[j] = src.FreshnessPoint
		case track != nil:
			fps[j] = track(src, th)
		default:
			fps[j] = func() (time.Duration, bool) { return src.FreshnessPointAt(th) }
		}
	}
	return fps
}

// fillAll returns a function that sets each point's freshness point from
// fps.
func fillAll(fps []func() (time.Duration, bool)) func([]time.Duration) {
	return func(taus []time.Duration) {
		for j, fp := range fps {
			taus[j], _ = fp()
		}
	}
}

// passShared replays n thresholds, whose freshness points fill sets, on
// src in one thresholdPass, which moves their TD_k to files when spilled
// and keeps them in 4 bytes while they fit with narrow.
func passShared(src thresholdDetector, n int, fill func([]time.Duration), hs Source, cfg Config, spans *spanMemo, spilled, narrow bool) ([]Result, error) {
	var grid *cellGrid
	if cfg.Intervals {
		g := newCellGrid(hs)
		grid = &g
	}
	var p *thresholdPass
	if spilled {
		var err error
		if p, err = newSpilledThresholdPass(src, n, fill, cfg, grid); err != nil {
			return nil, err
		}
	} else {
		p = newThresholdPass(src, n, fill, cfg, hs.Len(), grid, narrow)
	}
	if err := drive(p, hs); err != nil {
		return nil, err
	}
	out, err := p.finish(spans)
	if err != nil {
		return nil, errNotLinear
	}
	return out, nil
}

// drive steps p through the heartbeats of hs: errNotLinear when a step
// fails (arrivals out of order), or the Source's error; p is closed on
// failure.
func drive(p *thresholdPass, hs Source) error {
	seq, done := hs.Pass()
	failed := false
	for hb := range seq {
		if err := p.step(hb); err != nil {
			failed = true
			break
		}
	}
	if err := done(); err != nil {
		p.close()
		return err
	}
	if failed {
		p.close()
		return errNotLinear
	}
	return nil
}
