package phi_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// The common trace of docs/algorithms.md, “φ accrual: normal model”: five
// intervals with μ = 102 ms and σ = 13.6 ms.
func ExampleNormal() {
	d, err := phi.NewNormal(phi.NormalConfig{Threshold: 8})
	if err != nil {
		panic(err)
	}
	for i, at := range []time.Duration{120, 225, 318, 440, 522, 630} {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: at * time.Millisecond})
	}
	for _, now := range []time.Duration{730, 750, 780, 830} {
		fmt.Printf("φ at %v: %.6f\n", now*time.Millisecond, d.Level(now*time.Millisecond))
	}
	tau, _ := d.FreshnessPoint()
	fmt.Println("freshness point:", tau)
	fmt.Println("suspected at 800ms:", d.Suspected(800*time.Millisecond))
	fmt.Println("suspected at 810ms:", d.Suspected(810*time.Millisecond))
	fmt.Printf("z(8) = %.6f, φ(z=38) = %.2f\n", phi.ZOfLevel(8), phi.LevelOfZ(38))
	// Output:
	// φ at 730ms: 0.253039
	// φ at 750ms: 1.031646
	// φ at 780ms: 3.677678
	// φ at 830ms: 12.525203
	// freshness point: 808.372719ms
	// suspected at 800ms: false
	// suspected at 810ms: true
	// z(8) = 5.612001, φ(z=38) = 315.54
}

// Akka's defaults right after the first heartbeat: m' = 1 s + 3 s pause, s' =
// 250 ms, so τ comes 5.3065 s after it (docs/algorithms.md, “φ accrual: Akka's
// variant”).
func ExampleAkka() {
	d, err := phi.NewAkka(phi.AkkaConfig{})
	if err != nil {
		panic(err)
	}
	d.Observe(detector.Heartbeat{Arrival: 0})
	e, _ := d.ElapsedFor(d.Threshold())
	fmt.Println("t*(8):", e.Round(time.Microsecond))
	fmt.Printf("φ after 5s: %.3f\n", d.Level(5*time.Second))
	fmt.Println("suspected after 6s:", d.Suspected(6*time.Second))
	// Output:
	// t*(8): 5.306497s
	// φ after 5s: 4.737
	// suspected after 6s: true
}

// Cassandra's exponential model on the common trace: far more conservative than
// the normal model for regular heartbeats (docs/algorithms.md, “φ accrual:
// Cassandra's variant”).
func ExampleCassandra() {
	d, err := phi.NewCassandra(phi.CassandraConfig{WindowSize: 5})
	if err != nil {
		panic(err)
	}
	for i, at := range []time.Duration{120, 225, 318, 440, 522, 630} {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: at * time.Millisecond})
	}
	fmt.Printf("φ at 830ms: %.6f\n", d.Level(830*time.Millisecond))
	tau, _ := d.FreshnessPoint()
	fmt.Println("freshness point:", tau.Round(time.Microsecond))
	// Output:
	// φ at 830ms: 0.851558
	// freshness point: 2.508909s
}
