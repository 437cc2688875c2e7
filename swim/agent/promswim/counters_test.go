package promswim_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/agent/promswim"
)

// Every counter of agent.Stats and of swim.Stats (agent.Stats.Protocol) is
// exported once, the eager-gossip counter among them, with the agent's
// values. The host's lateness measurements, counted per source, are not
// among them (TestCollectorHostLateness).
func TestEveryCounterExported(t *testing.T) {
	as := pair(t)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(promswim.NewCollector(as[0])))
	require.Eventually(t, func() bool { return as[0].Stats().Protocol.ProbesStarted > 0 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, as[0].Close()) // freeze the counters
	st := as[0].Stats()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, mf := range mfs {
		if strings.HasSuffix(mf.GetName(), "_total") && !strings.HasPrefix(mf.GetName(), "fdswim_host_lateness_") {
			got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	want := reflect.TypeFor[agent.Stats]().NumField() - 1 + leaves(reflect.TypeFor[swim.Stats]())
	assert.Len(t, got, want, "one counter per field of agent.Stats (Protocol aside) and of swim.Stats")
	require.Contains(t, got, "fdswim_protocol_gossips_sent_total")
	require.Contains(t, got, "fdswim_protocol_pulls_refused_total")
	assert.Equal(t, float64(st.Protocol.GossipsSent), got["fdswim_protocol_gossips_sent_total"])
	assert.Equal(t, float64(st.Protocol.ProbesStarted), got["fdswim_protocol_probes_started_total"])
	assert.Positive(t, got["fdswim_protocol_probes_started_total"])
	assert.Equal(t, float64(st.Protocol.PingReqsSent), got["fdswim_protocol_ping_reqs_sent_total"])
	assert.Equal(t, float64(st.EventsDropped), got["fdswim_events_dropped_total"])
	assert.Equal(t, float64(st.PacketsSent), got["fdswim_packets_sent_total"])
}

// leaves counts the fields of struct t that are not structs, those of
// nested structs included.
func leaves(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		if f := t.Field(i).Type; f.Kind() == reflect.Struct {
			n += leaves(f)
		} else {
			n++
		}
	}
	return n
}
