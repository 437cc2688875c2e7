package monitor_test

import (
	"context"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostLateMonitor is a monitor of φ 8 (window 100, the phi defaults: σ floor
// μ/100) on a manual clock sharing meter, with a peer that has sent 101
// heartbeats exactly 100 ms apart: τ = 10.1 s + 105.612002 ms.
func hostLateMonitor(t *testing.T, meter *lateness.Meter, ignore bool) (*monitor.Monitor, *monitor.ManualClock, *[]monitor.Transition) {
	t.Helper()
	clk := &monitor.ManualClock{}
	var got []monitor.Transition
	m, err := monitor.New(monitor.Config{
		Factory: func() (detector.Detector, error) {
			return phi.NewNormal(phi.NormalConfig{WindowSize: 100, BootstrapInterval: new(100 * time.Millisecond)})
		},
		Clock: clk, Lateness: meter, IgnoreHostLateness: ignore,
		OnTransition: func(tr monitor.Transition) { got = append(got, tr) },
	})
	require.NoError(t, err)
	for i := range 101 {
		clk.Set(time.Duration(i) * 100 * time.Millisecond)
		require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: uint64(i), HasSeq: true}))
	}
	st, _ := m.State("p")
	require.Equal(t, 10*time.Second+105612002*time.Nanosecond, st.FreshnessPoint)
	return m, clk, &got
}

// A heartbeat that the receiving host itself held up is not a mistake: with
// the host measured 40 ms late (a sweep that ran 40 ms after it was due), a
// heartbeat 20 ms past τ leaves the peer trusted and is counted as excused,
// where the monitor without the margin (and before it existed) suspected the
// peer at τ and trusted it again 20 ms later.
func TestHostLatenessExcusesALateHeartbeat(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		meter, err := lateness.New(lateness.Config{})
		require.NoError(t, err)
		m, clk, got := hostLateMonitor(t, meter, ignore)
		meter.Tick(10*time.Second, 10*time.Second+40*time.Millisecond)
		require.Equal(t, 40*time.Millisecond, m.Lateness().Bound())
		tau := 10*time.Second + 105612002*time.Nanosecond
		clk.Set(tau + 20*time.Millisecond)
		m.Sweep()
		require.NoError(t, m.Heartbeat("p", monitor.Beat{Seq: 101, HasSeq: true}))
		if ignore {
			require.Len(t, *got, 2, "IgnoreHostLateness: the replay's mistake")
			assert.Equal(t, tau, (*got)[0].At)
			assert.Equal(t, monitor.Suspected, (*got)[0].New)
			assert.Zero(t, m.Excused())
			continue
		}
		assert.Empty(t, *got, "no suspicion: the host's lateness covers the heartbeat's")
		assert.Equal(t, uint64(1), m.Excused())
	}
}

// A crash is still detected, Bound after τ; the suspicion takes effect at τ
// (Transition.At), found once the margin has passed.
func TestHostLatenessDelaysDetectionByBound(t *testing.T) {
	meter, err := lateness.New(lateness.Config{})
	require.NoError(t, err)
	m, clk, got := hostLateMonitor(t, meter, false)
	meter.Observe(10*time.Second, 30*time.Millisecond, lateness.Scheduling)
	tau := 10*time.Second + 105612002*time.Nanosecond
	clk.Set(tau + 30*time.Millisecond)
	m.Sweep()
	assert.Empty(t, *got, "at τ + Bound: still held")
	clk.Set(tau + 30*time.Millisecond + 1)
	m.Sweep()
	require.Len(t, *got, 1)
	assert.Equal(t, monitor.Suspected, (*got)[0].New)
	assert.Equal(t, tau, (*got)[0].At)
	assert.Equal(t, tau+30*time.Millisecond+1, (*got)[0].Found)
}

// Run feeds the monitor's own meter: its sweeps' lateness and the runtime's
// histograms.
func TestRunFeedsLateness(t *testing.T) {
	m, err := monitor.New(monitor.Config{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	require.NoError(t, m.Run(ctx, 5*time.Millisecond))
	st := m.Lateness().Stats()
	assert.Positive(t, st.Sources[lateness.Timer].Count, "every sweep runs at least a little late")
	assert.Equal(t, lateness.DefaultWindow, st.Window)
}
