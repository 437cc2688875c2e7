package selection

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Rank gives, for every rank of slices of every length from 1 to 80, the
// element slices.Sort puts there (equal values, −0 and +0 among them, in
// either order) and leaves the slice partitioned around it; on random values, values of a
// few kinds repeated (both zeros, ±huge), sorted runs, reversed runs and
// int64 values at both ends of their range.
func TestRankIsSortedRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	floats := map[string]func(n int) []float64{
		"random": func(n int) []float64 {
			a := make([]float64, n)
			for i := range a {
				a[i] = 1e7 + float64(rng.IntN(2_000_000))
			}
			return a
		},
		"repeats": func(n int) []float64 {
			vals := []float64{math.Copysign(0, -1), 0, -5, 7, 7e18, -7e18, math.Inf(1), math.Inf(-1)}
			a := make([]float64, n)
			for i := range a {
				a[i] = vals[rng.IntN(len(vals))]
			}
			return a
		},
		"sorted": func(n int) []float64 {
			a := make([]float64, n)
			for i := range a {
				a[i] = float64(i / 3)
			}
			return a
		},
		"reversed": func(n int) []float64 {
			a := make([]float64, n)
			for i := range a {
				a[i] = float64(n - i)
			}
			return a
		},
	}
	for name, gen := range floats {
		for n := 1; n <= 80; n++ {
			for range 10 {
				a := gen(n)
				want := slices.Clone(a)
				slices.Sort(want)
				for k := range n {
					b := slices.Clone(a)
					got := Rank(b, k)
					// Equal values sort in any order: compare values, then
					// the partition around k.
					if got != want[k] {
						t.Fatalf("%s, n %d, rank %d: %v, sorted %v", name, n, k, got, want[k])
					}
					for i, v := range b {
						if i < k && v > got || i > k && v < got {
							t.Fatalf("%s, n %d, rank %d: index %d holds %v", name, n, k, i, v)
						}
					}
				}
			}
		}
	}
	for n := 1; n <= 80; n++ {
		a := make([]int64, n)
		for i := range a {
			switch rng.IntN(4) {
			case 0:
				a[i] = math.MinInt64 + rng.Int64N(3)
			case 1:
				a[i] = math.MaxInt64 - rng.Int64N(3)
			default:
				a[i] = rng.Int64N(20) - 10
			}
		}
		want := slices.Clone(a)
		slices.Sort(want)
		for k := range n {
			if got := Rank(slices.Clone(a), k); got != want[k] {
				t.Fatalf("int64, n %d, rank %d: %d, sorted %d", n, k, got, want[k])
			}
		}
	}
}
