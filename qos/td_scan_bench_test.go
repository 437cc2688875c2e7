package qos

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkTDScan times a thresholdPass's summary of one point's TD_k
// (200,000 evaluated heartbeats, τ − A_k in 4 bytes, a delay per
// heartbeat, 128 cells) by tdScan against widening them and finishTD, as
// finish did before tdScan, side by side; besides the wall time it reports the CPU time per op.
//
//	go test -run '^$' -bench 'TDScan' -benchmem ./qos/
func BenchmarkTDScan(b *testing.B) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(117000101, 7))
	narrow, delays, evCell := make([]uint32, n), make([]int64, n), make([]uint8, n)
	for k := range narrow {
		narrow[k] = uint32(max(0, rng.NormFloat64()*20e6+150e6))
		delays[k] = int64(max(0, rng.NormFloat64()*10e6+30e6))
		evCell[k] = uint8(k * maxCells / n)
	}
	cells := newCellSeries(cellGrid{n: maxCells})
	bMin, bMax := baseRange(delays, 0)
	b.Run("tdScan", func(b *testing.B) {
		var sc tdScanScratch
		cpu0 := cpuTime(b)
		for b.Loop() {
			if _, _, ok := tdScan(narrow, math.MaxUint32, delays, 0, bMin, bMax, cells, evCell, &sc); !ok {
				b.Fatal("declined")
			}
		}
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("finishTD", func(b *testing.B) {
		var wide []int64
		cpu0 := cpuTime(b)
		for b.Loop() {
			wide = widenTD(wide, narrow)
			finishTD(wide, delays, 0, cells, evCell)
		}
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	})
}
