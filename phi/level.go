package phi

import "math"

const (
	// seriesFrom is the z from which ln Q is taken from its asymptotic series
	// (docs/algorithms.md, “Computing φ stably”).
	seriesFrom = 30.0
	// lowerTo is the end of the lowerLevel pieces: beyond it Q(u) < 1e-17
	// and −ln(1 − Q(u)) = Q(u) to double precision.
	lowerTo   = 8.5
	lnSqrt2Pi = 0.91893853320467274178032973640562 // ln √(2π)
)

// polyPiece is a polynomial f(x) = Σ c_k·t^k, t = (x − mid)·scale ∈ [−1, 1],
// fitted on one piece of the range (see cheb_tables.go).
type polyPiece struct {
	mid, scale float64
	c          [16]float64
}

// eval sums the polynomial at x by Estrin's scheme: its dependency chain is
// five multiply-adds long where Horner's or Clenshaw's would be fifteen.
func (p *polyPiece) eval(x float64) float64 {
	t := (x - p.mid) * p.scale
	c := &p.c
	t2 := t * t
	t4 := t2 * t2
	a0 := (c[0] + c[1]*t) + t2*(c[2]+c[3]*t)
	a1 := (c[4] + c[5]*t) + t2*(c[6]+c[7]*t)
	a2 := (c[8] + c[9]*t) + t2*(c[10]+c[11]*t)
	a3 := (c[12] + c[13]*t) + t2*(c[14]+c[15]*t)
	return (a0 + t4*a1) + t4*t4*(a2+t4*a3)
}

// millsLn returns ln(Q(z)/pdf(z)), the logarithm of Mills' ratio, for
// 0 ≤ z < 30, from the polynomials of cheb_tables.go (from Chebyshev expansions
// of 60-digit values by testdata/gen_cheb.py; absolute error about 1e-17).
func millsLn(z float64) float64 {
	i := 32 + int(z-8) // pieces of width 1 from 8 to 30
	if z < 8 {
		i = int(z * 4) // pieces of width 1/4
	}
	return millsLnPieces[i].eval(z)
}

// lowerLevel returns −ln(1 − Q(u)) = ln 10 · φ(−u) for 0 ≤ u < lowerTo,
// from the polynomials of cheb_tables.go (relative error about 1e-16).
func lowerLevel(u float64) float64 {
	return lowerPieces[int(u*8)].eval(u) // pieces of width 1/8
}

// upperLnQ returns ln Q(z) for z ≥ 0, Q(z) = ½·erfc(z/√2) the upper tail of
// the standard normal, with full relative accuracy:
//
//   - 0 ≤ z < 30: −z²/2 − ln √(2π) + ln(Q(z)/pdf(z)), the last term from a
//     piecewise polynomial (no Exp, Erfc or Log call);
//   - z ≥ 30: the asymptotic expansion (docs/algorithms.md, “Computing φ
//     stably”) ln Q(z) = −z²/2 − ln(z√(2π)) + ln(1 − 1/z² + 3/z⁴ − 15/z⁶ + …),
//     taken to the term 2027025/z¹⁶; the series alternates, so the error is
//     below the first omitted term, 34459425/z¹⁸ < 1e-19 at z = 30.
func upperLnQ(z float64) float64 {
	if z < seriesFrom {
		return -0.5*z*z - lnSqrt2Pi + millsLn(z)
	}
	return -0.5*z*z - math.Log(z) - lnSqrt2Pi + math.Log1p(tailSeries(z))
}

// tailSeries returns s with Q(z) = pdf(z)/z · (1 + s), from the asymptotic
// expansion s = −1/z² + 3/z⁴ − 15/z⁶ + … (z ≥ 30).
func tailSeries(z float64) float64 {
	r := 1 / (z * z)
	return r * (-1 + r*(3+r*(-15+r*(105+r*(-945+r*(10395+r*(-135135+r*2027025)))))))
}

// LevelOfZ returns the normal-model suspicion level for a standardized
// elapsed time z = (t − T_last − μ)/σ:
//
//	φ(z) = −log10 Q(z),  Q(z) = ½·erfc(z/√2)
//
// the definition of φ by Hayashibara et al. (SRDS 2004) with a normal P_later
// (docs/algorithms.md, “φ accrual: normal model”). It is computed stably
// (docs/algorithms.md, “Computing φ stably”), never through 1 − F:
//
//   - z ≥ 0: (z²/2 + ln √(2π) − ln(Q/pdf))/ln 10, the log of Mills' ratio
//     from piecewise polynomials up to z = 30 and from the asymptotic series
//     beyond;
//   - −8.5 < z < 0: −ln(1 − Q(−z))/ln 10 from piecewise polynomials;
//   - z ≤ −8.5: Q(−z)/ln 10, which underflows to 0 below z ≈ −38.5.
//
// It keeps about full double precision: tests check 1e-12 relative against
// 50-digit references from z = −20 to 100 and 1e-14 against math.Erfc-based
// values for 0 ≤ z ≤ 37 (for z < 0 the level is exp(−z²/2)-small and
// inherits a relative sensitivity z²·2⁻⁵³ to the last bit of z). It is
// finite for every z below 1e154, where z² overflows, which covers every z
// a detector can produce (φ(38) = 315.54, where the naive
// −log10(1 − Φ_N(z)) is +Inf from z ≈ 8.3), never negative, non-decreasing
// in z, and costs one degree-15 polynomial and no Exp, Erfc or Log call for
// −8.5 < z < 30. LevelOfZ(+Inf) is +Inf; LevelOfZ(NaN) is NaN.
func LevelOfZ(z float64) float64 {
	switch {
	case z >= 0:
		return -upperLnQ(z) / math.Ln10
	case z > -lowerTo:
		return lowerLevel(-z) / math.Ln10
	case z <= -lowerTo:
		// −ln(1 − q) = q·(1 + q/2 + …) with q = Q(−z) < 1e-17, and
		// q = exp(−z²/2)·exp(−ln √(2π) + ln(Q/pdf)). z² is split exactly
		// into hi + lo so that exp(−hi/2) carries no rounding of z²/2.
		u := -z
		if u >= seriesFrom {
			return math.Exp(upperLnQ(u)) / math.Ln10 // below 1e-197
		}
		hi := u * u
		lo := math.FMA(u, u, -hi)
		return math.Exp(-0.5*hi) * math.Exp(-0.5*lo-lnSqrt2Pi+millsLn(u)) / math.Ln10
	}
	return math.NaN()
}

// dLevelDz returns dφ/dz = pdf(z)/(Q(z)·ln 10) for z ≥ 0, the inverse of
// Mills' ratio over ln 10, taken from the same pieces as the level so that
// nothing cancels even for huge z.
func dLevelDz(z float64) float64 {
	if z < seriesFrom {
		return math.Exp(-millsLn(z)) / math.Ln10
	}
	return z / (1 + tailSeries(z)) / math.Ln10
}

// ZOfLevel returns z(Φ) = Q⁻¹(10^−Φ), the standardized elapsed time at which
// the normal-model level reaches Φ, so that the crossing time is t*(Φ) = μ +
// σ·z(Φ) (docs/algorithms.md, “φ accrual: normal model”). Examples: z(1) =
// 1.281552, z(8) = 5.612001, z(16) = 8.222082, z(300) = 37.047096.
//
// It does not use math.Erfcinv, which loses accuracy beyond Φ ≈ 15
// (docs/algorithms.md, “Computing φ stably”). Instead it runs Newton's method
// on the stable level LevelOfZ from z0 = √max(0, 2Φ·ln 10 − ln 2π)
// (docs/algorithms.md, “Computing φ stably”), refined once by the asymptotic
// series; the level is convex in z, so the iteration converges monotonically,
// to within a few ulps of the root in 2 to 4 steps for every Φ ≥ log10 2. For 0
// < Φ < log10 2 (z < 0) it uses the symmetry z(Φ) = −z(−log10(1 − 10^−Φ)).
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

// hugeLevel is the level from which z(Φ) = √(2Φ·ln 10) to double precision
// (the neglected −ln(2π) − 2·ln z is below 1e-16 relative) and the Newton
// start below would overflow.
const hugeLevel = 1e300

// zOfUpperLevel solves LevelOfZ(z) = level for level ≥ log10 2 (z ≥ 0).
func zOfUpperLevel(level float64) float64 {
	if level >= hugeLevel {
		return math.Sqrt(2*math.Ln10) * math.Sqrt(level)
	}
	z := math.Sqrt(max(0, 2*level*math.Ln10-2*lnSqrt2Pi))
	if z > 1 {
		// One fixed-point step on z² = 2Φ·ln 10 − ln 2π − 2·ln z +
		// 2·ln(1 − 1/z²), the first terms of the asymptotic series.
		z = math.Sqrt(max(0, 2*level*math.Ln10-2*lnSqrt2Pi-2*math.Log(z)+2*math.Log1p(-1/(z*z))))
	}
	for range 50 {
		step := (-upperLnQ(z)/math.Ln10 - level) / dLevelDz(z)
		if !(math.Abs(step) < math.Inf(1)) {
			break // cannot happen for finite levels; never loop on NaN
		}
		z = max(z-step, 0)
		// Convergence is quadratic with |φ''/2φ'| < 1: after a step below
		// 1e-9 the error is below 1e-17 relative.
		if math.Abs(step) <= 1e-9*max(1, z) {
			break
		}
	}
	return z
}
