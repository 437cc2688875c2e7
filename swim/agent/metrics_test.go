package agent

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCollector(t *testing.T) {
	as := group(t, 2, Config{Plain: true})
	c := NewCollector(as[0])
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

	// A stopped agent still exports its counters, and no view.
	require.NoError(t, as[0].Close())
	n, err = testutil.GatherAndCount(reg, "fdswim_members", "fdswim_packets_sent_total")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}
