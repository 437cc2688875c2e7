package sim_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/sim"
)

// Eight members with the default configuration; one crashes at 10 s and
// every other member declares it dead. The run is deterministic for the
// seed.
func Example() {
	s, err := sim.New(sim.Config{N: 8, Seed: 1})
	if err != nil {
		panic(err)
	}
	declared := 0
	s.SetEventHook(func(now time.Duration, observer int, ev swim.Event) {
		if ev.Kind == swim.EventDead {
			declared++
			if declared == 7 {
				fmt.Printf("%s declared dead by all 7 others at %v\n", ev.Node.ID, now.Round(time.Second))
			}
		}
	})
	s.At(10*time.Second, func() { s.Crash(3) })
	s.RunUntil(60 * time.Second)
	st := s.Stats(0)
	fmt.Printf("member 0 sent %d messages in 60 periods\n", st.SentMsgs)
	// Output:
	// m0003 declared dead by all 7 others at 15s
	// member 0 sent 142 messages in 60 periods
}
