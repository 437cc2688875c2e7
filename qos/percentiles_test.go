package qos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The grid-and-sample percentiles equal a full selection at every point,
// for scales that vary, repeat or are 0, with and without a TD floor, and
// for negative parameter values; and so do the scans per point that
// replace the grid for fewer than gridPoints points.
func TestPercentilesGridExact(t *testing.T) {
	const n, m = 40_000, 1024
	rng := rand.New(rand.NewPCG(4, 2026))
	ps := []float64{-3, -0.5, 0, 0.25, 1, 2.5, 7, 16, 40}
	for _, tc := range []struct {
		name  string
		floor bool
		scale func() float64
		c     func() float64
	}{
		{"varying", false, func() float64 { return 5e6 + 2e6*rng.NormFloat64() }, func() float64 { return 1e8 + 1e7*rng.NormFloat64() }},
		{"floored", true, func() float64 { return math.Abs(3e6 * rng.NormFloat64()) }, func() float64 { return 2e7 * rng.NormFloat64() }},
		{"few-values", false, func() float64 { return float64(rng.IntN(3)) * 1e6 }, func() float64 { return float64(rng.IntN(5)) * 1e7 }},
		{"heavy-tail", true, func() float64 { return math.Exp(3 * rng.NormFloat64()) }, func() float64 { return 1e6 / (rng.Float64() + 1e-9) }},
	} {
		lc := &linearCurve{ps: ps, td0: make([]float64, n), scales: make([]float64, n)}
		if tc.floor {
			lc.floor = make([]float64, n)
		}
		for k := range n {
			lc.td0[k], lc.scales[k] = tc.c(), tc.scale()
			if tc.floor {
				lc.floor[k] = 1e7 * rng.Float64()
			}
		}
		got := lc.percentiles(m)
		want := lc.percentiles(n) // n < 8·n: full selection at every point
		assert.Equal(t, want, got, tc.name)
		// Below gridPoints points, a scan per point instead of the grid.
		for j := range gridPoints - 1 {
			lc.ps = ps[j : 2*j+1]
			assert.Equal(t, want[j:2*j+1], lc.percentiles(m), "%s, %d points", tc.name, j+1)
		}
		// The scan's windows hold the ranks (no selection among all).
		p := ps[4]
		sample := make([]float64, m)
		for j, k := range sampleIndices(n, m) {
			sample[j] = tdValue(lc.td0[k], lc.scales[k], lc.floorAt(k), p)
		}
		lo, hi := sampleWindows(sample, [2]int{rank(0.5, n), rank(0.99, n)}, n)
		q, ok := lc.scanQuantiles(p, [2]int{rank(0.5, n), rank(0.99, n)}, lo, hi)
		require.True(t, ok, tc.name)
		assert.Equal(t, want[4], q, tc.name)
	}
}

// rankValues equals a full selection, for spread, tied and heavy-tailed
// values, and leaves its input in order.
func TestRankValuesExact(t *testing.T) {
	const n, m = 50_000, 1024
	rng := rand.New(rand.NewPCG(7, 2026))
	for name, gen := range map[string]func() float64{
		"normal":     func() float64 { return 1e8 + 1e7*rng.NormFloat64() },
		"few-values": func() float64 { return float64(rng.IntN(4)) * 1e6 },
		"heavy-tail": func() float64 { return 1e6 / (rng.Float64() + 1e-9) },
	} {
		vals := make([]float64, n)
		for k := range vals {
			vals[k] = gen()
		}
		orig := slices.Clone(vals)
		ranks := [2]int{rank(0.50, n), rank(0.99, n)}
		got, gotMax := rankValues(vals, ranks, m)
		assert.Equal(t, orig, vals, name)
		sorted := slices.Sorted(slices.Values(vals))
		assert.Equal(t, [2]float64{sorted[ranks[0]], sorted[ranks[1]]}, got, name)
		assert.Equal(t, sorted[n-1], gotMax, name)
	}
}

// tdStats' p50 and p99 are the nearest-rank values of a sort, for short
// and long slices with ties (p99 is selected above the median).
func TestTDStatsRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2026))
	for _, n := range []int{1, 2, 3, 17, 100, 101, 1000, 12345} {
		td := make([]int64, n)
		for k := range td {
			td[k] = rng.Int64N(int64(n)/3+1) * 1000
		}
		sorted := slices.Sorted(slices.Values(td))
		s := tdStats(td)
		assert.Equal(t, sorted[rank(0.50, n)], int64(s.P50), "n=%d", n)
		assert.Equal(t, sorted[rank(0.99, n)], int64(s.P99), "n=%d", n)
		assert.Equal(t, sorted[n-1], int64(s.Max), "n=%d", n)
	}
}

// rankValuesInt equals a sort and leaves td in order, declines when many
// values equal a window's side (few distinct values: windows would keep
// nearly all of them) and when the value range overflows; tdStats on a
// long slice (the window path or a selection) equals a sort too.
func TestRankValuesIntExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 2026))
	const n, m = 20_000, 256
	for name, c := range map[string]struct {
		gen     func() int64
		windows bool
	}{
		"spread":     {func() int64 { return rng.Int64N(1e9) - 5e8 }, true},
		"extremes":   {func() int64 { return []int64{math.MinInt64 / 4, 0, math.MaxInt64 / 4}[rng.IntN(3)] + rng.Int64N(1e9) }, true},
		"few-values": {func() int64 { return rng.Int64N(3) }, false},
		"all-equal":  {func() int64 { return 7 }, false},
		"two-values": {func() int64 { return 5 + int64(rng.IntN(200)/199) }, false}, // 6 at 1 in 200: p99 is 5
		"p99-at-hi":  {func() int64 { return 5 + int64(rng.IntN(50)/49) }, false},   // 6 at 1 in 50: p99 is 6
	} {
		td := make([]int64, n)
		for k := range td {
			td[k] = c.gen()
		}
		orig := slices.Clone(td)
		sorted := slices.Sorted(slices.Values(td))
		ranks := [2]int{rank(0.50, n), rank(0.99, n)}
		r, ok := rankValuesInt(td, sorted[0], sorted[n-1], ranks, m)
		assert.Equal(t, orig, td, name)
		assert.Equal(t, c.windows, ok, name)
		if ok {
			assert.Equal(t, [2]int64{sorted[ranks[0]], sorted[ranks[1]]}, r, name)
		}
		long := slices.Repeat(td, 10) // past tdSampleSize's threshold
		sortedLong := slices.Sorted(slices.Values(long))
		s := tdStats(long)
		assert.Equal(t, sortedLong[rank(0.50, len(long))], int64(s.P50), name)
		assert.Equal(t, sortedLong[rank(0.99, len(long))], int64(s.P99), name)
	}
	td := []int64{math.MinInt64, math.MaxInt64}
	_, ok := rankValuesInt(slices.Repeat(td, 10_000), math.MinInt64, math.MaxInt64, [2]int{0, 1}, m)
	assert.False(t, ok, "overflowing range")

	long := make([]int64, 200_000)
	for k := range long {
		long[k] = int64(1e8 + 1e7*rng.NormFloat64())
	}
	sorted := slices.Sorted(slices.Values(long))
	s := tdStats(long)
	assert.Equal(t, sorted[rank(0.50, len(long))], int64(s.P50))
	assert.Equal(t, sorted[rank(0.99, len(long))], int64(s.P99))
	assert.Equal(t, sorted[len(long)-1], int64(s.Max))
}

// Past tdSampleSize's threshold tdStats takes its ranks from sample
// windows; they equal a sort at the threshold and beyond, for all-equal,
// two-valued, tied, negative and heavy-tailed values, and for one value.
func TestTDStatsWindowsExact(t *testing.T) {
	assert.Zero(t, tdSampleSize(1<<14-1), "below the threshold: select")
	assert.Equal(t, 512, tdSampleSize(1<<14))
	assert.Equal(t, 1<<14, tdSampleSize(1<<24), "capped")
	rng := rand.New(rand.NewPCG(24, 2026))
	gens := map[string]func() int64{
		"all-equal":  func() int64 { return 7 },
		"two-values": func() int64 { return []int64{-5, 1e9}[rng.IntN(2)] },
		"ties":       func() int64 { return 2e7 + rng.Int64N(300)*1000 },
		"negative":   func() int64 { return -rng.Int64N(1e6) },
		"heavy-tail": func() int64 { return int64(1e6 / (rng.Float64() + 1e-9)) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 1<<14 - 1, 1 << 14, 50_001} {
			td := make([]int64, n)
			for k := range td {
				td[k] = gen()
			}
			sorted := slices.Sorted(slices.Values(td))
			s := tdStats(td)
			assert.Equal(t, sorted[rank(0.50, n)], int64(s.P50), "%s n=%d", name, n)
			assert.Equal(t, sorted[rank(0.99, n)], int64(s.P99), "%s n=%d", name, n)
			assert.Equal(t, sorted[n-1], int64(s.Max), "%s n=%d", name, n)
		}
	}
}

// rankValues and the linear percentiles with no sample (m = 0) select
// among all values and give what a sort gives.
func TestRanksWithoutSample(t *testing.T) {
	vals := []float64{3, 1, 2, 2, 5}
	r, mx := rankValues(vals, [2]int{rank(0.50, 5), rank(0.99, 5)}, 0)
	assert.Equal(t, [2]float64{2, 5}, r)
	assert.Equal(t, 5.0, mx)
	assert.Equal(t, []float64{3, 1, 2, 2, 5}, vals, "input left in order")
	// TD_k(p) = td0_k + scale_k·p at p = 2: {11, 4, 10, 2}.
	lc := &linearCurve{ps: []float64{2}, td0: []float64{1, 2, 8, 0}, scales: []float64{5, 1, 1, 1}}
	assert.Equal(t, []tdQuantiles{{p50: 4, p99: 11, max: 11}}, lc.percentiles(0))
}

// The grid shrinks with the stream, about 16 heartbeats a cell, down to
// 4 × 16 cells and up to 64 × 256.
func TestGridDims(t *testing.T) {
	for _, c := range []struct{ n, s, c int }{{0, 4, 16}, {1 << 14, 16, 64}, {100_000, 32, 128}, {1 << 18, 64, 256}, {1 << 30, 64, 256}} {
		s, cc := gridDims(c.n)
		assert.Equal(t, [2]int{c.s, c.c}, [2]int{s, cc}, "n=%d", c.n)
	}
}

// The grouped φ pass's TD summary draws its rank windows on tdSampleSize's sample by
// default, and stores the values when the stream is short or the sample
// too large for it.
func TestAkkaTDSampleSize(t *testing.T) {
	p := &groupPass{}
	assert.Equal(t, 0, (&tdBatch{p: p, n: 1<<14 - 1}).sampleSize())
	assert.Equal(t, tdSampleSize(100_000), (&tdBatch{p: p, n: 100_000}).sampleSize())
	p.sampleSize = 16
	assert.Equal(t, 16, (&tdBatch{p: p, n: 128}).sampleSize())
	assert.Equal(t, 0, (&tdBatch{p: p, n: 127}).sampleSize())
}

// The spilled linear percentiles start each point's windows from bounds
// of every TD_k(p) (least and greatest td0, scale and floor); they equal
// a full selection in memory, for negative and positive points, with and
// without a floor, and with one scale for all (the shifted ranks).
func TestSpilledLinearPercentilesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 7))
	const n = 5000
	ps := []float64{-2, -0.5, 0, 0.5, 3, 12}
	for _, tc := range []struct {
		name         string
		floor, sameS bool
	}{{"varying", false, false}, {"floored", true, false}, {"same-scale", false, true}} {
		sp, err := newLinearSpill(t.TempDir())
		require.NoError(t, err)
		mem := &linearCurve{ps: ps, td0: make([]float64, n), scales: make([]float64, n)}
		if tc.floor {
			mem.floor = make([]float64, n)
		}
		for k := range n {
			c, s, d := 3e7*rng.NormFloat64(), math.Abs(2e6*rng.NormFloat64()), rng.Int64N(5e6)
			if tc.sameS {
				s = 1e6
			}
			sp.add(c, s, d, 0)
			mem.td0[k], mem.scales[k] = c+float64(d), s
			if tc.floor {
				mem.floor[k] = float64(d)
			}
		}
		lc := &linearCurve{ps: ps}
		require.NoError(t, lc.fromSpill(sp, true, 0, tc.floor, 0), tc.name)
		sp.close()
		if tc.sameS {
			require.True(t, lc.sameS)
			r, mx := rankValues(mem.td0, [2]int{rank(0.50, n), rank(0.99, n)}, 0)
			assert.Equal(t, [3]float64{r[0], r[1], mx}, lc.tdRanks, tc.name)
			continue
		}
		assert.Equal(t, mem.percentiles(0), lc.quant, tc.name)
	}
}
