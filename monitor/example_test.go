package monitor_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
)

func Example() {
	clk := &monitor.ManualClock{} // live services leave Clock nil: the monotonic clock
	m, err := monitor.New(monitor.Config{
		Factory: func() (detector.Detector, error) {
			return detector.NewFixed(detector.FixedConfig{Timeout: new(300 * time.Millisecond)})
		},
		Clock: clk,
		OnTransition: func(t monitor.Transition) {
			fmt.Printf("%s: %v -> %v at %v (found at %v)\n", t.Peer, t.Old, t.New, t.At, t.Found)
		},
	})
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		clk.Set(time.Duration(i) * 100 * time.Millisecond)
		_ = m.Heartbeat("node-1", monitor.Beat{Seq: uint64(i), HasSeq: true})
	}
	clk.Set(450 * time.Millisecond)
	st, _ := m.State("node-1")
	fmt.Printf("level %.2f, %v, freshness point %v\n", st.Level, st.Status, st.FreshnessPoint)
	clk.Set(600 * time.Millisecond)
	m.Sweep() // Run calls this from a ticker
	clk.Set(650 * time.Millisecond)
	_ = m.Heartbeat("node-1", monitor.Beat{Seq: 3, HasSeq: true})
	// Output:
	// level 0.83, trusted, freshness point 500ms
	// node-1: trusted -> suspected at 500ms (found at 600ms)
	// node-1: suspected -> trusted at 650ms (found at 650ms)
}
