package agent

import (
	"context"
	"fmt"
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

// A member restarted at its own address with a new identity key (its
// identity file lost) cannot take back its ID while the others keep the
// old key bound to it: its Alive fails their proof check, so they keep it
// dead. Its Join must say so, not return as joined while every other
// member holds it dead (fdswim printed "joined" and a view of live
// members, the others a conflict and a dead member).
func TestJoinUnderAnotherKeyAtSameAddressRefused(t *testing.T) {
	ps := fast()
	ps.SigningKey = signingKey(1)
	seed := start(t, Config{Plain: true, Protocol: ps})
	pc := fast()
	pc.SigningKey = signingKey(2)
	c := start(t, Config{Plain: true, ID: "c", Protocol: pc})
	join(t, c, seed)
	addr := c.Self().Addr
	require.NoError(t, c.Shutdown())
	require.Eventually(t, func() bool { return state(seed, "c") == swim.StateDead }, 10*time.Second, 10*time.Millisecond)

	pc.SigningKey = signingKey(3) // the identity file lost
	c2 := start(t, Config{Plain: true, ID: "c", Bind: addr, Protocol: pc})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := c2.Join(ctx, seed.Self().Addr)
	var je *JoinError
	require.ErrorAs(t, err, &je, "joined while the seed holds it dead under the old key")
	require.NotNil(t, je.Refusal)
	assert.Equal(t, addr, je.Refusal.Held.Addr)
	assert.Contains(t, err.Error(), `holds ID "c" as dead at this member's own address`)
	assert.Contains(t, err.Error(), "restart with that key")
	assert.Equal(t, swim.StateDead, state(seed, "c"))
}

// usr27's F3: a Join to a port nobody listens on (the datagrams lost, the
// stream resend refused) ended in a bare "context deadline exceeded". Its
// JoinError counts the refused dials and says what to check.
func TestJoinErrorNamesSilence(t *testing.T) {
	a := start(t, Config{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // a port that refuses
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = a.Join(ctx, addr)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var je *JoinError
	require.ErrorAs(t, err, &je)
	assert.Positive(t, je.StreamDialErrors, "the join's resends over a stream were refused")
	assert.Contains(t, err.Error(), "streams (TCP) could not be dialled meanwhile (refused or timed out): is a member listening at the address?")
	assert.Contains(t, err.Error(), "; no member answered: check the address, the keys (or that both sides are plain) and the cluster label")
}

// A Join answered only with datagrams that open but do not decode (a
// member of another fdkit version: usr30 saw a build that refused the
// receiver check join through a new one and be told "no member
// answered") says so, not that nothing answered.
func TestJoinErrorNamesDecodeErrors(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			_, from, err := pc.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteToUDP([]byte{0x01, 0x02, 0x05, 0xff}, from) // plain envelope, a payload cut short
		}
	}()
	c := start(t, Config{Plain: true, DisableStream: true})
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	err = c.Join(ctx, pc.LocalAddr().String())
	var je *JoinError
	require.ErrorAs(t, err, &je)
	assert.Positive(t, je.DecodeErrors)
	assert.Contains(t, err.Error(), "did not decode: a member of another fdkit version?")
	assert.NotContains(t, err.Error(), "no member answered")
}

// A JoinError names at most 8 of the join's addresses and counts the rest
// (usr30b: fdswim logged each retry's error with all of 3,000 addresses).
func TestJoinErrorNamesFewAddresses(t *testing.T) {
	var addrs []string
	for i := range 3000 {
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", 10000+i))
	}
	msg := (&JoinError{Addrs: addrs, Err: context.DeadlineExceeded}).Error()
	assert.Contains(t, msg, "127.0.0.1:10007] and 2992 more")
	assert.NotContains(t, msg, "127.0.0.1:10008")
	assert.Less(t, len(msg), 1000)
	assert.Contains(t, (&JoinError{Addrs: addrs[:2], Err: context.DeadlineExceeded}).Error(), "join [127.0.0.1:10000 127.0.0.1:10001]: ")
}
