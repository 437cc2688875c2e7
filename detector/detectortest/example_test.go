package detectortest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/detector/detectortest"
)

// A detector package checks its detector against the kit from a test
// function; the fixed timeout promises that τ never moves backwards and
// that it needs no warm-up, and its swept parameter is T.
func ExampleRun() {
	const timeout = 300 * time.Millisecond
	test := func(t *testing.T) {
		detectortest.Run(t, func() detector.Detector {
			d, err := detector.NewFixed(detector.FixedConfig{Timeout: new(timeout)})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}, detectortest.Config{
			LinearParam:      float64(timeout),
			TauNonDecreasing: true,
			NoWarmUp:         true,
		})
	}
	_ = test // in a _test.go file: func TestFixedConformance(t *testing.T) { … }
}

// Benchmark is the standard Observe-and-query loop, so that the benchmarks
// of the detector packages measure the same thing.
func ExampleBenchmark() {
	d, err := detector.NewFixed(detector.FixedConfig{Timeout: new(time.Second)})
	if err != nil {
		panic(err)
	}
	r := testing.Benchmark(func(b *testing.B) { detectortest.Benchmark(b, d) })
	fmt.Println("ran:", r.N > 0)
	// Output: ran: true
}
