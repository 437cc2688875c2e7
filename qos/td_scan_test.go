package qos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tdScan of 20,000 values 0, …, 19,999 (shuffled) with an offset of 7 ns:
// mean (19,999/2 + 7 = 10,006.5, rounded away from zero) 10,007 ns,
// nearest-rank p50 the value of rank ⌈0.5·20,000⌉ = 10,000, 9,999 + 7 =
// 10,006 ns, p99 that of rank 19,800, 19,806 ns, max 20,006 ns, last the
// last value plus 7; the cells' sums are those of the values in each.
func TestTDScanHandWorked(t *testing.T) {
	const n = 20_000
	td := make([]uint32, n)
	for k := range td {
		td[k] = uint32(k)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { td[i], td[j] = td[j], td[i] })
	evCell := make([]uint8, n)
	var want [2]float64 // cells 0 and 1: the first and second halves
	for k, v := range td {
		evCell[k] = uint8(k * 2 / n)
		want[evCell[k]] += float64(v) + 7
	}
	cells := newCellSeries(cellGrid{n: 2})
	var sc tdScanScratch
	st, last, ok := tdScan(td, math.MaxUint32, nil, 7, 7, 7, cells, evCell, &sc)
	require.True(t, ok)
	assert.Equal(t, TDStats{Mean: 10_007, P50: 10_006, P99: 19_806, Max: 20_006}, st)
	assert.Equal(t, time.Duration(td[n-1])+7, last)
	assert.Equal(t, want[:], cells.tdSum)
	assert.Equal(t, []float64{n / 2, n / 2}, cells.tdN)
}

// tdScan returns what finishTD returns, the cells' TD sums included, on
// τ − A_k in 4 and 8 bytes, with bases per heartbeat (delays, negative
// ones among them) or one offset, with cells in runs and without: on
// spread values, values of few distinct kinds (ties at the windows'
// sides), one value repeated, and at lengths around tdSampleSize's
// threshold. Where the sums would not be exact it declines (the caller
// then uses finishTD), and it declines nothing else here.
func TestTDScanMatchesFinishTD(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	g := cellGrid{n: 16}
	gens := map[string]func(k int) int64{
		"spread":   func(int) int64 { return rng.Int64N(400e6) },
		"normal":   func(int) int64 { return max(0, int64(rng.NormFloat64()*10e6+100e6)) },
		"few":      func(int) int64 { return rng.Int64N(4) * 1e6 },
		"constant": func(int) int64 { return 5e6 },
		"zeros":    func(k int) int64 { return int64(k%50/49) * 3e6 }, // 98 % zeros
	}
	for name, gen := range gens {
		for _, n := range []int{1<<14 - 1, 1 << 14, 50_000} {
			vals := make([]int64, n)
			delays := make([]int64, n)
			evCell := make([]uint8, n)
			for k := range vals {
				vals[k] = gen(k)
				delays[k] = rng.Int64N(60e6) - 10e6
				evCell[k] = uint8(min(k*g.n/n+rng.IntN(2)*rng.IntN(2), g.n-1))
			}
			narrow := make([]uint32, n)
			for k, v := range vals {
				narrow[k] = uint32(v)
			}
			for _, sync := range []bool{false, true} {
				for _, withCells := range []bool{false, true} {
					var base []int64
					if sync {
						base = delays
					}
					const off = int64(3 * time.Millisecond)
					bMin, bMax := baseRange(base, off)
					var wantCells, cells, cells8 *cellSeries
					var ev []uint8
					if withCells {
						wantCells, cells, cells8, ev = newCellSeries(g), newCellSeries(g), newCellSeries(g), evCell
						cells.tdSum[3], cells8.tdN[2] = 1, 1 // cleared by tdScan
					}
					wantSt, wantLast := finishTD(slices.Clone(vals), base, off, wantCells, ev)
					var sc tdScanScratch
					st, last, ok := tdScan(narrow, math.MaxUint32, base, off, bMin, bMax, cells, ev, &sc)
					st8, last8, ok8 := tdScan(vals, uint64(slices.Max(vals)), base, off, bMin, bMax, cells8, ev, &sc)
					what := []any{name, n, sync, withCells}
					require.Equal(t, n >= 1<<14, ok, what...)
					require.Equal(t, ok, ok8, what...)
					if !ok {
						continue
					}
					assert.Equal(t, wantSt, st, what...)
					assert.Equal(t, wantLast, last, what...)
					assert.Equal(t, wantSt, st8, what...)
					assert.Equal(t, wantLast, last8, what...)
					if withCells {
						assert.Equal(t, wantCells.tdSum, cells.tdSum, what...)
						assert.Equal(t, wantCells.tdN, cells.tdN, what...)
						assert.Equal(t, wantCells.tdSum, cells8.tdSum, what...)
						assert.Equal(t, wantCells.tdN, cells8.tdN, what...)
					}
				}
			}
		}
	}
}

// tdScan declines where its answer could differ from finishTD's: values,
// bases or sums too large (n·max |TD_k| ≥ 2^52, where sumTD adds in
// float64), and fewer values than a sample needs.
func TestTDScanDeclines(t *testing.T) {
	const n = 1 << 15
	vals := make([]int64, n)
	for k := range vals {
		vals[k] = int64(k) << 37 // n·max ≈ 2^67
	}
	var sc tdScanScratch
	_, _, ok := tdScan(vals, uint64(slices.Max(vals)), nil, 0, 0, 0, nil, nil, &sc)
	assert.False(t, ok, "inexact sums")
	small := vals[:1000]
	for k := range small {
		small[k] = int64(k)
	}
	_, _, ok = tdScan(small, 999, nil, 0, 0, 0, nil, nil, &sc)
	assert.False(t, ok, "short")
	_, _, ok = tdScan(vals, 1<<60, nil, 0, 0, 0, nil, nil, &sc)
	assert.False(t, ok, "values")
	_, _, ok = tdScan(vals, 1<<20, nil, 0, -1<<60, 0, nil, nil, &sc)
	assert.False(t, ok, "bases")
}
