package sfd_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
)

func ExampleDetector() {
	d, err := sfd.New(sfd.Config{
		Estimator:      chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 10},
		InitialMargin:  new(10 * time.Millisecond),
		Step:           10 * time.Millisecond,
		SlotHeartbeats: 20,
		Targets:        sfd.Targets{MaxTD: 300 * time.Millisecond, MaxMistakesPerSecond: 0.05, MinQAP: 0.99},
	})
	if err != nil {
		panic(err)
	}
	// Heartbeats every 100 ms with a 30 ms delay; every 4th is 50 ms late.
	for i := 1; i <= 70; i++ {
		at := time.Duration(100*i+30) * time.Millisecond
		if i%4 == 0 {
			at += 50 * time.Millisecond
		}
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: at})
		if i > 10 && (i-10)%20 == 0 {
			st := d.Status()
			fmt.Printf("slot %d: %v, SM %v, %d mistakes\n", st.Slots, st.LastRule, st.SafetyMargin, st.Mistakes)
		}
	}
	// Output:
	// slot 1: rule 3 (+β), SM 20ms, 5 mistakes
	// slot 2: rule 3 (+β), SM 30ms, 10 mistakes
	// slot 3: rule 3 (+β), SM 40ms, 15 mistakes
}
