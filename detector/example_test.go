package detector_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
)

func ExampleFixed() {
	d, err := detector.NewFixed(detector.FixedConfig{Timeout: new(300 * time.Millisecond)})
	if err != nil {
		panic(err)
	}
	for i, at := range []time.Duration{120, 225, 318} {
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: at * time.Millisecond})
	}
	tau, _ := d.FreshnessPoint()
	fmt.Println("freshness point:", tau)
	fmt.Println("suspected at 600ms:", d.Suspected(600*time.Millisecond))
	fmt.Println("suspected at 700ms:", d.Suspected(700*time.Millisecond))
	// Output:
	// freshness point: 618ms
	// suspected at 600ms: false
	// suspected at 700ms: true
}
