package lateness_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/lateness"
)

// A live receiver feeds a Meter from its own sweep ticker (or runs
// m.Probe in a goroutine) and waits Bound past a freshness point before it
// convicts. Here the ticks are given: the sweep due at 1 s ran 40 ms late.
func Example() {
	m, err := lateness.New(lateness.Config{})
	if err != nil {
		panic(err)
	}
	m.Tick(990*time.Millisecond, 1000*time.Millisecond)
	m.Tick(1000*time.Millisecond, 1040*time.Millisecond)
	fmt.Println("margin:", m.Bound())
	tau := 1010 * time.Millisecond // a peer's freshness point
	now := 1040 * time.Millisecond
	fmt.Println("convict:", now > tau+m.Bound())
	m.Tick(11500*time.Millisecond, 11501*time.Millisecond) // 10 s on: the 40 ms has left the window
	fmt.Println("margin:", m.Bound())
	// Output:
	// margin: 40ms
	// convict: false
	// margin: 1ms
}
