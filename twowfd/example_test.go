package twowfd_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/twowfd"
)

func ExampleDetector() {
	d, err := twowfd.New(twowfd.Config{
		Interval: 100 * time.Millisecond, ShortWindowSize: 1, LongWindowSize: 6, Margin: new(50 * time.Millisecond),
	})
	if err != nil {
		panic(err)
	}
	// docs/algorithms.md's common trace, heartbeat 4 lost; then heartbeat 7
	// arrives 70 ms late.
	for _, h := range []struct {
		seq uint64
		at  time.Duration
	}{{1, 120}, {2, 225}, {3, 318}, {5, 522}, {6, 630}, {7, 800}} {
		d.Observe(detector.Heartbeat{Seq: h.seq, HasSeq: true, Arrival: h.at * time.Millisecond})
		if h.seq >= 6 {
			tau, _ := d.FreshnessPoint()
			fmt.Printf("after %d: EA short %v, EA long %v, τ %v\n", h.seq, d.Short().Next(), d.Long().Next(), tau)
		}
	}
	// Output:
	// after 6: EA short 730ms, EA long 723ms, τ 780ms
	// after 7: EA short 900ms, EA long 835.833333ms, τ 950ms
}
