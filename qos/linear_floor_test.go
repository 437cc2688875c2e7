package qos

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// sumFloors adds each point's TDs under the floor, over the stream and per
// cell, in heartbeat order: the same float64 sums, to the bit, as a loop
// per point, for 1 to 9 points (lanes of four and the rest), with and
// without cells, cells in runs and revisited.
func TestSumFloorsIsAPassPerPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	const n = 5000
	for P := 1; P <= 9; P++ {
		for _, withCells := range []bool{false, true} {
			lc := &linearCurve{td0: make([]float64, n), scales: make([]float64, n), floor: make([]float64, n), evCell: make([]uint8, n)}
			for k := range n {
				// Magnitudes far apart, so that the order of the
				// additions shows in the sums.
				lc.td0[k] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)))
				lc.scales[k] = rng.Float64() * 1e6
				lc.floor[k] = rng.NormFloat64() * 1e9
				lc.evCell[k] = uint8(k * 7 / n) // runs
				if rng.IntN(50) == 0 {
					lc.evCell[k] = uint8(rng.IntN(7)) // a cell seen again
				}
			}
			for range P {
				lc.ps = append(lc.ps, rng.Float64()*10-1)
			}
			if withCells {
				lc.cells = newCellSeries(cellGrid{n: 7})
			}
			lc.sumFloors()
			for i, p := range lc.ps {
				var sum float64
				cells := make([]float64, 7)
				for k, c := range lc.td0 {
					v := max(c+lc.scales[k]*p, lc.floor[k])
					sum += v
					cells[lc.evCell[k]] += v
				}
				require.Equal(t, math.Float64bits(sum), math.Float64bits(lc.floorSum[i]), "P %d, point %d, cells %v", P, i, withCells)
				if !withCells {
					require.Nil(t, lc.floorCells)
					continue
				}
				for c := range cells {
					require.Equal(t, math.Float64bits(cells[c]), math.Float64bits(lc.floorCells[i][c]), "P %d, point %d, cell %d", P, i, c)
				}
			}
		}
	}
}
