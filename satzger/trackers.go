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
// thresholds whose order statistic changed since the previous call (an
// arrival moves only the order statistics between the ranks of the
// interval it adds and of the one it evicts).
type Trackers struct {
	d   *Detector
	ths []float64
	n   int             // the sample count of the ranks m (0: none yet)
	m   []int           // each threshold's rank among n samples
	x   []time.Duration // each threshold's last order statistic (−1: none)
	e   []time.Duration // and its crossing, crossing(x)
}

// TrackAll returns Trackers of thresholds on d's window, or false when one
// of them is outside (0, 1].
func (d *Detector) TrackAll(thresholds []float64) (*Trackers, bool) {
	for _, th := range thresholds {
		if !(th > 0 && th <= 1) {
			return nil, false
		}
	}
	k := len(thresholds)
	t := &Trackers{d: d, ths: slices.Clone(thresholds), m: make([]int, k), x: make([]time.Duration, k), e: make([]time.Duration, k)}
	for i := range t.x {
		t.x[i] = -1 // no interval is negative
	}
	return t, true
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
	if len(s) != t.n {
		t.n = len(s)
		for i, th := range t.ths {
			t.m[i] = Rank(th, len(s))
		}
	}
	xs, es := t.x[:len(t.m)], t.e[:len(t.m)]
	taus = taus[:len(t.m)]
	for i, m := range t.m {
		if x := s[m-1]; x != xs[i] {
			es[i], _ = crossing(x, d.scale)
			xs[i] = x
		}
		taus[i] = detector.AddSat(d.last, es[i])
	}
}
