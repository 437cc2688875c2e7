package qos

import (
	"math"
	"time"
)

// tdAcc is what tdStats and cellSeries.setTD compute from the TD_k of a
// replay besides their ranks: their float64 sum taken in heartbeat order,
// and their least and greatest values.
type tdAcc struct {
	sum    float64
	mn, mx int64
}

// stats returns tdStats of td, whose sum and extremes a holds, and the
// last TD_k.
func (a *tdAcc) stats(td []int64) (TDStats, time.Duration) {
	if len(td) == 0 {
		return TDStats{}, 0
	}
	last := time.Duration(td[len(td)-1]) // before tdStatsOf reorders td
	return tdStatsOf(td, a.sum, a.mn, a.mx), last
}

// sumTD adds to each τ − A_k of td its base (base[k] when base is not nil,
// else off) to make it TD_k, returns their sum and extremes, and when cells
// is not nil sets its TD sums as cellSeries.setTD would, with the cell
// evCell[k] of each.
//
// The float64 sums are taken in heartbeat order; while every partial sum is
// an integer of magnitude below 2^53 each addition is exact, so they are
// then taken in int64 (an addition of latency one cycle per TD_k, and one
// float64 addition per run of TD_k in one cell) and converted. n·max |TD_k|
// < 2^52 bounds every partial sum of the total and of each cell, with room
// for the rounding of the bound itself; past it the sums are taken in
// float64, one TD_k at a time.
func sumTD(td, base []int64, off int64, cells *cellSeries, evCell []uint8) tdAcc {
	acc := tdAcc{mn: math.MaxInt64, mx: math.MinInt64}
	if cells != nil {
		clear(cells.tdSum)
		clear(cells.tdN)
	}
	if len(td) == 0 {
		return acc
	}
	var sum int64 // wraps only where the bound below fails
	mn, mx := acc.mn, acc.mx
	if base != nil {
		base = base[:len(td)]
		for k, v := range td {
			v += base[k]
			td[k] = v
			sum += v
			mn, mx = min(mn, v), max(mx, v)
		}
	} else {
		for k, v := range td {
			v += off
			td[k] = v
			sum += v
			mn, mx = min(mn, v), max(mx, v)
		}
	}
	acc.mn, acc.mx = mn, mx
	if float64(len(td))*max(math.Abs(float64(mn)), math.Abs(float64(mx))) < 1<<52 {
		acc.sum = float64(sum)
		if cells != nil {
			cellSums(td, evCell[:len(td)], cells.tdSum, cells.tdN)
		}
		return acc
	}
	for _, v := range td {
		acc.sum += float64(v)
	}
	if cells != nil {
		cells.setTD(td, evCell)
	}
	return acc
}

// cellSums adds to tdSum[c] and tdN[c] the int64 sum and the count of each
// run of consecutive values of td in one cell c = evCell[k] (exact where
// sumTD calls it). The sum and the count run in separate loops, which keep
// their few variables in registers.
func cellSums(td []int64, evCell []uint8, tdSum, tdN []float64) {
	for i := 0; i < len(td); {
		c := evCell[i]
		j := i + 1
		for j < len(td) && evCell[j] == c {
			j++
		}
		var s int64
		for _, v := range td[i:j] {
			s += v
		}
		tdSum[c] += float64(s)
		tdN[c] += float64(j - i)
		i = j
	}
}
