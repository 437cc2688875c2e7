package qos

import (
	"math"
	"sort"
	"testing"
)

func TestBucketCountsPointsBelow(t *testing.T) {
	for n := 0; n <= 9; n++ {
		ps := make([]float64, n)
		for i := range ps {
			ps[i] = float64(2 * i)
		}
		l := &linearCollector{ps: ps}
		for x := -1.0; x <= float64(2*n+1); x += 0.5 {
			want := sort.SearchFloat64s(ps, x) // first index with ps[i] ≥ x
			if got := l.bucket(x); got != want {
				t.Fatalf("n=%d x=%g: bucket %d, want %d", n, x, got, want)
			}
		}
		if got := l.bucket(math.Inf(1)); got != n {
			t.Fatalf("+Inf: %d", got)
		}
		if got := l.bucket(math.Inf(-1)); got != 0 {
			t.Fatalf("-Inf: %d", got)
		}
	}
}

// With its lookup table, bucket still counts the points below x exactly,
// for evenly and log-spaced points, clustered points and repeated ones.
func TestBucketTableCountsPointsBelow(t *testing.T) {
	logs := make([]float64, 40)
	for i := range logs {
		logs[i] = 1e6 * math.Pow(2000, float64(i)/39)
	}
	for _, ps := range [][]float64{
		{0, 1}, {1, 2, 3, 4, 5}, logs, {0, 1e-9, 2e-9, 1, 1e9}, {-5, -4.5, 0, 0, 7},
	} {
		l := newLinearCollectorTab(ps, 0)
		if l.tab == nil {
			t.Fatalf("%v: no table", ps)
		}
		lo, hi := ps[0]-1, ps[len(ps)-1]+1
		xs := []float64{math.Inf(-1), math.Inf(1)}
		for _, p := range ps {
			xs = append(xs, p, math.Nextafter(p, lo), math.Nextafter(p, hi))
		}
		for i := range 20000 {
			xs = append(xs, lo+(hi-lo)*float64(i)/19999)
		}
		for _, x := range xs {
			want := sort.SearchFloat64s(ps, x)
			if got := l.bucket(x); got != want {
				t.Fatalf("%v x=%g: bucket %d, want %d", ps, x, got, want)
			}
		}
	}
}
