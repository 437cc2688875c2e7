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
