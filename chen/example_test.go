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
		Margin:    new(50 * time.Millisecond),
	})
	if err != nil {
		panic(err)
	}
	// The common trace of docs/algorithms.md with heartbeat 4 lost.
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

func ExampleEstimator() {
	e, err := chen.NewEstimator(chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 6})
	if err != nil {
		panic(err)
	}
	for _, h := range []detector.Heartbeat{
		{Seq: 1, HasSeq: true, Arrival: 120 * time.Millisecond},
		{Seq: 2, HasSeq: true, Arrival: 225 * time.Millisecond},
		{Seq: 2, HasSeq: true, Arrival: 230 * time.Millisecond}, // duplicate
		{Seq: 4, HasSeq: true, Arrival: 440 * time.Millisecond}, // 3 lost
		{Seq: 3, HasSeq: true, Arrival: 460 * time.Millisecond}, // 3 arrives late
	} {
		fmt.Println(h.Seq, e.Observe(h))
	}
	fmt.Println("EA_5:", e.Next(), "EA_9:", e.ExpectedArrival(9))
	// Output:
	// 1 fresh
	// 2 fresh
	// 2 duplicate
	// 4 fresh
	// 3 late
	// EA_5: 561.25ms EA_9: 961.25ms
}
