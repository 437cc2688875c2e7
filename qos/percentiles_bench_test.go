package qos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// benchTDs returns n detection times in nanoseconds shaped like a replay's:
// a margin of 20 ms plus a lognormal delay of median 2 ms, in whole
// microseconds, so that values repeat.
func benchTDs(n int) []int64 {
	rng := rand.New(rand.NewPCG(24, 2026))
	td := make([]int64, n)
	for k := range td {
		td[k] = 20_000_000 + int64(math.Round(2000*math.Exp(0.5*rng.NormFloat64())))*1000
	}
	return td
}

// BenchmarkTDStats is the nearest-rank p50 and p99 of n detection times
// (tdRankPair), side by side: "select" selects each rank among all values,
// "windows" draws rank windows on a sample (the default past 16384 values).
// The values are benchTDs's, or all equal ("equal": a constant delay),
// where the windows' sides are that value.
//
//	go test -run '^$' -bench 'TDStats' -benchmem -count 5 ./qos/
func BenchmarkTDStats(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, shape := range []string{"lognormal", "equal"} {
			src := benchTDs(n)
			if shape == "equal" {
				for k := range src {
					src[k] = 25_000_000
				}
			}
			mn, mx := slices.Min(src), slices.Max(src)
			td := make([]int64, n)
			for _, mode := range []struct {
				name string
				m    int
			}{{"select", 0}, {"windows", max(tdSampleSize(n), 256)}} {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, shape, mode.name), func(b *testing.B) {
					cpu0 := cpuTime(b)
					for b.Loop() {
						copy(td, src)
						tdRankPair(td, mn, mx, mode.m)
					}
					b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// BenchmarkLinearPercentiles is the exact TD p50, p99 and max at 40 points
// of the scaled one-pass families over the first n heartbeats of
// benchTrace, side by side: "select" selects among all values at each
// point, "grid" is the default (lc.allPercentiles).
//
//	go test -run '^$' -bench 'LinearPercentiles' -benchmem -count 5 ./qos/
func BenchmarkLinearPercentiles(b *testing.B) {
	hbs := benchTrace()[0].Heartbeats
	for _, n := range []int{100_000, 1_000_000} {
		for _, f := range linearBenchFamilies() {
			det, err := f.New(f.Values[0])
			if err != nil {
				b.Fatal(err)
			}
			ps := make([]float64, len(f.Values))
			for i, v := range f.Values {
				ps[i] = f.Linear(v)
			}
			lc, err := replayLinear(det, sliceSource(hbs[:n]), Config{WarmUp: f.WarmUp}, ps)
			if err != nil {
				b.Fatal(err)
			}
			if lc.sameS {
				continue
			}
			for _, mode := range []struct {
				name string
				m    int
			}{{"select", 0}, {"grid", tdSampleSize(n)}} {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, f.Name, mode.name), func(b *testing.B) {
					cpu0 := cpuTime(b)
					for b.Loop() {
						lc.percentiles(mode.m)
					}
					b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// BenchmarkSelectStream is the exact p50 and p99 of spilled detection
// times (selectStream's passes over an in-memory stream of n values), side
// by side: "whole-range" starts from every int64 (selectKeys), "within"
// from the values' range, as tdStatsSpilled does. It reports the passes,
// each of which reads a spill file in a replay.
//
//	go test -run '^$' -bench 'SelectStream' -benchmem -count 5 ./qos/
func BenchmarkSelectStream(b *testing.B) {
	const n = 1_000_000
	vals := benchTDs(n)
	mn, mx := slices.Min(vals), slices.Max(vals)
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	for _, whole := range []bool{true, false} {
		name := "within"
		if whole {
			name = "whole-range"
		}
		b.Run(name, func(b *testing.B) {
			passes := 0
			keys := make([]uint64, 4096)
			for b.Loop() {
				pass := func(_ func(int) bool, fn func(int, []uint64)) error {
					passes++
					for a := 0; a < n; a += len(keys) {
						vs := vals[a:min(a+len(keys), n)]
						for k, v := range vs {
							keys[k] = uint64(v) ^ (1 << 63)
						}
						fn(0, keys[:len(vs)])
					}
					return nil
				}
				var err error
				if whole {
					_, _, err = selectKeys(n, 1, ranks, pass)
				} else {
					_, err = selectStream(n, ranks, mn, mx, func(fn func(int64)) error {
						passes++
						for _, v := range vals {
							fn(v)
						}
						return nil
					})
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(passes)/float64(b.N), "passes/op")
		})
	}
}
