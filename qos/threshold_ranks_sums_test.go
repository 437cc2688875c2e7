package qos

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tdWindows gives finishTD's TD statistics, last TD_k and cell sums (bit
// for bit) for columns whose sums stay exact in int64, with and without
// delays as bases, with negative values, and with values on the rank
// windows' sides (a coarse clock); columns whose sums stop being exact in
// a later block (n·max |TD_k| reaches 2^52, where float64 additions round)
// or from the first are left to the usual passes.
func TestTDWindowsMatchFinishTD(t *testing.T) {
	const n = 5000 // rows, not a multiple of tdBlock
	rng := rand.New(rand.NewPCG(3, 4))
	huge := int64(1) << 45 // n·2^45 > 2^52 from the first block, and the sums round past 2^53
	cols := map[string]func(k int) int64{
		"small":  func(int) int64 { return 20e6 + rng.Int64N(10e6) },
		"turns":  func(k int) int64 { return int64(k/1000) * huge / 4 * (1 + rng.Int64N(3)) },
		"huge":   func(int) int64 { return huge + rng.Int64N(1e6) },
		"coarse": func(int) int64 { return 1e6 * rng.Int64N(4) },
		"signed": func(int) int64 { return rng.Int64N(2e6) - 1e6 },
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range cols {
			if !yield(k) {
				return
			}
		}
	})
	grid := cellGrid{origin: 0, width: 1, n: 7}
	evCell := make([]uint8, n)
	for k := range evCell {
		evCell[k] = uint8(k * grid.n / n)
	}
	for _, withDelays := range []bool{false, true} {
		var delays []int64
		if withDelays {
			delays = make([]int64, n)
			for k := range delays {
				delays[k] = rng.Int64N(1e6) - 2e5
			}
		}
		const off = 12345
		td := make([][]int64, len(names)) // τ − A_k by column
		buf := make([]int64, n*len(names))
		for i, name := range names {
			td[i] = make([]int64, n)
			for k := range n {
				td[i][k] = cols[name](k)
				buf[k*len(names)+i] = td[i][k]
			}
		}
		smp := &tdSample{stride: 8, vals: make([][]int64, len(names))}
		for k := 0; k < n; k += smp.stride {
			smp.rows = append(smp.rows, k)
			for i := range names {
				smp.vals[i] = append(smp.vals[i], td[i][k])
			}
		}
		cells := make([]*cellSeries, len(names))
		for i := range cells {
			cells[i] = newCellSeries(grid)
		}
		w := newTDWindows(smp, n, delays, off, cells)
		blk := make([]int64, tdStride*len(names)) // put's layout: TD_k by threshold
		for k := 0; k < n; k += tdBlock {
			rows := min(tdBlock, n-k)
			for r := range rows {
				for i := range names {
					blk[i*tdStride+r] = buf[(k+r)*len(names)+i] + w.base(k+r)
				}
			}
			w.add(blk, rows, len(names), evCell)
		}
		for i, name := range names {
			got, last, ok := w.stats(i)
			if name == "huge" || name == "turns" {
				// Past the bound the int64 sums are not float64's: the
				// threshold is swept again the usual way.
				require.False(t, ok, "%s", name)
				continue
			}
			require.True(t, ok, "%s: the windows hold the ranks", name)
			want := newCellSeries(grid)
			wantStats, wantLast := finishTD(slices.Clone(td[i]), delays, off, want, evCell)
			require.Equal(t, wantStats, got, "%s, delays %v", name, withDelays)
			require.Equal(t, wantLast, last, "%s", name)
			for c := range grid.n {
				require.Equal(t, math.Float64bits(want.tdSum[c]), math.Float64bits(cells[i].tdSum[c]), "%s: cell %d's TD sum", name, c)
				require.Equal(t, want.tdN[c], cells[i].tdN[c], "%s: cell %d's count", name, c)
			}
		}
	}
}

// put writes row r of each threshold's TD_k, max(τ − a, 0) plus the
// heartbeat's base, at the threshold's stride, and returns the least τ.
func TestTDWindowsPut(t *testing.T) {
	delays := []int64{0, 0, 0, 700, 900}
	w := &tdWindows{delays: delays, rowsDone: 2}
	buf := make([]int64, 3*tdStride)
	taus := []time.Duration{50, 9, 30} // a τ before the arrival: TD_k is the base
	require.Equal(t, time.Duration(9), w.put(buf, 1, taus, 20))
	require.Equal(t, int64(30+700), buf[1])
	require.Equal(t, int64(0+700), buf[tdStride+1])
	require.Equal(t, int64(10+700), buf[2*tdStride+1])
	w.delays = nil
	w.off = -5
	require.Equal(t, time.Duration(9), w.put(buf, 2, taus, 20))
	require.Equal(t, []int64{25, -5, 5}, []int64{buf[2], buf[tdStride+2], buf[2*tdStride+2]})
}
