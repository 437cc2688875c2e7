package promswim_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/agent/promswim"
	"github.com/fdkit/fdkit/swim/transport"
)

func TestCollector(t *testing.T) {
	as := pair(t)
	c := promswim.NewCollector(as[0])
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	peer := string(as[1].Self().ID)
	want := `
# HELP fdswim_members Members per state in the local view, this member included.
# TYPE fdswim_members gauge
fdswim_members{state="alive"} 2
fdswim_members{state="dead"} 0
fdswim_members{state="left"} 0
fdswim_members{state="suspect"} 0
# HELP fdswim_peer_state 1 for the peer's current membership state.
# TYPE fdswim_peer_state gauge
fdswim_peer_state{peer="` + peer + `",state="alive"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "fdswim_members", "fdswim_peer_state"))
	n, err := testutil.GatherAndCount(reg, "fdswim_peer_suspicion_level", "fdswim_packets_sent_total", "fdswim_auth_failures_total")
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	// A pair that just formed: the peer's detector has a handful of
	// intervals at most, fewer than swim.DefaultPeerMinSamples.
	warm := `
# HELP fdswim_peer_detector_warming_up 1 while the peer's failure detector rests on too few inter-arrival times for its level to mean much (swim.PeerStatus.WarmingUp).
# TYPE fdswim_peer_detector_warming_up gauge
fdswim_peer_detector_warming_up{peer="` + peer + `"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(warm), "fdswim_peer_detector_warming_up"))
	// usr27's F4: the local health multiplier, memberlist's health score,
	// exported as a gauge: the agent's value, read around the gathering
	// (a loaded test machine may move it meanwhile).
	before := as[0].LocalHealthMultiplier()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	after := as[0].LocalHealthMultiplier()
	var lhm []float64
	for _, mf := range mfs {
		if mf.GetName() == "fdswim_local_health_multiplier" {
			assert.Equal(t, "Lifeguard's local health multiplier (memberlist's health score): 0 when healthy; each step lengthens this member's probe timeouts and interval (Agent.LocalHealthMultiplier).", mf.GetHelp())
			for _, m := range mf.GetMetric() {
				lhm = append(lhm, m.GetGauge().GetValue())
			}
		}
	}
	require.Len(t, lhm, 1, "one fdswim_local_health_multiplier gauge")
	assert.GreaterOrEqual(t, lhm[0], float64(min(before, after)))
	assert.LessOrEqual(t, lhm[0], float64(max(before, after)))

	// A stopped agent still exports its counters, and no view.
	require.NoError(t, as[0].Close())
	n, err = testutil.GatherAndCount(reg, "fdswim_members", "fdswim_packets_sent_total")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// fast is a protocol configuration for tests on loopback.
func fast() swim.Config {
	return swim.Config{ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond}
}

// pair starts two plain agents on loopback and waits until both see both.
func pair(t *testing.T) []*agent.Agent {
	t.Helper()
	var as []*agent.Agent
	for i := 0; i < 2; i++ {
		a, err := agent.Start(context.Background(), agent.Config{Plain: true, Seed: uint64(i + 1), Protocol: fast(),
			LeaveTimeout: new(300 * time.Millisecond)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = a.Close() })
		as = append(as, a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, as[1].Join(ctx, as[0].Self().Addr))
	require.Eventually(t, func() bool {
		for _, a := range as {
			n := 0
			for _, m := range a.Members() {
				if m.State == swim.StateAlive {
					n++
				}
			}
			if n != 2 {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "full view")
	return as
}

// An oversized datagram dropped by the transport shows in the metrics.
func TestOversizeDropsExported(t *testing.T) {
	a, err := agent.Start(context.Background(), agent.Config{Plain: true, Protocol: fast()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	u, err := transport.Listen(transport.Config{MaxPacketSize: 2000})
	require.NoError(t, err)
	defer u.Close()
	require.NoError(t, u.Send(netip.MustParseAddrPort(a.Self().Addr), make([]byte, 1401)))
	require.Eventually(t, func() bool { return a.Stats().DroppedOversize == 1 }, 3*time.Second, 10*time.Millisecond)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(promswim.NewCollector(a)))
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP fdswim_dropped_oversize_total Received datagrams dropped by the transport for exceeding the maximum packet size.
# TYPE fdswim_dropped_oversize_total counter
fdswim_dropped_oversize_total 1
`), "fdswim_dropped_oversize_total"))
}

// TestCollectorHostLateness: the host's lateness the agent measures is
// exported as promfd exports the monitor's: the bound in force, and
// the largest lateness and the count of measurements per source.
func TestCollectorHostLateness(t *testing.T) {
	a, err := agent.Start(context.Background(), agent.Config{Plain: true, TickInterval: 10 * time.Millisecond})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return a.Lateness().Stats().Sources[lateness.Timer].Count >= 3 },
		5*time.Second, 10*time.Millisecond, "the agent's ticks feed the meter")
	require.NoError(t, a.Shutdown()) // nothing feeds the meter from here on
	// A stop-the-world pause of 1.5 s an hour after the start: the newest
	// measurement, alone in the window, so it is the bound.
	a.Lateness().Observe(time.Hour, 1500*time.Millisecond, lateness.OtherPause)
	st := a.Lateness().Stats()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(promswim.NewCollector(a)))
	want := fmt.Sprintf(`
# HELP fdswim_host_lateness_seconds The host's lateness bound in force: the largest lateness measured over the meter's window, the margin the failure detectors wait past a freshness point before they convict.
# TYPE fdswim_host_lateness_seconds gauge
fdswim_host_lateness_seconds 1.5
# HELP fdswim_host_lateness_max_seconds The largest lateness of the host measured from this source since the meter was made.
# TYPE fdswim_host_lateness_max_seconds gauge
fdswim_host_lateness_max_seconds{source="gc-pause"} %v
fdswim_host_lateness_max_seconds{source="other-pause"} 1.5
fdswim_host_lateness_max_seconds{source="scheduling"} %v
fdswim_host_lateness_max_seconds{source="timer"} %v
# HELP fdswim_host_lateness_measurements_total Lateness measurements of the host from this source.
# TYPE fdswim_host_lateness_measurements_total counter
fdswim_host_lateness_measurements_total{source="gc-pause"} %d
fdswim_host_lateness_measurements_total{source="other-pause"} %d
fdswim_host_lateness_measurements_total{source="scheduling"} %d
fdswim_host_lateness_measurements_total{source="timer"} %d
`, st.Sources[lateness.GCPause].Max.Seconds(), st.Sources[lateness.Scheduling].Max.Seconds(), st.Sources[lateness.Timer].Max.Seconds(),
		st.Sources[lateness.GCPause].Count, st.Sources[lateness.OtherPause].Count, st.Sources[lateness.Scheduling].Count, st.Sources[lateness.Timer].Count)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"fdswim_host_lateness_seconds", "fdswim_host_lateness_max_seconds", "fdswim_host_lateness_measurements_total"))
	assert.GreaterOrEqual(t, st.Sources[lateness.Timer].Count, uint64(3))
}
