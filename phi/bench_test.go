package phi_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// benchArrivals is a jittered 100 ms heartbeat stream, precomputed so the
// benchmarks time only the detector.
var benchArrivals = func() []time.Duration {
	r := rand.New(rand.NewPCG(7, 7))
	a := make([]time.Duration, 4096)
	at := time.Duration(0)
	for i := range a {
		at += time.Duration(100e6 + r.NormFloat64()*10e6)
		a[i] = at
	}
	return a
}()

var sink float64

// benchObserveLevel times Observe followed by Level 80 ms after the arrival.
// Arrival times keep growing over the loop (one period of benchArrivals is
// about 410 s).
func benchObserveLevel(b *testing.B, d detector.Accrual) {
	b.ReportAllocs()
	period := benchArrivals[len(benchArrivals)-1]
	for i := 0; b.Loop(); i++ {
		k := i % len(benchArrivals)
		a := benchArrivals[k] + time.Duration(i/len(benchArrivals))*period
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
		sink += d.Level(a + 80*time.Millisecond)
	}
}

// benchObserveTau times Observe followed by FreshnessPoint.
func benchObserveTau(b *testing.B, d detector.Accrual) {
	b.ReportAllocs()
	period := benchArrivals[len(benchArrivals)-1]
	for i := 0; b.Loop(); i++ {
		k := i % len(benchArrivals)
		a := benchArrivals[k] + time.Duration(i/len(benchArrivals))*period
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
		tau, _ := d.FreshnessPoint()
		sink += float64(tau)
	}
}

func newBenchNormal(b *testing.B) *phi.Normal {
	d, err := phi.NewNormal(phi.NormalConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkNormalObserveLevel(b *testing.B) { benchObserveLevel(b, newBenchNormal(b)) }
func BenchmarkNormalObserveTau(b *testing.B)   { benchObserveTau(b, newBenchNormal(b)) }

func newBenchAkka(b *testing.B) *phi.Akka {
	d, err := phi.NewAkka(phi.AkkaConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkAkkaObserveLevel(b *testing.B) { benchObserveLevel(b, newBenchAkka(b)) }
func BenchmarkAkkaObserveTau(b *testing.B)   { benchObserveTau(b, newBenchAkka(b)) }

// BenchmarkAkkaNoPauseObserveLevel queries where φ is not negligible
// (y ≈ −2): with the default 3 s pause the query above sits where the
// logistic shortcut returns 0.
func BenchmarkAkkaNoPauseObserveLevel(b *testing.B) {
	d, err := phi.NewAkka(phi.AkkaConfig{AcceptableHeartbeatPause: -1, MinStdDeviation: time.Millisecond,
		FirstHeartbeatEstimate: 100 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	benchObserveLevel(b, d)
}

func newBenchCassandra(b *testing.B) *phi.Cassandra {
	d, err := phi.NewCassandra(phi.CassandraConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkCassandraObserveLevel(b *testing.B) { benchObserveLevel(b, newBenchCassandra(b)) }
func BenchmarkCassandraObserveTau(b *testing.B)   { benchObserveTau(b, newBenchCassandra(b)) }

// BenchmarkFixedBaseline is the fixed-timeout detector under the same loop
// as benchObserveTau, the yardstick for ratios measured in one run.
func BenchmarkFixedBaseline(b *testing.B) {
	d, err := detector.NewFixed(detector.FixedConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	period := benchArrivals[len(benchArrivals)-1]
	for i := 0; b.Loop(); i++ {
		k := i % len(benchArrivals)
		a := benchArrivals[k] + time.Duration(i/len(benchArrivals))*period
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
		tau, _ := d.FreshnessPoint()
		sink += float64(tau)
	}
}

// BenchmarkZOfLevel times the inverse (Θ = 8), paid once per threshold.
func BenchmarkZOfLevel(b *testing.B) {
	for b.Loop() {
		sink += phi.ZOfLevel(8)
	}
}
