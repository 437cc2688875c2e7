package qos

import (
	"math"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
)

// sweepSFD computes the points of an SFD initial-margin sweep (values in
// ms, the other settings from scfg) exactly as one replay per margin would,
// without running the NFD-E estimator once per margin. SFD's τ =
// EA_{ℓ+1} + SM (ALGORITHMS.md §6): EA does not depend on the margin, only
// the sequence of SM does, through the control rule. So sfd.Margins runs
// the control of every margin over one shared estimator, one more estimator
// pass here records per heartbeat whether τ moves, EA_{ℓ+1} and the window
// length (warm-up), and each margin is then replayed (§9.3, the replay's
// own code) through sfdPath, a detector that reads τ from these instead of
// estimating.
//
// It returns errNotLinear (Sweep then replays each point, which reports the
// errors) for a value New rejects, an invalid configuration, or a replay
// error.
func sweepSFD(scfg sfd.Config, values []float64, hbs []detector.Heartbeat, cfg Config) ([]*Point, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	margins := make([]time.Duration, len(values))
	for i, v := range values {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, errNotLinear
		}
		margins[i] = sfdMargin(v)
	}
	paths, err := sfd.Margins(scfg, margins, hbs)
	if err != nil {
		return nil, errNotLinear
	}
	est, err := chen.NewEstimator(scfg.Estimator)
	if err != nil {
		return nil, errNotLinear
	}
	minSamples, err := chen.MinSamples(scfg.MinSamples, est.WindowSize())
	if err != nil {
		return nil, errNotLinear
	}
	n := len(hbs)
	tr := &sfdTrace{next: make([]time.Duration, n), moves: make([]bool, n), lens: make([]int32, n), minSamples: minSamples}
	for k, hb := range hbs {
		switch est.Classify(hb) {
		case chen.Late:
			est.Observe(hb)
		case chen.Fresh, chen.Restart:
			est.Observe(hb)
			tr.next[k], tr.moves[k] = est.Next(), true
		}
		tr.lens[k] = int32(est.Len())
	}
	pts := make([]*Point, len(values))
	for i, v := range values {
		res, err := ReplaySlice(&sfdPath{tr: tr, changes: paths[i]}, hbs, cfg)
		if err != nil {
			return nil, errNotLinear
		}
		pts[i] = &Point{Value: v, Result: res}
	}
	return pts, nil
}

// sfdMargin is the initial margin SFDFamily's detector uses for v ms.
func sfdMargin(v float64) time.Duration {
	m := durMS(v)
	if m == 0 {
		m = 1 // sfd treats 0 as "default Δ"
	}
	return m
}

// sfdTrace is what SFD's estimator made of each heartbeat of a stream,
// whatever the margin.
type sfdTrace struct {
	next       []time.Duration // EA_{ℓ+1} after heartbeat k, if it moves τ
	moves      []bool          // heartbeat k is Fresh or a Restart: it moves τ
	lens       []int32         // the window's length after heartbeat k
	minSamples int
}

// sfdPath is an SFD detector replayed from an sfdTrace and its margin's
// changes (sfd.Margins): after heartbeat k, τ = EA_{ℓ+1} + SM (saturating,
// as chen.Estimator.FreshnessPoint) when k moves τ, warming up while the
// window holds fewer than MinSamples samples.
type sfdPath struct {
	tr      *sfdTrace
	changes []sfd.MarginChange
	k, ci   int
	tau     time.Duration
	seen    bool
	warm    bool
}

func (d *sfdPath) Observe(detector.Heartbeat) {
	k := d.k
	d.k++
	for d.ci+1 < len(d.changes) && d.changes[d.ci+1].From <= k {
		d.ci++
	}
	if d.tr.moves[k] {
		d.tau, d.seen = detector.AddSat(d.tr.next[k], d.changes[d.ci].SM), true
	}
	d.warm = int(d.tr.lens[k]) < d.tr.minSamples
}

func (d *sfdPath) FreshnessPoint() (time.Duration, bool) { return d.tau, d.seen }
func (d *sfdPath) WarmingUp() bool                       { return d.warm }
func (d *sfdPath) Suspected(now time.Duration) bool      { return d.seen && now > d.tau }
