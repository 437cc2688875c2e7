package swim_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/swim"
)

// The default per-peer detector of a member with a 1 s period, fed a peer
// heard exactly once a period: a gap of three periods is still trusted,
// the freshness point is μ + 3 periods + (period/10)·z(8) after the last
// heartbeat; at 5 s, z = (5 − 1 − 3)/0.1 = 10 and φ = −log10 Q(10) ≈ 23.
func ExampleDefaultPeerDetectorFor() {
	d, err := swim.DefaultPeerDetectorFor(time.Second)()
	if err != nil {
		panic(err)
	}
	last := time.Duration(0)
	for i := range swim.DefaultPeerWindow + 1 {
		last = time.Duration(i) * time.Second
		d.Observe(detector.Heartbeat{Arrival: last})
	}
	tau, _ := d.FreshnessPoint()
	a := d.(detector.Accrual)
	fmt.Printf("τ − T_last = %v\n", (tau - last).Round(time.Millisecond))
	fmt.Printf("after 3 s: φ = %.3f, suspected %v\n", a.Level(last+3*time.Second), d.Suspected(last+3*time.Second))
	fmt.Printf("after 5 s: φ = %.0f, suspected %v\n", a.Level(last+5*time.Second), d.Suspected(last+5*time.Second))
	// Output:
	// τ − T_last = 4.561s
	// after 3 s: φ = 0.000, suspected false
	// after 5 s: φ = 23, suspected true
}
