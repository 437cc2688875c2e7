// The end of a replay: the Result's rates, spans and TD statistics.

package qos

import (
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// noEvaluation is ErrNoEvaluation for a replay that evaluated none of its
// fresh heartbeats, with warmUp the warm-up asked for (Config.WarmUp, or
// the family's): it says which warm-up held them, the one asked for (the
// first warmUp) or the detector's own (the detector had no freshness
// point yet, Detector.WarmingUp, after the others).
func noEvaluation(fresh, warmUp int) error {
	switch {
	case fresh == 0:
		return fmt.Errorf("%w: the stream has no fresh heartbeat", ErrNoEvaluation)
	case fresh <= warmUp:
		return fmt.Errorf("%w: all %d fresh heartbeat(s) were in the warm-up of %d", ErrNoEvaluation, fresh, warmUp)
	case warmUp == 0:
		return fmt.Errorf("%w: the detector was still warming up after all %d fresh heartbeat(s) (it needs more to have a freshness point)", ErrNoEvaluation, fresh)
	}
	return fmt.Errorf("%w: of %d fresh heartbeats, %d were in the warm-up of %d and the detector was still warming up after the other %d (it needs more to have a freshness point)", ErrNoEvaluation, fresh, warmUp, warmUp, fresh-warmUp)
}

func (r *replayer) finish() (Result, error) {
	res := r.res
	if !r.evaluating {
		return Result{}, noEvaluation(res.WarmUp, r.cfg.WarmUp)
	}
	res.End = r.prevA
	res.Span = res.End - res.Start
	if r.out && r.cfg.RecordMistakes {
		res.MistakeIntervals = append(res.MistakeIntervals, Interval{Start: r.openStart, End: res.End})
	}
	sync := r.clockSync()
	res.setClock(sync, r.cfg.DelayOffset)
	if r.spill != nil {
		defer r.spill.close()
		if r.cells != nil {
			if err := r.setSpan(res.Start); err != nil {
				return Result{}, err
			}
		}
		st, last, err := r.spill.stats(sync, r.cells)
		if err != nil {
			return Result{}, err
		}
		res.TD, res.LastTD = st, time.Duration(last)
		res.setRates()
		if r.cells != nil {
			res.setCI(r.cells)
		}
		return res, nil
	}
	var cells *cellSeries // the one whose TD sums this replay fills
	if r.cells != nil {
		if err := r.setSpan(res.Start); err != nil {
			return Result{}, err
		}
		if r.lin == nil {
			cells = r.cells
		}
	}
	var base []int64
	if sync {
		base = r.delay
	}
	acc := sumTD(r.tdArr, base, int64(r.cfg.DelayOffset), cells, r.evCell) // τ − A_k becomes TD_k in place
	res.TD, res.LastTD = acc.stats(r.tdArr)
	res.setRates()
	if r.cells != nil && r.lin == nil {
		res.setCI(r.cells)
	}
	return res, nil
}

// errArrivalOrder is the error of a replay whose n-th heartbeat hb arrives
// before the previous arrival prev.
func errArrivalOrder(n int, hb detector.Heartbeat, prev time.Duration) error {
	return fmt.Errorf("qos: heartbeat %d (seq %d) arrives at %v, before the previous arrival %v: replay needs arrival order",
		n, hb.Seq, hb.Arrival, prev)
}

// clockSyncOf decides, after a pass, whether TD is send-based: every
// heartbeat had its send time (allSent) and, in ClockAuto, every delay was
// plausible (plaus).
func clockSyncOf(mode ClockMode, allSent, plaus bool) bool {
	switch mode {
	case ClockSynchronized:
		return allSent
	case ClockUnsynchronized:
		return false
	}
	return allSent && plaus
}

// setClock sets ClockSync, TDBasis and DelayOffset (d̄ = offset when
// arrival-based) for the decision sync.
func (res *Result) setClock(sync bool, offset time.Duration) {
	res.ClockSync = sync
	if sync {
		res.TDBasis = TDSend
	} else {
		res.TDBasis = TDArrival
		res.DelayOffset = offset
	}
}

// setSpan fills the span per cell from start, from r.spans when the
// replays of the stream share one.
func (r *replayer) setSpan(start time.Duration) error {
	if r.spans != nil {
		return r.spans.fill(r.cells, start)
	}
	return r.cells.setSpan(r.src, start)
}

// setRates fills MR, QAP and the mean durations from Mistakes, Suspected and
// Span.
func (res *Result) setRates() {
	res.MRPerSecond, res.QAP = 0, 1
	res.MeanTM, res.MeanTMR, res.MeanTG = 0, 0, 0
	if res.Span > 0 {
		res.MRPerSecond = float64(res.Mistakes) / res.Span.Seconds()
		res.QAP = 1 - float64(res.Suspected)/float64(res.Span)
	}
	if res.Mistakes > 0 {
		m := float64(res.Mistakes)
		res.MeanTM = time.Duration(math.Round(float64(res.Suspected) / m))
		res.MeanTMR = time.Duration(math.Round(float64(res.Span) / m))
		res.MeanTG = res.MeanTMR - res.MeanTM
	}
}

// ClocksLookSynchronized applies ClockAuto's rule to a whole stream: every
// heartbeat has a send time and its apparent one-way delay A − σ lies in
// [0, MaxPlausibleDelay]. Callers use it to configure detectors that measure
// TD themselves (SFD) the way the replay will.
func ClocksLookSynchronized(hbs []detector.Heartbeat) bool {
	ok, _ := ClocksLookSynchronizedIn(sliceSource(hbs))
	return ok
}

// ClocksLookSynchronizedIn is ClocksLookSynchronized over a Source; the
// error is the Source's.
func ClocksLookSynchronizedIn(src Source) (bool, error) {
	if src.Len() == 0 {
		return false, nil
	}
	seq, done := src.Pass()
	ok := true
	for hb := range seq {
		if !SynchronizedDelay(hb) {
			ok = false
			break
		}
	}
	return ok, done()
}

// SynchronizedDelay reports whether hb carries a send time and its
// apparent one-way delay A − σ lies within [0, MaxPlausibleDelay]: the
// rule ClocksLookSynchronized applies to every heartbeat of a stream, for
// a caller that reads the stream anyway.
func SynchronizedDelay(hb detector.Heartbeat) bool {
	d := hb.Arrival - hb.Sent
	return hb.HasSent && d >= 0 && d <= MaxPlausibleDelay
}
