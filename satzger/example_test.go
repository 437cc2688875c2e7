package satzger_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/satzger"
)

func ExampleDetector() {
	d, err := satzger.New(satzger.Config{WindowSize: 10, Threshold: 0.5, Scale: 0.9})
	if err != nil {
		panic(err)
	}
	// docs/algorithms.md's common trace: intervals 105, 93, 122, 82, 108 ms.
	for i, at := range []time.Duration{120, 225, 318, 440, 522, 630} {
		d.Observe(detector.Heartbeat{Seq: uint64(i + 1), HasSeq: true, Arrival: at * time.Millisecond})
	}
	for _, e := range []time.Duration{100, 120, 150} {
		fmt.Printf("level %v after the last heartbeat: %.1f\n", e*time.Millisecond, d.Level(630*time.Millisecond+e*time.Millisecond))
	}
	tau, _ := d.FreshnessPoint()
	fmt.Println("freshness point:", tau)
	// Output:
	// level 100ms after the last heartbeat: 0.2
	// level 120ms after the last heartbeat: 0.8
	// level 150ms after the last heartbeat: 1.0
	// freshness point: 746.666667ms
}
