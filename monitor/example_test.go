package monitor_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
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

// A receiver that sweeps several monitors from a loop of its own shares one
// lateness meter among them and feeds it on each tick: on a real ticker,
// meter.TickSince(due, clock.Now()) with the instant the tick was due, and
// meter.ReadRuntime(clock.Now()) about once a second. Each monitor then
// waits the host's lateness past a freshness point before it convicts, and
// Excused counts the late heartbeats that wait saved.
func ExampleMonitor_Lateness() {
	clk := &monitor.ManualClock{}
	meter, err := lateness.New(lateness.Config{}) // lateness of the last 10 s, at most 5 s
	if err != nil {
		panic(err)
	}
	m, err := monitor.New(monitor.Config{
		Factory: func() (detector.Detector, error) {
			return detector.NewFixed(detector.FixedConfig{Timeout: new(300 * time.Millisecond)})
		},
		Clock:    clk,
		Lateness: meter,
		OnTransition: func(t monitor.Transition) {
			fmt.Printf("%s: %v -> %v at %v\n", t.Peer, t.Old, t.New, t.At)
		},
	})
	if err != nil {
		panic(err)
	}
	_ = m.Heartbeat("node-1", monitor.Beat{Seq: 0, HasSeq: true})
	// The sweep due at 100 ms ran at 150 ms: the host was 50 ms late.
	clk.Set(150 * time.Millisecond)
	m.Lateness().Tick(100*time.Millisecond, clk.Now())
	m.Sweep()
	// τ = 300 ms has passed, but by less than the host's lateness.
	clk.Set(320 * time.Millisecond)
	m.Sweep()
	// A heartbeat 40 ms past τ: within the host's lateness, not a mistake.
	clk.Set(340 * time.Millisecond)
	_ = m.Heartbeat("node-1", monitor.Beat{Seq: 1, HasSeq: true})
	st := m.Lateness().Stats()
	fmt.Println("margin", st.Bound, "timer max", st.Sources[lateness.Timer].Max, "excused", m.Excused())
	// Output:
	// margin 50ms timer max 50ms excused 1
}
