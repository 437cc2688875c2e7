package traces_test

import (
	"fmt"

	"github.com/fdkit/fdkit/trace"
	"github.com/fdkit/fdkit/traces"
)

// Summarise the default trace.
func Example() {
	recs, h, err := traces.ReadAll(traces.Default)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := trace.Summarize(recs)
	fmt.Println(traces.Default, h.Interval, h.Meta["preset"])
	fmt.Printf("%d heartbeats over %.0f s, loss %.1f %%, longest burst %d\n",
		s.Records, s.Span.Seconds(), 100*s.LossRate, s.LongestBurst)
	// Output:
	// jitter.fdkit.gz 100ms jitter
	// 2562 heartbeats over 300 s, loss 14.6 %, longest burst 4
}
