package qos

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/twowfd"
)

// TwoWFDFamily sweeps 2W-FD's safety margin α ≥ 0 over alphas with the
// other settings from cfg (docs/algorithms.md, “2W-FD”): τ =
// max(EA^(n1), EA^(n2)) + α, linear in α (method OnePass). Point values are
// in milliseconds.
func TwoWFDFamily(cfg twowfd.Config, alphas []time.Duration) Family {
	return Family{
		Name: "2w-fd", Param: "alpha", Unit: "ms", Values: msValues(alphas),
		New: func(v float64) (detector.Detector, error) {
			if v < 0 {
				return nil, fmt.Errorf("margin %g ms is negative", v)
			}
			c := cfg
			c.Margin = new(durMS(v))
			return twowfd.New(c)
		},
		Linear: func(v float64) float64 { return float64(durMS(v)) },
	}
}

// SatzgerFamily sweeps the threshold θ ∈ (0, 1] of Satzger et al.'s
// detector with the other settings from cfg (docs/algorithms.md,
// “Satzger's adaptive accrual detector”). τ = T_last + I_(m)/c is
// piecewise constant in θ (m = ⌈θ·N'⌉) and the window does not depend on
// θ, so Sweep computes the curve with one shared window (method
// SharedState): thresholds of equal rank m for every window length N' ≤ N
// give equal replays and are replayed once; the others step side by side
// through the shared detector, which reads all their order statistics in
// one walk of its sorted window (satzger.Trackers). The result equals one replay per threshold
// in every field; Sweep falls back to that for a threshold outside (0, 1].
func SatzgerFamily(cfg satzger.Config, thresholds []float64) Family {
	newDet := func(v float64) (*satzger.Detector, error) {
		if !(v > 0 && v <= 1) {
			return nil, fmt.Errorf("threshold %g is not in (0, 1]", v)
		}
		c := cfg
		c.Threshold = v
		return satzger.New(c)
	}
	return Family{
		Name: "satzger", Param: "threshold", Values: thresholds, Max: 1,
		New: func(v float64) (detector.Detector, error) { return newDet(v) },
		onePass: func(values []float64, hbs Source, rc Config) ([]*Point, error) {
			for _, v := range values {
				if !(v > 0 && v <= 1) {
					return nil, errNotLinear
				}
			}
			d, err := newDet(values[0])
			if err != nil {
				return nil, errNotLinear
			}
			n := d.WindowSize()
			ranks := make([][]int, len(values))
			for i, v := range values {
				ranks[i] = make([]int, n)
				for k := range n {
					ranks[i][k] = satzger.Rank(v, k+1)
				}
			}
			class := classes(len(values), func(i, j int) bool { return slices.Equal(ranks[i], ranks[j]) })
			trackAll := func(src thresholdDetector, ths []float64) func([]time.Duration) {
				ts, ok := src.(*satzger.Detector).TrackAll(ths)
				if !ok {
					return nil // not reached: the values were checked above
				}
				return ts.FreshnessPoints
			}
			return sweepShared(func(v float64) (thresholdDetector, error) { return newDet(v) }, nil, trackAll, values, class, hbs, rc)
		},
		method: SharedState,
	}
}

// KappaFamily sweeps the threshold K > 0 of κ-FD with the other settings
// from cfg (docs/algorithms.md, “κ-FD”). τ(K) solves κ(τ) = K, which is
// not linear in K, but the state (EA_{ℓ+1}, σ) does not depend on K: Sweep
// runs one estimator for all thresholds, each solving for its own τ at
// every heartbeat from its crossing at the previous one (kappa.Tracker;
// method SharedState). The result equals one replay per
// threshold in every field; Sweep falls back to that for a threshold that
// is not finite and positive.
func KappaFamily(cfg kappa.Config, thresholds []float64) Family {
	newDet := func(v float64) (*kappa.Detector, error) {
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("threshold %g must be finite and positive", v)
		}
		c := cfg
		c.Threshold = v
		return kappa.New(c)
	}
	return Family{
		Name: "kappa", Param: "threshold", Values: thresholds,
		New: func(v float64) (detector.Detector, error) { return newDet(v) },
		onePass: func(values []float64, hbs Source, rc Config) ([]*Point, error) {
			for _, v := range values {
				if !(v > 0) || math.IsInf(v, 1) {
					return nil, errNotLinear
				}
			}
			class := classes(len(values), func(i, j int) bool { return values[i] == values[j] })
			track := func(src thresholdDetector, k float64) func() (time.Duration, bool) {
				tr, ok := src.(*kappa.Detector).Track(k)
				if !ok {
					return nil // not reached: the values were checked above
				}
				return tr.FreshnessPoint
			}
			trackAll := func(src thresholdDetector, ks []float64) func([]time.Duration) {
				ts, ok := src.(*kappa.Detector).TrackAll(ks)
				if !ok {
					return nil // not reached: the values were checked above
				}
				return func(taus []time.Duration) { ts.FreshnessPoints(taus) }
			}
			return sweepShared(func(v float64) (thresholdDetector, error) { return newDet(v) }, track, trackAll, values, class, hbs, rc)
		},
		method: SharedState,
	}
}

// classes returns, for each of n values, the index of the first value
// equivalent to it.
func classes(n int, same func(i, j int) bool) []int {
	c := make([]int, n)
	for i := range n {
		c[i] = i
		for j := range i {
			if c[j] == j && same(i, j) {
				c[i] = j
				break
			}
		}
	}
	return c
}
