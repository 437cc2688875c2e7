package qos

import (
	"time"

	"github.com/fdkit/fdkit/detector"
)

// refResult is what the slow reference replay observed.
type refResult struct {
	start     time.Duration // first tick: arrival of the first evaluated heartbeat
	samples   []bool        // suspected at start + i·tick
	mistakes  int           // trust→suspect transitions between samples
	suspected time.Duration // samples suspected × tick
}

// referenceReplay is the slow, obvious replay that checks ReplaySlice: from the
// first evaluated heartbeat it steps time in ticks, feeds every heartbeat
// that has arrived by the tick to det, and asks det.Suspected. Warm-up
// follows the same definition as Config.WarmUp and Detector.WarmingUp.
func referenceReplay(det detector.Detector, hbs []detector.Heartbeat, warmUp int, tick time.Duration) (refResult, bool) {
	var (
		fresh   int
		hasSeq  bool
		lastSeq uint64
		i       int
	)
	isFresh := func(hb detector.Heartbeat) bool {
		if hb.HasSeq && hasSeq && hb.Seq <= lastSeq {
			return false
		}
		if hb.HasSeq {
			lastSeq, hasSeq = hb.Seq, true
		}
		return true
	}
	// Warm-up: observe until the first fresh heartbeat that is evaluated.
	started := false
	var start time.Duration
	for ; i < len(hbs); i++ {
		hb := hbs[i]
		f := isFresh(hb)
		det.Observe(hb)
		if !f {
			continue
		}
		fresh++
		_, ok := det.FreshnessPoint()
		if ok && !det.WarmingUp() && fresh > warmUp {
			start, started = hb.Arrival, true
			i++
			break
		}
	}
	if !started {
		return refResult{}, false
	}
	res := refResult{start: start}
	end := hbs[len(hbs)-1].Arrival
	prev := false
	for t := start; t <= end; t += tick {
		for ; i < len(hbs) && hbs[i].Arrival <= t; i++ {
			isFresh(hbs[i])
			det.Observe(hbs[i])
		}
		s := det.Suspected(t)
		res.samples = append(res.samples, s)
		if s {
			res.suspected += tick
			if !prev {
				res.mistakes++
			}
		}
		prev = s
	}
	return res, true
}
