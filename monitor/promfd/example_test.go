package promfd_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/monitor/promfd"
	"github.com/prometheus/client_golang/prometheus"
)

func Example() {
	clk := &monitor.ManualClock{}
	m, _ := monitor.New(monitor.Config{Clock: clk}) // fixed 1 s timeout
	_ = m.Heartbeat("node-1", monitor.Beat{})
	clk.Set(1500 * time.Millisecond)

	c, _ := promfd.New(m, promfd.Config{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c) // serve it with promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	families, _ := reg.Gather()
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			if g := mt.GetGauge(); g != nil && f.GetName() != "fdkit_peer_freshness_seconds" {
				fmt.Println(f.GetName(), g.GetValue())
			}
		}
	}
	// Output:
	// fdkit_host_lateness_max_seconds 0
	// fdkit_host_lateness_max_seconds 0
	// fdkit_host_lateness_max_seconds 0
	// fdkit_host_lateness_max_seconds 0
	// fdkit_host_lateness_seconds 0
	// fdkit_monitor_peers 1
	// fdkit_peer_heartbeats 1
	// fdkit_peer_suspected 1
	// fdkit_peer_suspicion_level 1.5
}
