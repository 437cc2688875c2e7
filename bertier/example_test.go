package bertier_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

func ExampleDetector() {
	d, err := bertier.New(bertier.Config{
		Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6},
	})
	if err != nil {
		panic(err)
	}
	// The common trace, as in the table of docs/algorithms.md, “Bertier's
	// adaptive margin”.
	for i, at := range []time.Duration{120, 225, 318, 440, 522, 630} {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: at * time.Millisecond})
	}
	tau, _ := d.FreshnessPoint()
	fmt.Println("delay:", d.ErrorFilter().SRTT(), "var:", d.ErrorFilter().RTTVAR())
	fmt.Println("margin:", d.Margin())
	fmt.Println("freshness point:", tau, "warming up:", d.WarmingUp())
	// Output:
	// delay: 1.7015ms var: 3.10655ms
	// margin: 14.1277ms
	// freshness point: 739.961033ms warming up: false
}
