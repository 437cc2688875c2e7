package phi

import "math"

const (
	// seriesFrom is the z from which LevelOfZ uses the asymptotic series of
	// ln Q instead of math.Erfc (ALGORITHMS.md §5.4: Erfc goes subnormal near
	// z = 38).
	seriesFrom = 30.0
	lnSqrt2Pi  = 0.91893853320467274178032973640562 // ln √(2π)
)

// lnQ returns ln Q(z), Q(z) = ½·erfc(z/√2) the upper tail of the standard
// normal, with full relative accuracy for every z:
//
//   - z < 0: ln(1 − Q(−z)) by Log1p, so that tiny levels keep their digits;
//   - 0 ≤ z < 30: ln(½·erfc(z/√2));
//   - z ≥ 30: the asymptotic expansion
//     ln Q(z) = −z²/2 − ln(z√(2π)) + ln(1 − 1/z² + 3/z⁴ − 15/z⁶ + …),
//     taken to the term 2027025/z¹⁶; the series alternates, so the error is
//     below the first omitted term, 34459425/z¹⁸ < 1e-19 at z = 30.
func lnQ(z float64) float64 {
	switch {
	case z < 0:
		return math.Log1p(-0.5 * math.Erfc(-z/math.Sqrt2))
	case z < seriesFrom:
		return math.Log(0.5 * math.Erfc(z/math.Sqrt2))
	default:
		r := 1 / (z * z)
		s := r * (-1 + r*(3+r*(-15+r*(105+r*(-945+r*(10395+r*(-135135+r*2027025)))))))
		return -0.5*z*z - math.Log(z) - lnSqrt2Pi + math.Log1p(s)
	}
}

// LevelOfZ returns the normal-model suspicion level for a standardized
// elapsed time z = (t − T_last − μ)/σ:
//
//	φ(z) = −log10 Q(z),  Q(z) = ½·erfc(z/√2)
//
// the definition of φ by Hayashibara et al. (SRDS 2004) with a normal
// P_later (ALGORITHMS.md §5.1). It is computed stably (§5.4): with math.Erfc
// up to z = 30 and an asymptotic series beyond, so it keeps close to full
// double precision (tests check 1e-9 relative against 50-digit references
// from z = −10 to 100), is finite for every finite z (φ(38) = 315.54, where
// the naive −log10(1 − Φ_N(z)) is +Inf from z ≈ 8.3), and is never negative:
// it tends to 0 as z → −∞ and is exactly 0 once Q(z) rounds to 1, below
// z ≈ −38.5. It is non-decreasing in z. LevelOfZ(+Inf) is +Inf;
// LevelOfZ(NaN) is NaN.
func LevelOfZ(z float64) float64 {
	l := -lnQ(z) / math.Ln10
	if l > 0 {
		return l
	}
	if math.IsNaN(z) {
		return math.NaN()
	}
	return 0
}

// dLevelDz returns dφ/dz = pdf(z) / (Q(z)·ln 10), computed as
// exp(ln pdf − ln Q) so that it stays finite in the far tail.
func dLevelDz(z, lnq float64) float64 {
	return math.Exp(-0.5*z*z-lnSqrt2Pi-lnq) / math.Ln10
}

// ZOfLevel returns z(Φ) = Q⁻¹(10^−Φ), the standardized elapsed time at which
// the normal-model level reaches Φ, so that the crossing time is
// t*(Φ) = μ + σ·z(Φ) (ALGORITHMS.md §5.1). Examples: z(1) = 1.281552,
// z(8) = 5.612001, z(16) = 8.222082, z(300) = 37.047096.
//
// It does not use math.Erfcinv, which loses accuracy beyond Φ ≈ 15 (§5.4).
// Instead it runs Newton's method on the stable level LevelOfZ from
// z0 = √max(0, 2Φ·ln 10 − ln 2π) (ALGORITHMS.md §5.4), refined once by the
// asymptotic series; the level is convex in z, so the iteration converges
// monotonically, to within a few ulps of the root in 2 to 4 steps for every
// Φ ≥ log10 2. For 0 < Φ < log10 2 (z < 0) it
// uses the symmetry z(Φ) = −z(−log10(1 − 10^−Φ)).
//
// ZOfLevel(Φ) is −Inf for Φ ≤ 0, +Inf for Φ = +Inf, and NaN for NaN.
func ZOfLevel(level float64) float64 {
	switch {
	case math.IsNaN(level):
		return math.NaN()
	case level <= 0:
		return math.Inf(-1)
	case math.IsInf(level, 1):
		return math.Inf(1)
	case level < math.Log10E*math.Ln2:
		// Q(z) = 10^−Φ > ½, so z < 0 and Q(−z) = 1 − 10^−Φ.
		return -zOfUpperLevel(-math.Log10(-math.Expm1(-level * math.Ln10)))
	}
	return zOfUpperLevel(level)
}

// zOfUpperLevel solves LevelOfZ(z) = level for level ≥ log10 2 (z ≥ 0).
func zOfUpperLevel(level float64) float64 {
	z := math.Sqrt(math.Max(0, 2*level*math.Ln10-2*lnSqrt2Pi))
	if z > 1 {
		// One fixed-point step on z² = 2Φ·ln 10 − ln 2π − 2·ln z +
		// 2·ln(1 − 1/z²), the first terms of the asymptotic series.
		z = math.Sqrt(math.Max(0, 2*level*math.Ln10-2*lnSqrt2Pi-2*math.Log(z)+2*math.Log1p(-1/(z*z))))
	}
	for range 50 {
		lnq := lnQ(z)
		step := (-lnq/math.Ln10 - level) / dLevelDz(z, lnq)
		z -= step
		// Convergence is quadratic with |φ''/2φ'| < 1: after a step below
		// 1e-9 the error is below 1e-17 relative.
		if math.Abs(step) <= 1e-9*math.Max(1, math.Abs(z)) {
			break
		}
	}
	return z
}
