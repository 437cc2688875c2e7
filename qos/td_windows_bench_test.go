package qos

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkTDWindowsPut times tdWindows.put writing 64 rows (one block,
// tdBlock) of 41 thresholds' TD_k, fdreplay's default number of
// thresholds, into the column buffer of the ranked sweep's second pass
// (threshold_ranks.go). It is the benchmark behind 4b0c96d's figure.
//
//	go test -run '^$' -bench 'TDWindowsPut' -benchmem ./qos/
func BenchmarkTDWindowsPut(b *testing.B) {
	const thresholds, rows = 41, tdBlock
	w := &tdWindows{off: 3 * int64(time.Millisecond)}
	buf := make([]int64, thresholds*tdStride)
	taus := make([]time.Duration, thresholds)
	for i := range taus {
		taus[i] = time.Duration(100+7*i) * time.Millisecond
	}
	var sink time.Duration
	for b.Loop() {
		for r := range rows {
			sink += w.put(buf, r, taus, time.Duration(r)*time.Millisecond)
		}
	}
	if sink == 0 {
		b.Fatal("put returned no freshness point")
	}
}

// BenchmarkWindowTally times windowTally against windowTallyNear side by
// side on 65,536 TD values in runs of 64 (the second pass's blocks), half
// of them below the p50 window's side and a few in each window, the
// benchmark behind 534b0a5's figure.
//
//	go test -run '^$' -bench 'WindowTally' -benchmem ./qos/
func BenchmarkWindowTally(b *testing.B) {
	const n, run = 1 << 16, 64
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = int64(time.Duration(rng.NormFloat64()*float64(20*time.Millisecond)) + 200*time.Millisecond)
	}
	lo0, lo1 := int64(200*time.Millisecond), int64(245*time.Millisecond)
	wd0, wd1 := uint64(time.Millisecond), uint64(time.Millisecond)
	hits := make([]int64, run)
	for _, f := range []struct {
		name  string
		tally func([]int64, int64, int64, uint64, uint64, []int64) (int, int, int)
	}{{"windowTally", windowTally}, {"windowTallyNear", windowTallyNear}} {
		b.Run(f.name, func(b *testing.B) {
			var sum int
			for b.Loop() {
				for i := 0; i < n; i += run {
					b0, b1, k := f.tally(vs[i:i+run], lo0, lo1, wd0, wd1, hits)
					sum += b0 + b1 + k
				}
			}
			if sum == 0 {
				b.Fatal("no value counted")
			}
		})
	}
}
