package chen_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

func ExampleDetector() {
	d, err := chen.New(chen.Config{
		Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6},
		Margin:    50 * time.Millisecond,
	})
	if err != nil {
		panic(err)
	}
	// ALGORITHMS.md's common trace with heartbeat 4 lost.
	for _, h := range []struct {
		seq uint64
		at  time.Duration
	}{{1, 120}, {2, 225}, {3, 318}, {5, 522}, {6, 630}} {
		d.Observe(detector.Heartbeat{Seq: h.seq, HasSeq: true, Arrival: h.at * time.Millisecond})
	}
	tau, _ := d.FreshnessPoint()
	fmt.Println("expected arrival of 7:", d.Estimator().Next())
	fmt.Println("freshness point:", tau, "warming up:", d.WarmingUp())
	fmt.Println("suspected at 780ms:", d.Suspected(780*time.Millisecond))
	// Output:
	// expected arrival of 7: 723ms
	// freshness point: 773ms warming up: true
	// suspected at 780ms: true
}
