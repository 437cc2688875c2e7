package trace

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// medianStep gives, bit for bit, the element slices.Sort puts at rank
// len/2, or +0 when that is negative or −0, on windows of every length
// from 2 to 70 of a few values repeated (both zeros, negative steps and
// huge ones); selection.Rank's own test covers the selection on other
// kinds of values.
func TestMedianStepIsSortedRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	vals := []float64{math.Copysign(0, -1), 0, -5, 7, 7e18, -7e18}
	for n := 2; n <= 70; n++ {
		for range 20 {
			st := make([]float64, n)
			for i := range st {
				st[i] = vals[rng.IntN(len(vals))]
			}
			want := slices.Clone(st)
			slices.Sort(want)
			got, ok := medianStep(st)
			if !ok || math.Float64bits(got) != math.Float64bits(max(want[n/2], 0)) {
				t.Fatalf("%d steps: median %v, sorted rank %d is %v", n, got, n/2, want[n/2])
			}
		}
	}
	if _, ok := medianStep([]float64{3}); ok {
		t.Fatal("one step: ok")
	}
}

// BenchmarkMedianStep times medianStep on the checker's windows at the
// default k (16 steps) of jittered steps.
//
//	go test -run '^$' -bench MedianStep ./trace/
func BenchmarkMedianStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	wins := make([][]float64, 1024)
	for i := range wins {
		wins[i] = make([]float64, 2*DefaultSanityNeighbours)
		for j := range wins[i] {
			wins[i][j] = 1e7 + float64(rng.IntN(2_000_000))
		}
	}
	st := make([]float64, 2*DefaultSanityNeighbours)
	i := 0
	for b.Loop() {
		copy(st, wins[i%len(wins)])
		medianStep(st)
		i++
	}
}
