package qos

import (
	"math"
	"testing"
)

// floorWindow is BenchmarkNormalFloorDivider's n' (the benchmark's window
// size), a variable so that the compiler does not fold n'².
var floorWindow = 1000

// BenchmarkNormalFloorDivider times the part of the normal φ's set that
// no exact layout of its groups avoids at each heartbeat, per distinct
// window: Window.MeanStdDev's floating-point steps, a division Σx/n', a
// division D/n'² and a square root, for 15 groups (the set's at
// BenchmarkSweepEveryFamily's stream) whose operations do not depend on
// each other, on float64 values alone (no integer sums, no clamps, no
// τ). It reports the process's CPU time per group.
//
//	go test -run '^$' -bench 'NormalFloor' ./qos/
func BenchmarkNormalFloorDivider(b *testing.B) {
	const groups = 15
	var sum, sp [groups]float64
	for i := range groups {
		sum[i] = float64(100_000_000_000 + 12_345*i) // Σx of 1000 intervals of about 100 ms
		sp[i] = 1.9e20 + 3.1e15*float64(i)           // n'·Σx² − (Σx)² at σ ≈ 14 ms
	}
	fn := float64(floorWindow)
	var acc0, acc1 float64
	k := 0
	cpu0 := cpuTime(b)
	for b.Loop() {
		t := float64(k) // inputs that change, so that nothing is hoisted
		k++
		for i := range groups {
			acc0 += (sum[i] + t) / fn
			acc1 += math.Sqrt((sp[i] + t) / (fn * fn))
		}
	}
	if acc0+acc1 == 0 {
		b.Fatal("nothing computed")
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N*groups), "cpu-ns/group")
}

// BenchmarkNormalFloorMemory times the least that keeping 40 thresholds'
// τ − A_k of 200,000 evaluated heartbeats in 4 bytes each costs
// (BenchmarkSweepEveryFamily's phi-normal, one pass): a block buffer's
// columns moved to each point's values tdBlock rows at a time, as
// flushTD moves them, then every value read back once and added up, as
// tdScan reads them, with nothing else computed. It reports the process's
// CPU time per op.
func BenchmarkNormalFloorMemory(b *testing.B) {
	const n, points = 200_000, 40
	mem := make([]uint32, n*points)
	buf := make([]uint32, tdStride*points)
	for i := range buf {
		buf[i] = uint32(i)
	}
	var s uint64
	cpu0 := cpuTime(b)
	for b.Loop() {
		for k := 0; k < n; k += tdBlock {
			for i := range points {
				copy(mem[i*n+k:i*n+min(k+tdBlock, n)], buf[i*tdStride:])
			}
		}
		for i := range points {
			for _, v := range mem[i*n : (i+1)*n] {
				s += uint64(v)
			}
		}
	}
	if s == 0 {
		b.Fatal("nothing read")
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
