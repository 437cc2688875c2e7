package phi

import "math"

// Coefficients of the logistic approximation of the standard normal CDF used
// by Akka, Φ_N(y) ≈ 1/(1 + exp(−y·(1.5976 + 0.070566·y²))) (Bowling,
// Khasawneh, Kaewkuekool and Cho, "A logistic approximation to the
// cumulative normal distribution", J. Industrial Engineering and
// Management 2(1), 2009).
const (
	logisticA = 1.5976
	logisticB = 0.070566
)

// softplus returns ln(1 + eᵃ) without overflow or loss of small values.
// Beyond |a| = 40 the correction term is below 2^-57 relative and is
// dropped, which also skips the Log1p (and, below −746, the Exp) on the
// common path of a healthy process.
func softplus(a float64) float64 {
	switch {
	case a > 40:
		return a
	case a > 0:
		return a + math.Log1p(math.Exp(-a))
	case a < -746:
		return 0 // exp(a) underflows
	case a < -40:
		return math.Exp(a) // ln(1 + x) = x·(1 − x/2 + …), x < 5e-18
	}
	return math.Log1p(math.Exp(a))
}

// AkkaLevelOfY returns the suspicion level of Akka's PhiAccrualFailureDetector
// for a standardized elapsed time y = (t − T_last − m')/s' (docs/algorithms.md,
// “φ accrual: Akka's variant”):
//
//	e = exp(−y·(1.5976 + 0.070566·y²)),  φ = −log10(e/(1 + e))
//
// It is evaluated as φ = ln(1 + 1/e)/ln 10 through a softplus, which is
// algebraically the same as both of Akka's branches but finite for every y
// below 5e102, where y³ overflows (Akka's own evaluation gives +Inf once e
// underflows, near y = 21.4) and exact for tiny levels. It is increasing in y,
// never negative, and departs from the exact −log10 Q(y) in the tail (16.440902
// instead of 12.525203 at y = 98/13.608821 ≈ 7.2, docs/algorithms.md, “φ
// accrual: normal model”). AkkaLevelOfY(NaN) is NaN.
func AkkaLevelOfY(y float64) float64 {
	return softplus(y*(logisticA+logisticB*y*y)) / math.Ln10
}

// AkkaYOfLevel inverts AkkaLevelOfY: with p = 10^−Φ it solves
//
//	0.070566·y³ + 1.5976·y + ln(p/(1 − p)) = 0,
//
// whose only real root it takes from Cardano's formula in a cancellation-free
// form, then polishes with one Newton step (docs/algorithms.md, “φ accrual:
// Akka's variant”). For Φ = 8, y = 5.225987. AkkaYOfLevel is −Inf for Φ ≤ 0,
// +Inf for +Inf, NaN for NaN.
func AkkaYOfLevel(level float64) float64 {
	switch {
	case math.IsNaN(level):
		return math.NaN()
	case level <= 0:
		return math.Inf(-1)
	case math.IsInf(level, 1):
		return math.Inf(1)
	case level >= hugeLevel:
		// y³ ≫ y: y = ∛(Φ·ln 10/0.070566) to double precision, computed
		// without overflowing Φ·ln 10.
		return math.Cbrt(level) * math.Cbrt(math.Ln10/logisticB)
	}
	// c = −ln(p/(1−p)) = ln(10^Φ − 1) = Φ·ln 10 + ln(1 − 10^−Φ), the last
	// term through Expm1 so that tiny levels keep their digits.
	c := level*math.Ln10 + math.Log(-math.Expm1(-level*math.Ln10))
	// y³ + P·y − C = 0 with P = A/B, C = c/B. With D = √(C²/4 + P³/27) and
	// u = ∛(|C|/2 + D), v = (P/3)/u, the root is ±(u − v), and
	// u³ − v³ = |C| gives u − v = |C|/(u² + uv + v²) without cancellation.
	const p = logisticA / logisticB
	cc := math.Abs(c) / logisticB
	d := cc / 2 // P³/27 is negligible and cc² would overflow
	if cc < 1e100 {
		d = math.Sqrt(cc*cc/4 + p*p*p/27)
	}
	u := math.Cbrt(cc/2 + d)
	v := p / 3 / u
	y := math.Copysign(cc/(u*u+p/3+v*v), c)
	// One Newton step on f(y) = B·y³ + A·y − c.
	y -= (y*(logisticA+logisticB*y*y) - c) / (logisticA + 3*logisticB*y*y)
	return y
}
