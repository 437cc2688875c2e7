package trace

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// sortCases are slices long enough for the radix sort, of the shapes a
// stream's samples take and of hostile ones.
func sortCases() map[string][]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 5000
	gen := func(f func(i int) float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	return map[string][]float64{
		"inter-arrival ns": gen(func(int) float64 { return math.Round(1e7 + 2e6*rng.NormFloat64()) }),
		"signed and wide":  gen(func(int) float64 { return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20)) }),
		"duplicates":       gen(func(int) float64 { return float64(rng.IntN(7) - 3) }),
		"one value":        gen(func(int) float64 { return 42 }),
		"infinities": gen(func(i int) float64 {
			return []float64{math.Inf(1), math.Inf(-1), 0, -1, 1, math.MaxFloat64, -math.SmallestNonzeroFloat64}[i%7]
		}),
		"descending": gen(func(i int) float64 { return float64(n - i) }),
		"ascending":  gen(func(i int) float64 { return float64(i) }),
		"NaN":        gen(func(i int) float64 { return []float64{math.NaN(), 3, -2, 1}[i%4] }),
		"short":      {3, math.Inf(-1), 1, -2},
	}
}

func TestSortFloatsAsSlicesSort(t *testing.T) {
	for name, in := range sortCases() {
		t.Run(name, func(t *testing.T) {
			got, want := slices.Clone(in), slices.Clone(in)
			sortFloats(got)
			slices.Sort(want)
			require.Len(t, got, len(want))
			for i := range want {
				// Bit for bit (a NaN is not equal to itself).
				require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "index %d", i)
			}
		})
	}
}

func TestSortFloatsSignedZeros(t *testing.T) {
	in := make([]float64, 2*radixMin)
	for i := range in {
		in[i] = []float64{1, math.Copysign(0, -1), 0, -1}[i%4]
	}
	sortFloats(in)
	require.True(t, slices.IsSorted(in))
	q := len(in) / 4
	require.True(t, math.Signbit(in[q]), "−0 first")
	require.False(t, math.Signbit(in[2*q]))
}

func TestFloatKeyOrder(t *testing.T) {
	vs := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, math.Copysign(0, -1), 0, math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1)}
	for i, v := range vs {
		require.Equal(t, math.Float64bits(v), math.Float64bits(keyFloat(floatKey(v))))
		if i > 0 {
			require.Less(t, floatKey(vs[i-1]), floatKey(v), "%g < %g", vs[i-1], v)
		}
	}
}

// BenchmarkSortFloats compares sortFloats with slices.Sort on a stream's
// inter-arrival times (10^5 of them, 10 ms ± 2 ms in nanoseconds).
func BenchmarkSortFloats(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]float64, 100_000)
	for i := range in {
		in[i] = math.Round(1e7 + 2e6*rng.NormFloat64())
	}
	buf := make([]float64, len(in))
	for _, s := range []struct {
		name string
		sort func([]float64)
	}{{"radix", sortFloats}, {"slices.Sort", slices.Sort[[]float64]}} {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				copy(buf, in)
				s.sort(buf)
			}
		})
	}
}
