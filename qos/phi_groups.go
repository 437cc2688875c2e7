package qos

import (
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
// The pass gives up past P/2 groups: with the default σ floor (μ/100) and
// jitter of the order of σ, thresholds from 0.5 to 16 part at arrivals all
// along the stream, and a pass in which every threshold has a group of its
// own costs a little more than one replay per threshold; they part early
// (half of 40 within 2,000 heartbeats of a 100 ms stream with 1 ms
// jitter), so giving up costs little.
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
		share:   0.5,
	}
}
