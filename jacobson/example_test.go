package jacobson_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
)

func ExampleDetector() {
	d, err := jacobson.New(jacobson.Config{MinTimeout: 150 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	// The common trace of docs/algorithms.md, “Conventions and the common
	// trace”: Δ = 100 ms, six heartbeats.
	for i, at := range []time.Duration{120, 225, 318, 440, 522, 630} {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: at * time.Millisecond})
	}
	tau, _ := d.FreshnessPoint()
	fmt.Println("SRTT:", d.Estimator().SRTT(), "RTTVAR:", d.Estimator().RTTVAR())
	fmt.Println("timeout:", d.Timeout())
	fmt.Println("freshness point:", tau)
	fmt.Println("suspected at 900ms:", d.Suspected(900*time.Millisecond))
	// Output:
	// SRTT: 103.481445ms RTTVAR: 26.234375ms
	// timeout: 208.418945ms
	// freshness point: 838.418945ms
	// suspected at 900ms: true
}

func ExampleEstimator() {
	// RFC 6298 over ping round-trip times.
	e, err := jacobson.NewEstimator(jacobson.EstimatorConfig{})
	if err != nil {
		panic(err)
	}
	for _, rtt := range []time.Duration{40, 48, 36, 44} {
		e.Update(rtt * time.Millisecond)
	}
	fmt.Println("SRTT:", e.SRTT(), "RTTVAR:", e.RTTVAR(), "RTO:", e.Timeout(4))
	// Output:
	// SRTT: 40.828125ms RTTVAR: 11.40625ms RTO: 86.453125ms
}
