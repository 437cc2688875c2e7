package docs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/monitor/promfd"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/agent/promswim"
)

// grafanaMetric finds metric names in PromQL: every fdkit metric starts
// with fdswim_ (swim/agent/promswim) or fdkit_ (monitor/promfd's default
// namespace).
var grafanaMetric = regexp.MustCompile(`\b(?:fdswim|fdkit)_[A-Za-z0-9_:]+\b`)

// descName reads the metric name out of a prometheus.Desc's String form
// (Desc{fqName: "name", ...}); client_golang has no accessor.
var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

// registered returns the names of every metric the collectors describe,
// whether or not they have a value now (per-peer metrics need peers).
func registered(t *testing.T, cs ...prometheus.Collector) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, c := range cs {
		ch := make(chan *prometheus.Desc, 256)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			m := descName.FindStringSubmatch(d.String())
			require.NotNil(t, m, "descriptor %s", d)
			names[m[1]] = true
		}
	}
	return names
}

// grafanaExprs walks a dashboard: every panel's (and a row's panels')
// target expressions, and the template variables' queries.
func grafanaExprs(t *testing.T, path string) (exprs, where []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var dash struct {
		Title      string            `json:"title"`
		UID        string            `json:"uid"`
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash), "%s is not JSON", path)
	require.NotEmpty(t, dash.Title)
	require.NotEmpty(t, dash.UID)
	type panel struct {
		Title   string            `json:"title"`
		Type    string            `json:"type"`
		Panels  []json.RawMessage `json:"panels"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var walk func([]json.RawMessage)
	walk = func(ps []json.RawMessage) {
		for _, r := range ps {
			var p panel
			require.NoError(t, json.Unmarshal(r, &p))
			if p.Type != "row" {
				require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				require.NotEmpty(t, tg.Expr, "panel %q has an empty query", p.Title)
				exprs, where = append(exprs, tg.Expr), append(where, "panel "+p.Title)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, v := range dash.Templating.List {
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) == nil && q.Query != "" {
			exprs, where = append(exprs, q.Query), append(where, "variable "+v.Name)
		}
	}
	return exprs, where
}

// TestGrafanaDashboardMetricsExist: every metric the dashboard
// docs/grafana/fdkit.json queries is one that the agent's collector
// (promswim) or the monitor's (promfd) registers, every query names one,
// and each exporter has panels.
func TestGrafanaDashboardMetricsExist(t *testing.T) {
	a, err := agent.Start(context.Background(), agent.Config{Plain: true, Bind: "127.0.0.1:0", DisableStream: true})
	require.NoError(t, err)
	defer a.Close()
	m, err := monitor.New(monitor.Config{Clock: &monitor.ManualClock{}})
	require.NoError(t, err)
	pf, err := promfd.New(m, promfd.Config{})
	require.NoError(t, err)
	known := registered(t, promswim.NewCollector(a), pf)
	require.Contains(t, known, "fdswim_members")
	require.Contains(t, known, "fdkit_peer_suspicion_level")

	exprs, where := grafanaExprs(t, "grafana/fdkit.json")
	require.NotEmpty(t, exprs)
	assert.Empty(t, unknownMetrics(exprs, where, known))
	used := map[string]bool{}
	for _, e := range exprs {
		for _, n := range grafanaMetric.FindAllString(e, -1) {
			used[n] = true
		}
	}
	var swimUsed, fdUsed int
	for n := range used {
		if strings.HasPrefix(n, "fdswim_") {
			swimUsed++
		} else {
			fdUsed++
		}
	}
	assert.Positive(t, swimUsed, "no agent metric on the dashboard")
	assert.Positive(t, fdUsed, "no monitor metric on the dashboard")
	t.Logf("%d queries, %d distinct metrics of %d exported", len(exprs), len(used), len(known))
}

// unknownMetrics lists the problems of the queries: a query that names no
// fdkit metric, or names one that is not in known.
func unknownMetrics(exprs, where []string, known map[string]bool) []string {
	var bad []string
	for i, e := range exprs {
		names := grafanaMetric.FindAllString(e, -1)
		if len(names) == 0 {
			bad = append(bad, fmt.Sprintf("%s: %q queries no fdkit metric", where[i], e))
		}
		for _, n := range names {
			if !known[n] {
				bad = append(bad, fmt.Sprintf("%s: %q queries %s, which no collector exports", where[i], e, n))
			}
		}
	}
	return bad
}

// TestGrafanaCheckCatchesUnknownMetric: the check reports a metric no
// collector exports (a renamed counter) and a query without a metric.
func TestGrafanaCheckCatchesUnknownMetric(t *testing.T) {
	known := map[string]bool{"fdswim_packets_sent_total": true, "fdkit_monitor_peers": true}
	bad := unknownMetrics([]string{
		`sum(rate(fdswim_packets_sent_totl{instance=~"$instance"}[5m])) / fdkit_monitor_peers`,
		`up`,
		`rate(fdswim_packets_sent_total[5m])`,
	}, []string{"panel A", "panel B", "panel C"}, known)
	assert.Equal(t, []string{
		`panel A: "sum(rate(fdswim_packets_sent_totl{instance=~\"$instance\"}[5m])) / fdkit_monitor_peers" queries fdswim_packets_sent_totl, which no collector exports`,
		`panel B: "up" queries no fdkit metric`,
	}, bad)
}

// viewGauges are gauges that describe one agent's own view of the group:
// adding them up across agents counts every member once per agent.
var viewGauges = []string{"fdswim_members"}

// summedAcrossAgents lists the queries that sum a view gauge without
// keeping the instance label (sum(...) or sum by (...) without instance).
func summedAcrossAgents(exprs, where []string) []string {
	sumBy := regexp.MustCompile(`\bsum\s*(?:by\s*\(([^)]*)\))?\s*\(`)
	var bad []string
	for i, e := range exprs {
		for _, g := range viewGauges {
			if !strings.Contains(e, g) {
				continue
			}
			for _, m := range sumBy.FindAllStringSubmatch(e, -1) {
				if !regexp.MustCompile(`\binstance\b`).MatchString(m[1]) {
					bad = append(bad, fmt.Sprintf("%s: %q adds up %s across agents", where[i], e, g))
				}
			}
		}
	}
	return bad
}

// TestGrafanaViewGaugesPerAgent: the "Members by state" panel summed
// fdswim_members over every agent, so three agents that each see three
// alive members showed 9 alive, while its description says "in each
// agent's view".
func TestGrafanaViewGaugesPerAgent(t *testing.T) {
	exprs, where := grafanaExprs(t, "grafana/fdkit.json")
	assert.Empty(t, summedAcrossAgents(exprs, where))
	assert.Len(t, summedAcrossAgents([]string{`sum by (state) (fdswim_members)`, `sum(fdswim_members)`,
		`sum by (instance, state) (fdswim_members)`}, []string{"A", "B", "C"}), 2)
}
