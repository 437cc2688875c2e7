package qos

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sumTD equals adding float64(TD_k) one by one in heartbeat order, to the
// total and to each cell (cellSeries.setTD), whichever way it takes the
// sums: on small and negative TDs, cells visited out of order, and TDs
// whose float64 sum depends on the order.
func TestSumTDEqualsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	g := cellGrid{n: 8}
	check := func(name string, td, base []int64, off int64, evCell []uint8) tdAcc {
		want := tdAcc{}
		wantCells := newCellSeries(g)
		for k, v := range td {
			if base != nil {
				v += base[k]
			} else {
				v += off
			}
			if k == 0 {
				want.mn, want.mx = v, v
			}
			want.sum += float64(v)
			want.mn, want.mx = min(want.mn, v), max(want.mx, v)
			wantCells.tdSum[evCell[k]] += float64(v)
			wantCells.tdN[evCell[k]]++
		}
		cells := newCellSeries(g)
		cells.tdSum[0], cells.tdN[1] = 99, 99 // cleared by sumTD
		got := sumTD(td, base, off, cells, evCell)
		assert.Equal(t, want.sum, got.sum, name)
		if len(td) > 0 {
			assert.Equal(t, want.mn, got.mn, name)
			assert.Equal(t, want.mx, got.mx, name)
		}
		assert.Equal(t, wantCells.tdSum, cells.tdSum, name)
		assert.Equal(t, wantCells.tdN, cells.tdN, name)
		return got
	}
	for _, scale := range []int64{1, 1e6, 1e9, 1 << 40, 1 << 50} {
		n := 5000
		td, base, evCell := make([]int64, n), make([]int64, n), make([]uint8, n)
		for k := range td {
			td[k] = rng.Int64N(2*scale) - scale/4
			base[k] = rng.Int64N(scale)
			evCell[k] = uint8(min(k*g.n/n+rng.IntN(2), g.n-1)) // runs, with returns
		}
		check("base", td, base, 0, evCell)
		check("offset", td, nil, scale/3, evCell)
	}
	check("empty", nil, nil, 5, nil)

	// In order, 2^60 + 1 rounds to 2^60, then −2^60 gives 0, then + 1 = 1;
	// the exact sum would be 2.
	got := check("order matters", []int64{1 << 60, 1, -1 << 60, 1}, nil, 0, []uint8{0, 0, 2, 0})
	require.Equal(t, 1.0, got.sum)
}

// BenchmarkSumTD times sumTD on 200,000 TD_k of about 100 ms with a cell
// per 1,600 heartbeats (the shape of BenchmarkSweepEveryFamily's replays),
// against adding them one by one in float64 as cellSeries.setTD does.
//
//	go test -run '^$' -bench 'SumTD' -count 5 ./qos/
func BenchmarkSumTD(b *testing.B) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(5, 6))
	td0, evCell := make([]int64, n), make([]uint8, n)
	for k := range td0 {
		td0[k] = 100e6 + rng.Int64N(5e6)
		evCell[k] = uint8(k * maxCells / n)
	}
	td := make([]int64, n)
	cells := newCellSeries(cellGrid{n: maxCells})
	b.Run("sumTD", func(b *testing.B) {
		for b.Loop() {
			copy(td, td0)
			sumTD(td, nil, 1000, cells, evCell)
		}
	})
	b.Run("in-order", func(b *testing.B) {
		for b.Loop() {
			copy(td, td0)
			var sum float64
			for k := range td {
				td[k] += 1000
				sum += float64(td[k])
			}
			cells.setTD(td, evCell)
		}
	})
}
