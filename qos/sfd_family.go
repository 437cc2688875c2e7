package qos

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
)

// SFDFamily sweeps SFD's initial safety margin SM_1 over margins with the
// other settings, including the targets, from cfg (ALGORITHMS.md §6, the
// sweep of [SFD-zh]'s experiments). The margin adapts to the QoS the
// detector measures on its own output, so every point is a replay of its
// own. Point values are in milliseconds.
func SFDFamily(cfg sfd.Config, margins []time.Duration) Family {
	return Family{
		Name: "sfd", Param: "SM1", Unit: "ms", Values: msValues(margins),
		New: func(v float64) (detector.Detector, error) {
			if v < 0 {
				return nil, fmt.Errorf("initial margin %g ms is negative", v)
			}
			c := cfg
			c.InitialMargin = durMS(v)
			if c.InitialMargin == 0 {
				c.InitialMargin = 1 // sfd treats 0 as "default Δ"
			}
			return sfd.New(c)
		},
	}
}
