package swim_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// A member whose only peer never answers: the driver ticks it at the
// instants NextDeadline asks for and prints what it sends and decides. Each
// failed probe (no ping-req intermediates, so no nacks) raises the local
// health multiplier, which stretches the period (1 s, then 2 s, then 3 s);
// in a group of two the suspicion timeout is Min = 4·1 s at once. The
// suspicion goes to b at once in a gossip packet (eager dissemination), so
// that b, were it alive, could refute it. Left with nobody alive, a asks
// the dead b for its view each period (a join), in case b was only cut off.
func Example() {
	// SyncProbes: the first probe at the first Tick, so that the times
	// below fall on whole periods (by default it comes at a random point
	// of the first period).
	a, err := swim.New(swim.Config{Self: swim.Node{ID: "a", Addr: "10.0.0.1:7946"}, SyncProbes: true},
		rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		panic(err)
	}
	a.Bootstrap([]swim.Node{{ID: "b", Addr: "10.0.0.2:7946"}})
	for {
		at, ok := a.NextDeadline()
		if !ok || at > 6*time.Second {
			break
		}
		a.Tick(at)
		r := a.Ready()
		for _, p := range r.Packets {
			fmt.Printf("%v: send %v to %s\n", at, p.Kind, p.To.ID)
		}
		for _, e := range r.Events {
			fmt.Printf("%v: %s is %v (incarnation %d, by %s)\n", at, e.Node.ID, e.Kind, e.Incarnation, e.From)
		}
	}
	fmt.Println("local health multiplier:", a.LocalHealthMultiplier())
	// Output:
	// 0s: send ping to b
	// 1s: send gossip to b
	// 1s: send ping to b
	// 1s: b is suspect (incarnation 0, by a)
	// 3s: send ping to b
	// 5s: b is dead (incarnation 0, by a)
	// 6s: send join to b
	// local health multiplier: 3
}
