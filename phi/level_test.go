package phi_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference values below were computed with mpmath at 50 digits; the
// printed values of docs/algorithms.md are their 6-decimal roundings.

func TestZOfLevelSpecValues(t *testing.T) {
	// docs/algorithms.md, “φ accrual: normal model”: z(0.5) ... z(16); 100 and
	// 300 beyond the table (mpmath).
	cases := []struct{ level, printed, exact float64 }{
		{0.5, 0.478274, 0.4782735323761626706},
		{1, 1.281552, 1.2815515655446004670},
		{2, 2.326348, 2.3263478740408411009},
		{3, 3.090232, 3.0902323061678135415},
		{8, 5.612001, 5.6120012441747887315},
		{12, 7.034484, 7.0344838253011319298},
		{16, 8.222082, 8.2220822161304356127},
		{100, 21.273454, 21.273453560965324295},
		{300, 37.047096, 37.047096299361199237},
	}
	for _, c := range cases {
		z := phi.ZOfLevel(c.level)
		displayEq(t, c.printed, 6, z, "z(%v)", c.level)
		relEq(t, c.exact, z, "z(%v)", c.level)
	}
}

func TestLevelOfZStable(t *testing.T) {
	// docs/algorithms.md, “Computing φ stably”: stable values where the naive
	// formula is wrong or infinite.
	cases := []struct {
		z, printed float64
		decimals   int
		exact      float64
	}{
		{7, 11.892854, 6, 11.892853637475489837},
		{8, 15.206143, 6, 15.206142551017154558},
		{30, 197.309209, 6, 197.30920926166094939},
		{37, 299.242181, 6, 299.24218117860992167},
		{38, 315.54, 2, 315.53978970396250789},
		{100, 2173.871543, 6, 2173.8715428690343765},
		{-1, 0.075026, 6, 0.075026012957818023238},
		{-5, 0, 6, 1.244912137388291749e-7},
		{-10, 0, 6, 3.309260121306722299e-24},
	}
	for _, c := range cases {
		l := phi.LevelOfZ(c.z)
		displayEq(t, c.printed, c.decimals, l, "φ(z=%v)", c.z)
		relEq(t, c.exact, l, "φ(z=%v)", c.z)
	}
	assert.Equal(t, 0.0, phi.LevelOfZ(-40), "Q rounds to 1: level exactly 0, not -0")
	assert.False(t, math.Signbit(phi.LevelOfZ(-40)))
	assert.Equal(t, math.Inf(1), phi.LevelOfZ(math.Inf(1)))
	assert.Equal(t, 0.0, phi.LevelOfZ(math.Inf(-1)))
	assert.True(t, math.IsNaN(phi.LevelOfZ(math.NaN())))
}

// naiveLevel is −log10(1 − F(z)) with F the normal CDF, the formula of
// the φ paper that docs/algorithms.md, “Computing φ stably” warns against.
func naiveLevel(z float64) float64 {
	f := 0.5 * math.Erfc(-z/math.Sqrt2)
	return -math.Log10(1 - f)
}

func TestLevelOfZAcrossExpansions(t *testing.T) {
	// One point inside each expansion piece and the series (mpmath at the
	// exact double values, 1e-12 relative).
	cases := []struct{ z, exact float64 }{
		{0.3, 0.4178359449542994952},
		{1.5, 1.1751767216148164217},
		{3.0, 2.8696990359293690772},
		{12.0, 32.750439161191860631},
		{20.0, 88.56009534307559192},
		{29.99, 197.17879816294029848},
		{-0.3, 0.20907377671003018888},
		{-3.0, 0.00058664931379006669102},
		{-8.4, 9.6951604702055474349e-18},
		{-8.6, 1.7310131013075610608e-18},
		{-20.0, 1.1958837599463927238e-89},
	}
	for _, c := range cases {
		assert.InEpsilon(t, c.exact, phi.LevelOfZ(c.z), 1e-12, "z %v", c.z)
	}
}

func TestNaiveFormulaIsWrongWhereStableIsNot(t *testing.T) {
	// docs/algorithms.md, “Computing φ stably”: naive 11.892836 at z = 7 and
	// 15.176439 at z = 8; +Inf from z ≈ 8.3.
	displayEq(t, 11.892836, 6, naiveLevel(7))
	displayEq(t, 15.176439, 6, naiveLevel(8))
	assert.True(t, math.IsInf(naiveLevel(8.5), 1))
	// Erfc alone is subnormal at z = 38 (docs/algorithms.md, “Computing φ
	// stably”: 307.95 instead of 315.54).
	displayEq(t, 307.95, 2, -math.Log10(0.5*math.Erfc(38/math.Sqrt2)))
	displayEq(t, 315.54, 2, phi.LevelOfZ(38))
	// Go's Erfcinv gives +Inf where ZOfLevel stays exact (docs/algorithms.md,
	// “Computing φ stably”).
	assert.True(t, math.IsInf(math.Sqrt2*math.Erfcinv(2*math.Pow(10, -17)), 1))
	relEq(t, 8.4937932241095981, phi.ZOfLevel(17)) // mpmath
}

func TestZOfLevelEdges(t *testing.T) {
	assert.Equal(t, math.Inf(-1), phi.ZOfLevel(0))
	assert.Equal(t, math.Inf(-1), phi.ZOfLevel(-1))
	assert.Equal(t, math.Inf(1), phi.ZOfLevel(math.Inf(1)))
	assert.True(t, math.IsNaN(phi.ZOfLevel(math.NaN())))
	assert.InDelta(t, 0, phi.ZOfLevel(math.Log10(2)), 1e-15, "Q(0) = ½")
	// Below log10 2 the root is negative: mpmath z(0.01), z(0.1).
	relEq(t, -1.9997658101835845182, phi.ZOfLevel(0.01))
	relEq(t, -0.82153160288309217241, phi.ZOfLevel(0.1))
}

func TestLevelZRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		level := 0.5 + r.Float64()*299.5
		z := phi.ZOfLevel(level)
		assert.InEpsilon(t, level, phi.LevelOfZ(z), 1e-13, "level %v", level)
	}
	for range 2000 {
		z := -5 + r.Float64()*45
		l := phi.LevelOfZ(z)
		assert.InDelta(t, z, phi.ZOfLevel(l), 1e-12*math.Max(1, math.Abs(z)), "z %v", z)
	}
}

func TestLevelOfZMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// Around the switch to the asymptotic series at z = 30 and at random.
	prev := phi.LevelOfZ(29.9)
	for z := 29.9; z < 30.1; z += 1e-4 {
		l := phi.LevelOfZ(z)
		assert.GreaterOrEqual(t, l, prev, "z %v", z)
		prev = l
	}
	for range 5000 {
		a := -50 + r.Float64()*100
		b := a + r.Float64()*0.5
		la, lb := phi.LevelOfZ(a), phi.LevelOfZ(b)
		assert.LessOrEqual(t, la, lb, "z %v < %v", a, b)
		assert.GreaterOrEqual(t, la, 0.0)
		assert.False(t, math.IsNaN(la))
	}
}

// Extreme thresholds: no panic, no NaN, and the inverses stay inverses.
func TestInversesAtExtremes(t *testing.T) {
	for _, level := range []float64{5e-324, 1e-300, 1e-10, 1e10, 1e100, 1e299, 1e300, 1e308, math.MaxFloat64} {
		z := phi.ZOfLevel(level)
		require.False(t, math.IsNaN(z) || math.IsInf(z, 0), "z(%g) = %v", level, z)
		y := phi.AkkaYOfLevel(level)
		require.False(t, math.IsNaN(y) || math.IsInf(y, 0), "y(%g) = %v", level, y)
		if level >= 1e-300 && level <= 1e299 {
			assert.InEpsilon(t, level, phi.LevelOfZ(z), 1e-12, "level %g", level)
			assert.InEpsilon(t, level, phi.AkkaLevelOfY(y), 1e-12, "level %g", level)
		}
	}
	relEq(t, math.Sqrt(2*math.Ln10*1e300), phi.ZOfLevel(1e300))
	relEq(t, math.Cbrt(1e300*math.Ln10/0.070566), phi.AkkaYOfLevel(1e300))
}
