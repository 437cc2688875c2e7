package qos

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fdkit/fdkit/phi"
)

// TestAkkaRunIsCeilOfCrossing checks akkaRun's integer ceiling against
// math.Ceil of phi.AkkaCrossing, value by value: crossings below 0, at 0
// and −0, on whole and half nanoseconds, next to them (one ulp apart), and
// up to maxExactCrossing, and its sum and maximum.
func TestAkkaRunIsCeilOfCrossing(t *testing.T) {
	var ms, ss []float64
	var bs []int64
	add := func(m, s float64, b int64) { ms, ss, bs = append(ms, m), append(ss, s), append(bs, b) }
	for _, m := range []float64{-1e300, -3.5, -1, -0.5, math.Copysign(0, -1), 0, 0.5, 1, 2.5, 1e8, 1e8 + 0.25,
		maxExactCrossing - 1, maxExactCrossing - 0.5, math.Nextafter(7, 0), math.Nextafter(7, 8)} {
		add(m, 0, 0)
		add(m, 0, -17)
		add(m, 1, 1e9)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		add(r.Float64()*2e8-1e7, r.Float64()*3e7, r.Int64N(1<<40)-1<<39)
	}
	for _, y := range []float64{-2, -0.5, 0, 0.25, 1, 3.1} {
		tds := make([]int64, len(ms))
		sum, mx := akkaRun(ms, ss, bs, y, tds, math.MinInt64)
		var wantSum int64
		wantMx := int64(math.MinInt64)
		for k := range ms {
			c := phi.AkkaCrossing(ms[k], ss[k], y)
			if !(c < maxExactCrossing) {
				continue // not a form the pass keeps
			}
			want := int64(math.Ceil(c)) + bs[k]
			if tds[k] != want {
				t.Fatalf("y = %v, m = %v, s = %v, base %d: TD %d, want %d", y, ms[k], ss[k], bs[k], tds[k], want)
			}
		}
		for _, v := range tds {
			wantSum += v
			wantMx = max(wantMx, v)
		}
		if sum != wantSum || mx != wantMx {
			t.Fatalf("y = %v: sum %d, max %d, want %d, %d", y, sum, mx, wantSum, wantMx)
		}
	}
}
