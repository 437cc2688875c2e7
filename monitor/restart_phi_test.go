package monitor_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A long outage followed by a restart must not poison the statistics: with
// a new incarnation the φ window starts afresh, while under the same
// incarnation the 30 s gap enters the window and stretches the freshness
// point by seconds.
func TestRestartDoesNotPoisonPhi(t *testing.T) {
	factory := func() (detector.Detector, error) {
		return phi.NewNormal(phi.NormalConfig{WindowSize: 20, Threshold: 8, BootstrapInterval: 100 * time.Millisecond})
	}
	run := func(restartInc uint64) time.Duration {
		clk := &monitor.ManualClock{}
		m, err := monitor.New(monitor.Config{Factory: factory, Clock: clk})
		require.NoError(t, err)
		at := time.Duration(0)
		for i := range 20 {
			clk.Set(at)
			require.NoError(t, m.Heartbeat("p", monitor.Beat{Incarnation: 1, Seq: uint64(i), HasSeq: true}))
			at += 100 * time.Millisecond
		}
		at += 30 * time.Second // outage
		for i := range 3 {
			clk.Set(at)
			require.NoError(t, m.Heartbeat("p", monitor.Beat{Incarnation: restartInc, Seq: uint64(100 + i), HasSeq: true}))
			at += 100 * time.Millisecond
		}
		st, _ := m.State("p")
		require.True(t, st.HasFreshnessPoint)
		return st.FreshnessPoint - st.LastArrival
	}
	fresh := run(2)    // restarted: window holds two 100 ms intervals
	poisoned := run(1) // same incarnation: the 30 s gap is in the window
	assert.Less(t, fresh, 300*time.Millisecond)
	assert.Greater(t, poisoned, 5*time.Second)
}
