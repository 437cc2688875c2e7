package qos

import (
	"math"
	"math/rand/v2"
	"slices"
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

// TestWindowTallyNear checks windowTallyNear against windowTally, and
// both against counts taken one value at a time: values on, next to and
// between the windows' sides, windows that overlap, hold one value or
// none (hi < lo), and values and sides near ±2^62.
func TestWindowTallyNear(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const e = 1<<62 - 1
	sides := [][4]int64{{100, 200, 500, 700}, {100, 600, 500, 700}, {300, 300, 300, 300}, {400, 399, 650, 640},
		{-e, 0, 0, e}, {-e, -e, e, e}}
	for _, sd := range sides {
		lo0, hi0, lo1, hi1 := sd[0], sd[1], sd[2], sd[3]
		vs := []int64{lo0, hi0, lo1, hi1, lo0 - 1, hi0 + 1, lo1 - 1, hi1 + 1, 0, -e, e}
		for range 500 {
			vs = append(vs, r.Int64N(1000)-100)
		}
		var want [3]int
		var wantHits []int64
		for _, v := range vs {
			want[0] += b2i(v < lo0)
			want[1] += b2i(v < lo1)
			if (v >= lo0 && v <= hi0) || (v >= lo1 && v <= hi1) || hi0 < lo0 || hi1 < lo1 {
				wantHits = append(wantHits, v)
			}
		}
		want[2] = len(wantHits)
		for _, f := range []func([]int64, int64, int64, uint64, uint64, []int64) (int, int, int){windowTally, windowTallyNear} {
			hits := make([]int64, len(vs))
			b0, b1, k := f(vs, lo0, lo1, uint64(hi0-lo0), uint64(hi1-lo1), hits)
			if [3]int{b0, b1, k} != want || !slices.Equal(hits[:k], wantHits) {
				t.Fatalf("windows %v: below %d, %d, %d hits %v; want %v, hits %v", sd, b0, b1, k, hits[:k], want, wantHits)
			}
		}
	}
}
