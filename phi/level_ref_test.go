package phi

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// erfcLevel is the level computed directly with math.Erfc and Log/Log1p, the
// reference LevelOfZ is checked against where Erfc is accurate (|z| ≤ 37).
func erfcLevel(z float64) float64 {
	if z < 0 {
		return -math.Log1p(-0.5*math.Erfc(-z/math.Sqrt2)) / math.Ln10
	}
	return -math.Log(0.5*math.Erfc(z/math.Sqrt2)) / math.Ln10
}

func TestLevelOfZAgainstErfc(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	check := func(z float64) {
		want := erfcLevel(z)
		got := LevelOfZ(z)
		if want < 1e-300 { // Erfc is subnormal or zero there
			assert.InDelta(t, want, got, 1e-300, "z %v", z)
			return
		}
		// For z < 0 the level is about exp(−z²/2): one ulp of z moves it by
		// z²·2⁻⁵³ relative, and both computations have errors of that order.
		tol := 1e-14 + 5e-16*z*z
		if z > 0 {
			tol = 1e-14
		}
		assert.InEpsilon(t, want, got, tol, "z %v", z)
	}
	for range 200000 {
		check(-38 + r.Float64()*75)
	}
	// Both sides of every expansion boundary.
	for b := -8.5; b <= 30; b += 0.125 {
		for _, d := range []float64{-1e-9, -1e-15, 0, 1e-15, 1e-9} {
			check(b + d)
		}
	}
}

// The level is non-decreasing across every piece boundary, for steps of
// z down to 1e-12 (an elapsed-time step of 1 ns with σ up to 1000 s).
func TestLevelOfZMonotoneAcrossPieces(t *testing.T) {
	for b := -8.5; b <= 30; b += 0.125 {
		prev := LevelOfZ(b - 1e-10)
		for _, d := range []float64{-1e-11, -1e-12, 0, 1e-12, 1e-11, 1e-10} {
			l := LevelOfZ(b + d)
			assert.GreaterOrEqual(t, l, prev, "z %v%+g", b, d)
			prev = l
		}
	}
}

func TestUpperLnQSeriesJunction(t *testing.T) {
	// The Chebyshev expansion and the series agree at z = 30.
	below := -0.5*30*30 - lnSqrt2Pi + millsLnPieces[len(millsLnPieces)-1].eval(30)
	assert.InEpsilon(t, upperLnQ(30), below, 1e-15)
}

var refSink float64

// The level at z = −2 and z = 3 against the direct math.Erfc evaluation,
// for ratios measured in one run.
func BenchmarkLevelOfZNeg2(b *testing.B) {
	for b.Loop() {
		refSink += LevelOfZ(-2)
	}
}

func BenchmarkLevelOfZPos3(b *testing.B) {
	for b.Loop() {
		refSink += LevelOfZ(3)
	}
}

func BenchmarkErfcLevelNeg2(b *testing.B) {
	for b.Loop() {
		refSink += erfcLevel(-2)
	}
}

func BenchmarkErfcLevelPos3(b *testing.B) {
	for b.Loop() {
		refSink += erfcLevel(3)
	}
}
