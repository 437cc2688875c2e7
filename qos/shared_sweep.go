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

// atThreshold shows the replay engine a shared thresholdDetector as the
// detector of one threshold: the driver observes each heartbeat once, on
// the shared detector, before the replayers step, so Observe does nothing.
// fp, when not nil, answers FreshnessPointAt(th) (a tracker that carries
// work from one state to the next).
type atThreshold struct {
	src thresholdDetector
	th  float64
	fp  func() (time.Duration, bool)
}

func (p *atThreshold) Observe(detector.Heartbeat) {}

func (p *atThreshold) FreshnessPoint() (time.Duration, bool) {
	if p.fp != nil {
		return p.fp()
	}
	return p.src.FreshnessPointAt(p.th)
}

func (p *atThreshold) WarmingUp() bool { return p.src.WarmingUp() }

func (p *atThreshold) Suspected(now time.Duration) bool {
	tau, ok := p.FreshnessPoint()
	return ok && now > tau
}

// sharedChunk bounds the replayers that run side by side (each keeps two
// int64 per evaluated heartbeat), so memory stays that of a few replays.
const sharedChunk = 8

// sweepShared computes the points of a threshold sweep of a detector whose
// state does not depend on the threshold (method SharedState): one detector
// observes the stream, and one replay engine per distinct threshold steps
// through it side by side, reading that threshold's freshness point from
// the shared state. The engine is replayer itself, so every field equals a
// replay of a detector built with that threshold, as long as its
// FreshnessPoint is FreshnessPointAt(its threshold) (true of both users).
// class[i] names the first value whose replay value i's equals (Satzger's
// thresholds of equal rank); only those are replayed. Thresholds are
// replayed in chunks of sharedChunk, each with a detector of its own built
// with the chunk's first threshold (newDet(v)), whose own τ that replayer
// reads without a second solve.
//
// track, when not nil, returns for a chunk's detector and a threshold a
// function equal to FreshnessPointAt(threshold) in every state (κ-FD's
// Tracker, which starts each solve from the previous crossing).
//
// It returns errNotLinear (Sweep then replays each point, which reports
// the errors) when newDet fails or a replay fails (arrivals out of order,
// nothing evaluated).
func sweepShared(newDet func(v float64) (thresholdDetector, error), track func(thresholdDetector, float64) func() (time.Duration, bool), values []float64, class []int, hs Source, cfg Config) ([]*Point, error) {
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
	for lo := 0; lo < len(reps); lo += sharedChunk {
		chunk := reps[lo:min(lo+sharedChunk, len(reps))]
		src, err := newDet(values[chunk[0]]) // its own τ is the first replayer's
		if err != nil {
			return nil, errNotLinear
		}
		rs := make([]*replayer, len(chunk))
		for j, i := range chunk {
			at := &atThreshold{src: src, th: values[i]}
			if track != nil {
				at.fp = track(src, values[i])
			}
			rs[j] = newSourceReplayer(at, cfg, hs)
			if cfg.Intervals {
				rs[j].withCells(hs)
				rs[j].spans = spans
			}
		}
		seq, done := hs.Pass()
		failed := false
	pass:
		for hb := range seq {
			src.Observe(hb)
			for _, r := range rs {
				if err := r.step(hb); err != nil {
					failed = true
					break pass
				}
			}
		}
		if err := done(); err != nil {
			return nil, err
		}
		if failed {
			return nil, errNotLinear
		}
		for j, i := range chunk {
			if res[i], err = rs[j].finish(); err != nil {
				return nil, errNotLinear
			}
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
