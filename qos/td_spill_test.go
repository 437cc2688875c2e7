package qos

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tdSpill's statistics equal tdStats and the per-cell sums of the same
// TD_k in memory, for either TD base, on TD-like values, ties, extremes
// of the int64 range, a trend (the windows of a systematic sample), and
// lengths below and above the sample's bound.
func TestTDSpillStatsEqualInMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gens := map[string]func(i int) (int64, int64){
		"td": func(int) (int64, int64) {
			return int64(20e6 + rng.NormFloat64()*2e6), int64(2e6 + rng.ExpFloat64()*1e6)
		},
		"ties":     func(i int) (int64, int64) { return int64(i % 3), 7 },
		"extremes": func(i int) (int64, int64) { return []int64{math.MaxInt64 / 2, math.MinInt64 / 2, 0}[i%3], int64(i % 2) },
		"trend":    func(i int) (int64, int64) { return int64(i) * 1000, int64(i%17) * 3 },
		"periodic": func(i int) (int64, int64) { return int64(i%4096) * int64(i%4096), 0 },
	}
	const off, cells = 1500, 5
	for name, gen := range gens {
		for _, n := range []int{1, 3, 1000, 3*tdSpillSample + 11, 40000} {
			sp, err := newTDSpill(t.TempDir(), off, cells)
			require.NoError(t, err)
			ts, ds, cs := make([]int64, n), make([]int64, n), make([]uint8, n)
			for k := range n {
				ts[k], ds[k] = gen(k)
				cs[k] = uint8(k * cells / n)
				sp.add(ts[k], ds[k], cs[k])
			}
			for _, sync := range []bool{true, false} {
				td := make([]int64, n)
				for k := range td {
					td[k] = ts[k] + off
					if sync {
						td[k] = ts[k] + ds[k]
					}
				}
				g := cellGrid{n: cells}
				want, got := newCellSeries(g), newCellSeries(g)
				want.setTD(td, cs)
				last := td[n-1]
				wantSt := tdStats(td)
				st, gotLast, err := sp.stats(sync, got)
				require.NoError(t, err)
				require.Equal(t, wantSt, st, "%s n=%d sync=%v", name, n, sync)
				require.Equal(t, last, gotLast, "%s n=%d", name, n)
				require.Equal(t, want.tdSum, got.tdSum, "%s n=%d", name, n)
				require.Equal(t, want.tdN, got.tdN, "%s n=%d", name, n)
			}
			sp.close()
		}
	}
}

// A spill holds TD-like records in about 6 bytes each (not the 17 of a
// fixed-size record), and its sample stays within its bound.
func TestTDSpillCompact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sp, err := newTDSpill(t.TempDir(), 0, 0)
	require.NoError(t, err)
	defer sp.close()
	const n = 100000
	for range n {
		sp.add(int64(20*time.Millisecond)+int64(rng.NormFloat64()*1e6), int64(2*time.Millisecond)+int64(rng.ExpFloat64()*1e6), 0)
	}
	require.NoError(t, sp.blocks(true, func([]int64) bool { return true }))
	require.Less(t, sp.size, int64(7*n))
	require.Greater(t, sp.size, int64(4*n))
	require.LessOrEqual(t, len(sp.sample), tdSpillSample)
	require.GreaterOrEqual(t, len(sp.sample), tdSpillSample/2)
}

// A truncated spill file, or one whose pack header is corrupt, is an
// error naming the records, not a wrong value.
func TestTDSpillTruncated(t *testing.T) {
	for _, cut := range []int64{1, 3, 700} {
		sp, err := newTDSpill(t.TempDir(), 0, 0)
		require.NoError(t, err)
		for k := range 1000 {
			sp.add(int64(k)<<40, 1, 0)
		}
		_, _, err = sp.stats(true, nil)
		require.NoError(t, err)
		sp.size -= cut
		_, _, err = sp.stats(true, nil)
		require.ErrorContains(t, err, "truncated", "cut %d", cut)
		sp.close()
	}
	sp, err := newTDSpill(t.TempDir(), 0, 0)
	require.NoError(t, err)
	defer sp.close()
	for k := range 10 {
		sp.add(int64(k), 1, 0)
	}
	require.NoError(t, sp.blocks(true, func([]int64) bool { return true }))
	_, err = sp.f.WriteAt([]byte{0x99}, 0) // widths 9 and 9
	require.NoError(t, err)
	_, _, err = sp.stats(true, nil)
	require.ErrorContains(t, err, "truncated")
}

// The rank windows of a spill keep a bounded share of its values even when
// the systematic sample misrepresents them (aliasedSpill). The statistics stay exact, and the
// values kept in memory stay far below the stream's (the spill falls back
// to selectStream rather than keep nearly every value).
func TestTDSpillWindowsBoundedOnAliasedSample(t *testing.T) {
	sp, td := aliasedSpill(t)
	n := len(td)
	want := tdStats(slices.Clone(td))
	td = nil
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, _, err := sp.stats(true, nil)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Equal(t, want, st)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(n*8), "bytes allocated for the percentiles of %d values", n)
}

// When the rank windows overflow (the aliased sample above), the window
// pass stops reading the spill there: the fallback's selection reads the
// whole file again anyway.
func TestTDSpillOverflowStopsReading(t *testing.T) {
	sp, td := aliasedSpill(t)
	n := len(td)
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	_, ok, err := sp.windowRanks(true, ranks, slices.Min(td), slices.Max(td))
	require.NoError(t, err)
	require.False(t, ok, "the windows overflow")
	require.Less(t, sp.decoded, n/4, "records decoded before the windows overflowed")
	st, _, err := sp.stats(true, nil)
	require.NoError(t, err)
	require.Equal(t, tdStats(td), st)
}

// aliasedSpill returns a spill of 2^20 TDs, and the TDs, whose systematic
// sample misrepresents them: every record the sample can see (multiples
// of 64) is spread out, and all the others equal one value inside the
// median's window. It is closed with the test.
func aliasedSpill(t *testing.T) (*tdSpill, []int64) {
	rng := rand.New(rand.NewPCG(9, 10))
	sp, err := newTDSpill(t.TempDir(), 0, 0)
	require.NoError(t, err)
	t.Cleanup(sp.close)
	td := make([]int64, 1<<20)
	for k := range td {
		td[k] = 500_000_000
		if k%64 == 0 {
			td[k] = rng.Int64N(1_000_000_000)
		}
		sp.add(td[k], 0, 0)
	}
	return sp, td
}
