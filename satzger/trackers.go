package satzger

import (
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Trackers reads the freshness points of several thresholds from one
// detector's window (what a threshold sweep replays): each threshold's τ
// is T_last + I_(m)/c with its own rank m (Rank), so every τ is one index
// into the sorted window, and I_(m)/c is recomputed only for the
// thresholds whose order statistic changed since the previous call.
type Trackers struct {
	d    *Detector
	ths  []float64
	memo []crossingMemo
}

// TrackAll returns Trackers of thresholds on d's window, or false when one
// of them is outside (0, 1].
func (d *Detector) TrackAll(thresholds []float64) (*Trackers, bool) {
	for _, th := range thresholds {
		if !(th > 0 && th <= 1) {
			return nil, false
		}
	}
	return &Trackers{d: d, ths: slices.Clone(thresholds), memo: make([]crossingMemo, len(thresholds))}, true
}

// FreshnessPoints sets taus[i] to FreshnessPointAt(thresholds[i]) in the
// detector's current state (0 before the first heartbeat).
func (t *Trackers) FreshnessPoints(taus []time.Duration) {
	d := t.d
	if !d.seen {
		clear(taus)
		return
	}
	var boot [1]time.Duration
	s := d.samples(&boot)
	for i, th := range t.ths {
		taus[i] = detector.AddSat(d.last, t.memo[i].elapsed(s, th, d.scale))
	}
}
