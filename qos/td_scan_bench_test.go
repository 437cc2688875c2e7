package qos

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkTDScan times a thresholdPass's summary of 40 points' TD_k
// (fdreplay's 40 thresholds over 200,000 evaluated heartbeats, τ − A_k in
// 4 bytes, a delay per heartbeat, 128 cells) by tdScan against widening
// each point's and finishTD, as finish did before tdScan, side by side;
// besides the wall time it reports the CPU time per op.
//
//	go test -run '^$' -bench 'TDScan' -benchmem ./qos/
func BenchmarkTDScan(b *testing.B) {
	const n, points = 200_000, 40
	rng := rand.New(rand.NewPCG(117000101, 7))
	delays, evCell := make([]int64, n), make([]uint8, n)
	for k := range delays {
		delays[k] = int64(max(0, rng.NormFloat64()*10e6+30e6))
		evCell[k] = uint8(k * maxCells / n)
	}
	narrow := make([][]uint32, points)
	for i := range narrow {
		narrow[i] = make([]uint32, n)
		for k := range n {
			narrow[i][k] = uint32(max(0, rng.NormFloat64()*20e6+float64(100+10*i)*1e6))
		}
	}
	cells := make([]*cellSeries, points)
	for i := range cells {
		cells[i] = newCellSeries(cellGrid{n: maxCells})
	}
	bMin, bMax := baseRange(delays, 0)
	b.Run("tdScan", func(b *testing.B) {
		var sc tdScanScratch
		pts := make([]tdScanPoint[uint32], points)
		cpu0 := cpuTime(b)
		for b.Loop() {
			for i := range pts {
				pts[i] = tdScanPoint[uint32]{td: narrow[i], vMax: math.MaxUint32, cells: cells[i]}
			}
			tdScan(pts, n, delays, 0, bMin, bMax, evCell, nil, &sc)
			for i := range pts {
				if !pts[i].ok {
					b.Fatal("declined")
				}
			}
		}
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("finishTD", func(b *testing.B) {
		var wide []int64
		cpu0 := cpuTime(b)
		for b.Loop() {
			for i := range narrow {
				wide = widenTD(wide, narrow[i])
				finishTD(wide, delays, 0, cells[i], evCell)
			}
		}
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	})
}
