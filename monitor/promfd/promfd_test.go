package promfd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/monitor/promfd"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newMonitor(t *testing.T, clk monitor.Clock) *monitor.Monitor {
	t.Helper()
	m, err := monitor.New(monitor.Config{Clock: clk, Factory: func() (detector.Detector, error) {
		return detector.NewFixed(detector.FixedConfig{Timeout: new(400 * time.Millisecond)})
	}})
	require.NoError(t, err)
	return m
}

func TestCollector(t *testing.T) {
	clk := &monitor.ManualClock{}
	m := newMonitor(t, clk)
	m.Lateness().Observe(0, 20*time.Millisecond, lateness.GCPause) // a margin of 20 ms
	require.NoError(t, m.Heartbeat("a", monitor.Beat{}))
	require.NoError(t, m.Heartbeat("b", monitor.Beat{}))
	clk.Set(500 * time.Millisecond)
	require.NoError(t, m.Heartbeat("b", monitor.Beat{}))
	clk.Set(600 * time.Millisecond) // a: suspected since 400 ms; b: suspected 400–500 ms, level 0.25 now

	c, err := promfd.New(m, promfd.Config{ConstLabels: prometheus.Labels{"detector": "fixed400ms"}})
	require.NoError(t, err)
	want := `
# HELP fdkit_monitor_peers Number of monitored peers.
# TYPE fdkit_monitor_peers gauge
fdkit_monitor_peers{detector="fixed400ms"} 2
# HELP fdkit_peer_freshness_seconds Seconds until the peer's freshness point; negative once it has passed.
# TYPE fdkit_peer_freshness_seconds gauge
fdkit_peer_freshness_seconds{detector="fixed400ms",peer="a"} -0.2
fdkit_peer_freshness_seconds{detector="fixed400ms",peer="b"} 0.3
# HELP fdkit_peer_heartbeats Heartbeats accepted from the peer in its current incarnation.
# TYPE fdkit_peer_heartbeats gauge
fdkit_peer_heartbeats{detector="fixed400ms",peer="a"} 1
fdkit_peer_heartbeats{detector="fixed400ms",peer="b"} 2
# HELP fdkit_peer_suspected 1 when the peer is suspected, 0 when trusted.
# TYPE fdkit_peer_suspected gauge
fdkit_peer_suspected{detector="fixed400ms",peer="a"} 1
fdkit_peer_suspected{detector="fixed400ms",peer="b"} 0
# HELP fdkit_peer_suspicion_level Suspicion level of the peer (phi for phi detectors, elapsed time over timeout for binary detectors).
# TYPE fdkit_peer_suspicion_level gauge
fdkit_peer_suspicion_level{detector="fixed400ms",peer="a"} 1.5
fdkit_peer_suspicion_level{detector="fixed400ms",peer="b"} 0.25
# HELP fdkit_peer_suspicions_total Trusted to suspected transitions of the peer since it was first seen.
# TYPE fdkit_peer_suspicions_total counter
fdkit_peer_suspicions_total{detector="fixed400ms",peer="a"} 1
fdkit_peer_suspicions_total{detector="fixed400ms",peer="b"} 1
# HELP fdkit_peer_transitions_total Status transitions of the peer since it was first seen.
# TYPE fdkit_peer_transitions_total counter
fdkit_peer_transitions_total{detector="fixed400ms",peer="a"} 1
fdkit_peer_transitions_total{detector="fixed400ms",peer="b"} 2
# HELP fdkit_monitor_local_pauses_total Local pauses of the monitor detected by the local-pause guard.
# TYPE fdkit_monitor_local_pauses_total counter
fdkit_monitor_local_pauses_total{detector="fixed400ms"} 0
# HELP fdkit_monitor_backward_arrivals_total Heartbeats dropped because they arrived no later than their peer's newest (a clock that went backwards); none became a sample.
# TYPE fdkit_monitor_backward_arrivals_total counter
fdkit_monitor_backward_arrivals_total{detector="fixed400ms"} 0
# HELP fdkit_monitor_excused_total Heartbeats that arrived after their peer's freshness point while the monitor held the conviction back (host-lateness margin or local-pause grace).
# TYPE fdkit_monitor_excused_total counter
fdkit_monitor_excused_total{detector="fixed400ms"} 0
# HELP fdkit_host_lateness_seconds The host's lateness bound in force: the largest lateness measured over the meter's window, the margin the failure detectors wait past a freshness point before they convict.
# TYPE fdkit_host_lateness_seconds gauge
fdkit_host_lateness_seconds{detector="fixed400ms"} 0.02
# HELP fdkit_host_lateness_max_seconds The largest lateness of the host measured from this source since the meter was made.
# TYPE fdkit_host_lateness_max_seconds gauge
fdkit_host_lateness_max_seconds{detector="fixed400ms",source="gc-pause"} 0.02
fdkit_host_lateness_max_seconds{detector="fixed400ms",source="other-pause"} 0
fdkit_host_lateness_max_seconds{detector="fixed400ms",source="scheduling"} 0
fdkit_host_lateness_max_seconds{detector="fixed400ms",source="timer"} 0
# HELP fdkit_host_lateness_measurements_total Lateness measurements of the host from this source.
# TYPE fdkit_host_lateness_measurements_total counter
fdkit_host_lateness_measurements_total{detector="fixed400ms",source="gc-pause"} 1
fdkit_host_lateness_measurements_total{detector="fixed400ms",source="other-pause"} 0
fdkit_host_lateness_measurements_total{detector="fixed400ms",source="scheduling"} 0
fdkit_host_lateness_measurements_total{detector="fixed400ms",source="timer"} 0
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	n, err := testutil.GatherAndCount(reg, "fdkit_peer_suspected")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	// Nothing else is collected: as many samples as want lists.
	assert.Equal(t, strings.Count(want, "\nfdkit_"), testutil.CollectAndCount(c))

	_, err = promfd.New(nil, promfd.Config{})
	assert.Error(t, err)
}

// A Lateness without a meter describes its metrics and exports none.
func TestLatenessWithoutMeter(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(promfd.NewLateness(nil, promfd.Config{})))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Zero(t, n)
}
