package qos

import (
	"cmp"
	"math"

	"github.com/fdkit/fdkit/phi"
)

// akkaGroups is the grouped pass's model of Akka's φ (phi.Akka with the
// settings of cfg): y = phi.AkkaYOfLevel(Θ), and an interval I is
// recorded iff float64(I) < t*(Θ) (phi.AkkaCrossing).
func akkaGroups(cfg phi.AkkaConfig) groupModel {
	return groupModel{
		y:     phi.AkkaYOfLevel,
		valid: func(v float64) bool { return v > 0 && !math.IsInf(v, 0) },
		build: func(th float64) (groupDetector, error) {
			c := cfg
			c.Threshold = th
			return phi.NewAkka(c)
		},
		fork: func(d groupDetector, th float64) (groupDetector, error) {
			return d.(*phi.Akka).Fork(th)
		},
		records: func(iv, c float64) bool { return iv < c },
		same:    func(a, b groupDetector) bool { return a.(*phi.Akka).SameHistory(b.(*phi.Akka)) },
		every:   cmp.Or(cfg.WindowSize, phi.DefaultAkkaWindowSize),
	}
}

// normalGroups is the grouped pass's model of the normal φ with
// skip-suspected (phi.Normal with the settings of cfg): y = phi.ZOfLevel(Θ),
// and an interval I is left out when its arrival is after τ = T_last +
// ⌈t*(Θ)⌉ (phi.NormalCrossing), that is iff I > ⌈t*⌉ (both are integers
// and ⌈t*⌉ < 2^53 ns, maxExactCrossing, so the float64 comparison is
// exact). During the bootstrap, and for an interval MaxInterval leaves out
// anyway, the detectors record or leave it out whatever Θ; records then
// may split a group needlessly, which is exact too.
//
// Two groups join again once the interval they parted on has left both
// windows (n intervals judged alike) and their relearn runs agree
// (phi.Normal.SameHistory). The pass gives up past P/4 groups: with the
// default σ floor (μ/100) and jitter of the order of σ, a threshold Θ
// leaves out about a share 10^−Θ of the intervals, so thresholds below
// about 3 part from each other every few hundred arrivals, faster than
// they can join, and keep groups of their own; each group costs about a
// replay of its own, so a pass with more than a quarter of the points in
// groups saves little, and on a long stream its forms would spill to a
// file per node.
func normalGroups(cfg phi.NormalConfig) groupModel {
	return groupModel{
		y:     phi.ZOfLevel,
		valid: func(v float64) bool { return v >= math.Log10(2) && !math.IsInf(v, 0) },
		build: func(th float64) (groupDetector, error) {
			c := cfg
			c.Threshold = th
			return phi.NewNormal(c)
		},
		fork: func(d groupDetector, th float64) (groupDetector, error) {
			return d.(*phi.Normal).Fork(th)
		},
		records: func(iv, c float64) bool { return iv <= math.Ceil(c) },
		same:    func(a, b groupDetector) bool { return a.(*phi.Normal).SameHistory(b.(*phi.Normal)) },
		every:   cmp.Or(cfg.WindowSize, phi.DefaultWindowSize),
		share:   0.25,
	}
}
