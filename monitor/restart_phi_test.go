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
// a new incarnation the φ window starts afresh; under the same incarnation
// the 30 s gap is left out by default (it ends while the peer is
// suspected), and enters the window and stretches the freshness point by
// seconds only when SkipIfSuspected is turned off.
func TestRestartDoesNotPoisonPhi(t *testing.T) {
	run := func(restartInc uint64, skip *bool) time.Duration {
		factory := func() (detector.Detector, error) {
			return phi.NewNormal(phi.NormalConfig{WindowSize: 20, Threshold: 8, BootstrapInterval: new(100 * time.Millisecond),
				SkipIfSuspected: skip})
		}
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
	fresh := run(2, nil)           // restarted: window holds two 100 ms intervals
	kept := run(1, nil)            // same incarnation, default: the gap is skipped
	poisoned := run(1, new(false)) // every interval recorded: the 30 s gap is in the window
	assert.Less(t, fresh, 300*time.Millisecond)
	assert.Less(t, kept, 300*time.Millisecond)
	assert.Greater(t, poisoned, 5*time.Second)
}
