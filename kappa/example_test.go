package kappa_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
)

func ExampleDetector() {
	d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 10}})
	if err != nil {
		panic(err)
	}
	// docs/algorithms.md's common trace.
	for i, at := range []time.Duration{120, 225, 318, 440, 522, 630} {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: at * time.Millisecond})
	}
	fmt.Println("expected arrival of 7:", d.Estimator().Next(), "σ:", d.StdDev())
	for _, t := range []time.Duration{725833333, 800 * time.Millisecond, 900 * time.Millisecond} {
		fmt.Printf("κ at %v: %.6f\n", t, d.Level(t))
	}
	tau, _ := d.FreshnessPoint()
	fmt.Println("κ reaches the default 2.5 at:", tau.Round(time.Microsecond))
	// Output:
	// expected arrival of 7: 725.833333ms σ: 7.403077ms
	// κ at 725.833333ms: 0.500000
	// κ at 800ms: 1.000242
	// κ at 900ms: 2.000242
	// κ reaches the default 2.5 at: 925.833ms
}
