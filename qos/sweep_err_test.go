package qos

import (
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Curve.Err is the failure of the first value in Values order, whichever
// per-point replay finishes first, so that a sweep on several workers gives
// the same error for one input on every run, not the failure that came
// first in time.
func TestSweepErrIsFirstValue(t *testing.T) {
	f := Family{Name: "f", Param: "x", Values: []float64{1, 2, 3},
		New: func(v float64) (detector.Detector, error) {
			if v == 1 {
				time.Sleep(20 * time.Millisecond) // finishes last
			}
			return nil, fmt.Errorf("no detector for %g", v)
		}}
	hbs := []detector.Heartbeat{{Arrival: 0}, {Arrival: time.Second}}
	for _, w := range []int{1, 3} {
		c, err := Sweep([]Stream{{Name: "s", Heartbeats: hbs}}, []Family{f}, SweepConfig{Workers: w})
		require.NoError(t, err)
		assert.Equal(t, "qos: f x=1: no detector for 1", c[0].Err, "workers %d", w)
		assert.Empty(t, c[0].Points)
	}
}
