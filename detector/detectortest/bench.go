package detectortest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// benchJitter is the jitter of the benchmark stream: 1024 draws of a normal
// distribution with σ = 5 ms, seeded, so every package times the same input.
var benchJitter = func() []time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	j := make([]time.Duration, 1024)
	for i := range j {
		j[i] = time.Duration(r.NormFloat64() * 5e6)
	}
	return j
}()

// benchArrival is the arrival of heartbeat i of the benchmark stream:
// i·100 ms plus jitter, increasing over the whole loop.
func benchArrival(i int) time.Duration {
	return time.Duration(i)*100*time.Millisecond + benchJitter[i&1023]
}

// Sink receives the benchmarks' results so the compiler keeps the queries.
var Sink float64

// Benchmark is the standard Observe+Suspected loop: heartbeat i (sequence
// number i) arrives at i·100 ms plus jitter (σ = 5 ms, fixed seed), then the
// detector is asked whether it suspects 50 ms later. It reports
// allocations. d must be fresh; b.Loop drives the iterations.
func Benchmark(b *testing.B, d detector.Detector) {
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		a := benchArrival(i)
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
		if d.Suspected(a + 50*time.Millisecond) {
			n++
		}
	}
	Sink += float64(n)
}

// BenchmarkLevel is the Observe+Level loop for an accrual detector, over
// the same stream as Benchmark, with the level queried 80 ms after each
// arrival. It reports allocations.
func BenchmarkLevel(b *testing.B, d detector.Accrual) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a := benchArrival(i)
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
		Sink += d.Level(a + 80*time.Millisecond)
	}
}
