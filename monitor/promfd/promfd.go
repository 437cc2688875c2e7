// Package promfd exports a monitor.Monitor's per-peer state as Prometheus
// metrics (github.com/prometheus/client_golang). It is a separate package so
// that the monitor itself does not depend on Prometheus.
//
// Metrics (with Namespace "fdkit", the default):
//
//	fdkit_peer_suspicion_level{peer}     gauge: the suspicion level (φ for φ detectors,
//	                                     elapsed/timeout for binary ones; may be +Inf)
//	fdkit_peer_suspected{peer}           gauge: 1 when suspected, 0 when trusted
//	fdkit_peer_freshness_seconds{peer}   gauge: time left until the freshness point
//	                                     (negative once passed); absent without one
//	fdkit_peer_transitions_total{peer}   counter: status transitions since first seen
//	fdkit_peer_suspicions_total{peer}    counter: trusted → suspected transitions
//	fdkit_peer_heartbeats{peer}          gauge: heartbeats accepted in the current incarnation
//	fdkit_monitor_peers                  gauge: peers monitored
//	fdkit_monitor_local_pauses_total     counter: local pauses detected by the guard
//	fdkit_monitor_excused_total          counter: late heartbeats whose conviction the host-lateness
//	                                     margin or a pause grace held back (Monitor.Excused)
//	fdkit_host_lateness_seconds          gauge: the host's lateness bound in force, the margin the
//	                                     monitor waits past a freshness point (lateness.Meter.Bound)
//	fdkit_host_lateness_max_seconds{source}  gauge: the largest lateness measured per source (timer,
//	                                     gc-pause, other-pause, scheduling) since the meter was made
//	fdkit_host_lateness_measurements_total{source}  counter: lateness measurements per source
//
// Each scrape evaluates every peer once (Monitor.Snapshot), which also
// finds and delivers pending transitions.
package promfd

import (
	"cmp"
	"errors"

	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Collector. The zero value means the defaults.
type Config struct {
	// Namespace prefixes every metric name. Default "fdkit".
	Namespace string
	// ConstLabels are added to every metric, for example
	// {"detector": "phi8"} to register several monitors side by side.
	ConstLabels prometheus.Labels
}

// Collector is a prometheus.Collector for one Monitor.
type Collector struct {
	m                                         *monitor.Monitor
	level, suspected, fresh, trans, susp, hbs *prometheus.Desc
	peers, pauses, backward, excused          *prometheus.Desc
	late                                      *Lateness
}

// New returns a Collector for m, or an error when m is nil.
func New(m *monitor.Monitor, o Config) (*Collector, error) {
	if m == nil {
		return nil, errors.New("promfd: nil monitor")
	}
	d := o.desc
	return &Collector{
		m:         m,
		late:      NewLateness(m.Lateness(), o),
		level:     d("peer_suspicion_level", "Suspicion level of the peer (phi for phi detectors, elapsed time over timeout for binary detectors).", "peer"),
		suspected: d("peer_suspected", "1 when the peer is suspected, 0 when trusted.", "peer"),
		fresh:     d("peer_freshness_seconds", "Seconds until the peer's freshness point; negative once it has passed.", "peer"),
		trans:     d("peer_transitions_total", "Status transitions of the peer since it was first seen.", "peer"),
		susp:      d("peer_suspicions_total", "Trusted to suspected transitions of the peer since it was first seen.", "peer"),
		hbs:       d("peer_heartbeats", "Heartbeats accepted from the peer in its current incarnation.", "peer"),
		peers:     d("monitor_peers", "Number of monitored peers."),
		pauses:    d("monitor_local_pauses_total", "Local pauses of the monitor detected by the local-pause guard."),
		backward:  d("monitor_backward_arrivals_total", "Heartbeats dropped because they arrived no later than their peer's newest (a clock that went backwards); none became a sample."),
		excused:   d("monitor_excused_total", "Heartbeats that arrived after their peer's freshness point while the monitor held the conviction back (host-lateness margin or local-pause grace)."),
	}, nil
}

// Describe sends the descriptors of all metrics.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.level, c.suspected, c.fresh, c.trans, c.susp, c.hbs, c.peers, c.pauses, c.backward, c.excused} {
		ch <- d
	}
	c.late.Describe(ch)
}

// Collect evaluates every peer and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	states := c.m.Snapshot()
	for _, s := range states {
		ch <- prometheus.MustNewConstMetric(c.level, prometheus.GaugeValue, s.Level, s.Peer)
		sus := 0.0
		if s.Status == monitor.Suspected {
			sus = 1
		}
		ch <- prometheus.MustNewConstMetric(c.suspected, prometheus.GaugeValue, sus, s.Peer)
		if s.HasFreshnessPoint {
			ch <- prometheus.MustNewConstMetric(c.fresh, prometheus.GaugeValue, (s.FreshnessPoint - s.Now).Seconds(), s.Peer)
		}
		ch <- prometheus.MustNewConstMetric(c.trans, prometheus.CounterValue, float64(s.Transitions), s.Peer)
		ch <- prometheus.MustNewConstMetric(c.susp, prometheus.CounterValue, float64(s.Suspicions), s.Peer)
		ch <- prometheus.MustNewConstMetric(c.hbs, prometheus.GaugeValue, float64(s.Heartbeats), s.Peer)
	}
	ch <- prometheus.MustNewConstMetric(c.peers, prometheus.GaugeValue, float64(len(states)))
	ch <- prometheus.MustNewConstMetric(c.pauses, prometheus.CounterValue, float64(c.m.LocalPauses()))
	ch <- prometheus.MustNewConstMetric(c.backward, prometheus.CounterValue, float64(c.m.BackwardArrivals()))
	ch <- prometheus.MustNewConstMetric(c.excused, prometheus.CounterValue, float64(c.m.Excused()))
	c.late.Collect(ch)
}

// desc is the descriptor of a metric named name in o's namespace, with o's
// constant labels.
func (o Config) desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(cmp.Or(o.Namespace, "fdkit"), "", name), help, labels, o.ConstLabels)
}

// Lateness is a prometheus.Collector for a lateness.Meter, the host's own
// lateness (package lateness), with Namespace "fdkit":
//
//	fdkit_host_lateness_seconds                     gauge: the bound in force (lateness.Meter.Bound)
//	fdkit_host_lateness_max_seconds{source}         gauge: the largest lateness per source (timer,
//	                                                gc-pause, other-pause, scheduling) since the meter was made
//	fdkit_host_lateness_measurements_total{source}  counter: lateness measurements per source
//
// Collector exports its monitor's meter with one, and swim/agent/promswim
// a SWIM agent's, under Namespace "fdswim".
type Lateness struct {
	m                 *lateness.Meter
	bound, max, count *prometheus.Desc
}

// NewLateness returns a Lateness for m; a nil m exports nothing.
func NewLateness(m *lateness.Meter, o Config) *Lateness {
	return &Lateness{
		m:     m,
		bound: o.desc("host_lateness_seconds", "The host's lateness bound in force: the largest lateness measured over the meter's window, the margin the failure detectors wait past a freshness point before they convict."),
		max:   o.desc("host_lateness_max_seconds", "The largest lateness of the host measured from this source since the meter was made.", "source"),
		count: o.desc("host_lateness_measurements_total", "Lateness measurements of the host from this source.", "source"),
	}
}

// Describe sends the descriptors of the three metrics.
func (l *Lateness) Describe(ch chan<- *prometheus.Desc) {
	ch <- l.bound
	ch <- l.max
	ch <- l.count
}

// Collect sends the meter's bound and its totals per source.
func (l *Lateness) Collect(ch chan<- prometheus.Metric) {
	if l.m == nil {
		return
	}
	st := l.m.Stats()
	ch <- prometheus.MustNewConstMetric(l.bound, prometheus.GaugeValue, st.Bound.Seconds())
	for _, src := range lateness.Sources() {
		s := st.Sources[src]
		ch <- prometheus.MustNewConstMetric(l.max, prometheus.GaugeValue, s.Max.Seconds(), src.String())
		ch <- prometheus.MustNewConstMetric(l.count, prometheus.CounterValue, float64(s.Count), src.String())
	}
}
