package agent

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A Join refused for a dead or left holder of the ID (within the seed's
// DeadReclaimTime) ends in a JoinError that says so: who refused, the
// address held, the setting to change, not the bare context error, which
// fdswim would report as "no member answered".
func TestJoinErrorNamesRefusal(t *testing.T) {
	p := fast()
	p.DeadReclaimTime = new(time.Hour)
	seed := start(t, Config{Protocol: p})
	c := start(t, Config{ID: "c"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, c.Join(ctx, seed.Self().Addr))
	oldAddr := c.Self().Addr
	require.NoError(t, c.Close()) // leaves
	require.Eventually(t, func() bool { return state(seed, "c") == swim.StateLeft }, 5*time.Second, 10*time.Millisecond)

	c2 := start(t, Config{ID: "c"}) // restarted on a new port
	jctx, jcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer jcancel()
	err := c2.Join(jctx, seed.Self().Addr)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var je *JoinError
	require.ErrorAs(t, err, &je)
	require.NotNil(t, je.Refusal)
	assert.Equal(t, seed.Self().Addr, je.Refusal.By.Addr)
	assert.Equal(t, oldAddr, je.Refusal.Held.Addr)
	assert.True(t, je.Refusal.Left)
	assert.Contains(t, err.Error(), "refused: the member at "+seed.Self().Addr+` holds ID "c" as left at `+oldAddr)
	assert.Contains(t, err.Error(), "DeadReclaimTime")
	assert.Zero(t, je.AuthFailures)
}

// Datagrams that fail authentication during a Join (another key, here
// plain ones) are counted in its JoinError with the last one's source.
func TestJoinErrorNamesAuthFailures(t *testing.T) {
	a := start(t, Config{})
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer conn.Close()
	to := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(a.Self().Addr))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Join(ctx, "127.0.0.1:9") }()
	require.Eventually(t, func() bool {
		n := -1
		_ = a.do(context.Background(), func() { n = len(a.join.waiters) })
		return n == 1
	}, 5*time.Second, 5*time.Millisecond, "the join waits")
	for range 3 {
		_, err = conn.WriteToUDP([]byte("not sealed with the group's key"), to)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return a.Stats().AuthFailures == 3 }, 5*time.Second, 5*time.Millisecond)
	cancel()
	err = <-done
	var je *JoinError
	require.ErrorAs(t, err, &je)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, je.Refusal)
	assert.Equal(t, uint64(3), je.AuthFailures)
	assert.Equal(t, conn.LocalAddr().(*net.UDPAddr).AddrPort().String(), je.AuthFrom.String())
	assert.Contains(t, err.Error(), "3 datagrams that failed authentication arrived meanwhile, the last from "+je.AuthFrom.String())
}

// A Join that ends with its context because this member's MergeFilter
// refused the views that answered it says so, with the filter's error
// (memberlist's Join returns its MergeDelegate's error). The seed, without
// a veto, answers, and probes the joiner: its pings make it known to the
// joiner (gossip no MergeFilter sees), which does not complete the Join.
func TestJoinErrorNamesMergeRefusal(t *testing.T) {
	seed := start(t, Config{Plain: true})
	other := start(t, dcConfig("dc2"))
	err := joinUntil(other, seed.Self().Addr, func() bool { return other.Stats().Protocol.MergesRefused > 0 })
	var je *JoinError
	require.ErrorAs(t, err, &je)
	require.Error(t, je.MergeRefusal)
	assert.ErrorContains(t, err, "MergeFilter")
	assert.ErrorContains(t, err, "not in datacenter dc2")
	assert.ErrorIs(t, err, context.Canceled)
}
