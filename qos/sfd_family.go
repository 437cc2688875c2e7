package qos

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/sfd"
)

// SFDFamily sweeps SFD's initial safety margin SM_1 over margins with the other
// settings, including the targets, from cfg (docs/algorithms.md, “SFD, the
// self-tuning detector”, the sweep of [SFD-zh]'s experiments). The margin
// adapts to the QoS the detector measures on its own output, so the curve is
// not linear; but the expected arrivals do not depend on the margin, so Sweep
// runs the NFD-E estimator once for all margins (method SharedEstimator,
// sfd.Margins) and replays each margin's output without it. The result equals
// one replay per margin in every field; Sweep falls back to that for a margin
// sfd.New rejects. Point values are in milliseconds.
func SFDFamily(cfg sfd.Config, margins []time.Duration) Family {
	return Family{
		Name: "sfd", Param: "sm1", Unit: "ms", Values: msValues(margins),
		New: func(v float64) (detector.Detector, error) {
			if v < 0 {
				return nil, fmt.Errorf("initial margin %g ms is negative", v)
			}
			c := cfg
			c.InitialMargin = new(sfdMargin(v))
			return sfd.New(c)
		},
		onePass: func(values []float64, hbs Source, rc Config) ([]*Point, error) {
			return sweepSFD(cfg, values, hbs, rc)
		},
		method: SharedEstimator,
	}
}
