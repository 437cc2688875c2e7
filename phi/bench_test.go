package phi_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
	"github.com/fdkit/fdkit/phi"
)

// The ObserveLevel benchmarks time detectortest.BenchmarkLevel (Observe,
// then Level 80 ms after the arrival, over the kit's jittered 100 ms
// stream); the ObserveTau benchmarks time detectortest.Benchmark (Observe,
// then Suspected, which compares with τ, 50 ms after the arrival).

var sink float64

func newBenchNormal(b *testing.B) *phi.Normal {
	d, err := phi.NewNormal(phi.NormalConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkNormalObserveLevel(b *testing.B) { detectortest.BenchmarkLevel(b, newBenchNormal(b)) }
func BenchmarkNormalObserveTau(b *testing.B)   { detectortest.Benchmark(b, newBenchNormal(b)) }

func newBenchAkka(b *testing.B) *phi.Akka {
	d, err := phi.NewAkka(phi.AkkaConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkAkkaObserveLevel(b *testing.B) { detectortest.BenchmarkLevel(b, newBenchAkka(b)) }
func BenchmarkAkkaObserveTau(b *testing.B)   { detectortest.Benchmark(b, newBenchAkka(b)) }

// BenchmarkAkkaNoPauseObserveLevel queries where φ is not negligible
// (y ≈ −2): with the default 3 s pause the query above sits where the
// logistic shortcut returns 0.
func BenchmarkAkkaNoPauseObserveLevel(b *testing.B) {
	d, err := phi.NewAkka(phi.AkkaConfig{AcceptablePause: new(time.Duration(0)), MinStdDev: new(time.Millisecond),
		BootstrapInterval: new(100 * time.Millisecond)})
	if err != nil {
		b.Fatal(err)
	}
	detectortest.BenchmarkLevel(b, d)
}

func newBenchCassandra(b *testing.B) *phi.Cassandra {
	d, err := phi.NewCassandra(phi.CassandraConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkCassandraObserveLevel(b *testing.B) {
	detectortest.BenchmarkLevel(b, newBenchCassandra(b))
}
func BenchmarkCassandraObserveTau(b *testing.B) { detectortest.Benchmark(b, newBenchCassandra(b)) }

// BenchmarkFixedBaseline is the fixed-timeout detector under the same loop
// as the ObserveTau benchmarks, the yardstick for ratios measured in one
// run.
func BenchmarkFixedBaseline(b *testing.B) {
	d, err := detector.NewFixed(detector.FixedConfig{})
	if err != nil {
		b.Fatal(err)
	}
	detectortest.Benchmark(b, d)
}

// BenchmarkZOfLevel times the inverse (Θ = 8), paid once per threshold.
func BenchmarkZOfLevel(b *testing.B) {
	for b.Loop() {
		sink += phi.ZOfLevel(8)
	}
}
