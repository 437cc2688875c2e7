package agent

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/lateness"
	"github.com/stretchr/testify/assert"
)

// The agent measures its host's lateness at every tick of its timer and
// hands the bound to the state machine.
func TestAgentMeasuresHostLateness(t *testing.T) {
	a := start(t, Config{})
	assert.Eventually(t, func() bool {
		return a.Lateness().Stats().Sources[lateness.Timer].Count > 0
	}, 5*time.Second, 10*time.Millisecond, "every tick runs at least a little late")
	var set, bound time.Duration
	done := make(chan struct{})
	a.life.reqs <- func() { set, bound = a.m.HostLateness(), a.clock.late.Bound(); close(done) }
	<-done
	// Only hostTick feeds the meter, and it hands the bound on at once.
	assert.Equal(t, bound, set, "the member holds the meter's bound")
	assert.LessOrEqual(t, bound, lateness.DefaultCap)
}
