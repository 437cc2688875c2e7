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
	st, last, ok := scanOne(td, math.MaxUint32, nil, 7, 7, 7, cells, evCell, &sc)
	require.True(t, ok)
	assert.Equal(t, TDStats{Mean: 10_007, P50: 10_006, P99: 19_806, Max: 20_006}, st)
	assert.Equal(t, time.Duration(td[n-1])+7, last)
	assert.Equal(t, want[:], cells.tdSum)
	assert.Equal(t, []float64{n / 2, n / 2}, cells.tdN)
}

// tdScan returns what finishTD returns, the cells' TD sums included, on
// τ − A_k in 4 and 8 bytes, with bases per heartbeat (delays, negative
// ones among them) or one offset, with cells in runs and without: on
// points of spread values, of values of few distinct kinds (ties at the
// windows' sides), of one value repeated, summarized together, at lengths
// around tdSampleSize's threshold. It declines nothing here but the
// short streams (the caller then uses finishTD).
func TestTDScanMatchesFinishTD(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	g := cellGrid{n: 16}
	gens := []func(k int) int64{
		func(int) int64 { return rng.Int64N(400e6) },
		func(int) int64 { return max(0, int64(rng.NormFloat64()*10e6+100e6)) },
		func(int) int64 { return rng.Int64N(4) * 1e6 },
		func(int) int64 { return 5e6 },
		func(k int) int64 { return int64(k%50/49) * 3e6 }, // 98 % zeros
	}
	for _, n := range []int{1<<14 - 1, 1 << 14, 50_000} {
		vals := make([][]int64, len(gens))
		narrow := make([][]uint32, len(gens))
		for i, gen := range gens {
			vals[i], narrow[i] = make([]int64, n), make([]uint32, n)
			for k := range n {
				vals[i][k] = gen(k)
				narrow[i][k] = uint32(vals[i][k])
			}
		}
		delays := make([]int64, n)
		evCell := make([]uint8, n)
		for k := range n {
			delays[k] = rng.Int64N(60e6) - 10e6
			evCell[k] = uint8(min(k*g.n/n+rng.IntN(2)*rng.IntN(2), g.n-1))
		}
		for _, sync := range []bool{false, true} {
			for _, withCells := range []bool{false, true} {
				var base []int64
				if sync {
					base = delays
				}
				const off = int64(3 * time.Millisecond)
				bMin, bMax := baseRange(base, off)
				var ev []uint8
				if withCells {
					ev = evCell
				}
				pts4 := make([]tdScanPoint[uint32], len(gens))
				pts8 := make([]tdScanPoint[int64], len(gens))
				want := make([]*cellSeries, len(gens))
				for i := range gens {
					pts4[i] = tdScanPoint[uint32]{td: narrow[i], vMax: math.MaxUint32}
					pts8[i] = tdScanPoint[int64]{td: vals[i], vMax: uint64(slices.Max(vals[i]))}
					if withCells {
						want[i] = newCellSeries(g)
						pts4[i].cells, pts8[i].cells = newCellSeries(g), newCellSeries(g)
						pts4[i].cells.tdSum[3], pts8[i].cells.tdN[2] = 1, 1 // cleared by tdScan
					}
				}
				// A pass's stratified sample instead of tdScan's own: its
				// indices run past n (ignored), its values there are junk.
				var strata []int
				for j := 0; stratSample(j) < n+3*tdStratum; j++ {
					strata = append(strata, stratSample(j))
				}
				ptsS := make([]tdScanPoint[uint32], len(gens))
				for i := range gens {
					ptsS[i] = tdScanPoint[uint32]{td: narrow[i], vMax: math.MaxUint32}
					for _, k := range strata {
						v := int64(-1e15)
						if k < n {
							v = vals[i][k]
						}
						ptsS[i].samp = append(ptsS[i].samp, v)
					}
					if withCells {
						ptsS[i].cells = newCellSeries(g)
					}
				}
				var sc tdScanScratch
				tdScan(pts4, n, base, off, bMin, bMax, ev, nil, &sc)
				tdScan(pts8, n, base, off, bMin, bMax, ev, nil, &sc)
				tdScan(ptsS, n, base, off, bMin, bMax, ev, strata, &sc)
				for i := range gens {
					wantSt, wantLast := finishTD(slices.Clone(vals[i]), base, off, want[i], ev)
					what := []any{"generator %d, n %d, sync %v, cells %v", i, n, sync, withCells}
					require.Equal(t, n >= 1<<14, pts4[i].ok, what...)
					require.Equal(t, n >= 1<<14, pts8[i].ok, what...)
					require.Equal(t, n >= 1<<14, ptsS[i].ok, what...)
					if n < 1<<14 {
						continue
					}
					for _, got := range []struct {
						st    TDStats
						last  time.Duration
						cells *cellSeries
					}{{pts4[i].st, pts4[i].last, pts4[i].cells}, {pts8[i].st, pts8[i].last, pts8[i].cells}, {ptsS[i].st, ptsS[i].last, ptsS[i].cells}} {
						assert.Equal(t, wantSt, got.st, what...)
						assert.Equal(t, wantLast, got.last, what...)
						if withCells {
							assert.Equal(t, want[i].tdSum, got.cells.tdSum, what...)
							assert.Equal(t, want[i].tdN, got.cells.tdN, what...)
						}
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
	_, _, ok := scanOne(vals, uint64(slices.Max(vals)), nil, 0, 0, 0, nil, nil, &sc)
	assert.False(t, ok, "inexact sums")
	small := vals[:1000]
	for k := range small {
		small[k] = int64(k)
	}
	_, _, ok = scanOne(small, 999, nil, 0, 0, 0, nil, nil, &sc)
	assert.False(t, ok, "short")
	_, _, ok = scanOne(vals, 1<<60, nil, 0, 0, 0, nil, nil, &sc)
	assert.False(t, ok, "values")
	_, _, ok = scanOne(vals, 1<<20, nil, 0, -1<<60, 0, nil, nil, &sc)
	assert.False(t, ok, "bases")
}

// scanOne is tdScan of one point.
func scanOne[V uint32 | int64](td []V, vMax uint64, base []int64, off, bMin, bMax int64, cells *cellSeries, evCell []uint8, sc *tdScanScratch) (TDStats, time.Duration, bool) {
	pts := []tdScanPoint[V]{{td: td, vMax: vMax, cells: cells}}
	tdScan(pts, len(td), base, off, bMin, bMax, evCell, nil, sc)
	return pts[0].st, pts[0].last, pts[0].ok
}
