package agent

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// Join returns when the answer is processed, not at the next poll: the
// joiner's TickInterval is an hour, so a Join that waited for a timer
// between its checks would run into the context's deadline. The join event
// of the member that answered is already published when Join returns.
func TestJoinReturnsOnAnswer(t *testing.T) {
	seed := start(t, Config{})
	joiner := start(t, Config{TickInterval: time.Hour})
	events, cancelSub := joiner.Subscribe(64)
	defer cancelSub()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, joiner.Join(ctx, seed.Self().Addr))
	got := false
	for !got {
		select {
		case e := <-events:
			got = e.Kind == swim.EventJoin && e.Node.ID == seed.Self().ID
		default:
			t.Fatal("Join returned before the join event of the member that answered was published")
		}
	}
	// A second Join, with the seed already known, returns on the seed's
	// view too.
	require.NoError(t, joiner.Join(ctx, seed.Self().Addr))
}

// A Join whose context ends leaves no waiter behind.
func TestJoinTimeoutForgetsWaiter(t *testing.T) {
	a := start(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, a.Join(ctx, "127.0.0.1:9"), context.DeadlineExceeded)
	n := -1
	require.NoError(t, a.do(context.Background(), func() { n = len(a.join.waiters) }))
	require.Equal(t, 0, n)
}

// A member bound to 0.0.0.0 that advertises another address of the host
// (127.0.0.2: Linux loopback answers all of 127/8) sends from the advertised
// address, so the seed, which answers only a join that comes from the
// address it claims, answers it. Datagrams left from the route's address
// (127.0.0.1 towards the seed) would get no answer, and the join would
// time out.
func TestJoinFromWildcardBindAdvertisingAnotherAddress(t *testing.T) {
	second := netip.MustParseAddr("127.0.0.2")
	if !transport.IsLocal(second) {
		t.Skip("127.0.0.2 is not an address of this host (Linux loopback accepts all of 127/8)")
	}
	seed := start(t, Config{})
	var joiner *Agent
	for try := 0; joiner == nil; try++ {
		// A port free on 0.0.0.0 for both UDP and TCP: the kernel's choice
		// for a throwaway socket, retried if someone takes it meanwhile.
		probe, err := listenUDP(transport.Config{Bind: "0.0.0.0:0"})
		require.NoError(t, err)
		port := probe.LocalAddr().Port()
		_ = probe.Close()
		cfg := Config{Bind: fmt.Sprintf("0.0.0.0:%d", port), Advertise: fmt.Sprintf("127.0.0.2:%d", port),
			Keys: [][]byte{testKey}, Protocol: fast(), LeaveTimeout: new(300 * time.Millisecond)}
		a, err := Start(context.Background(), cfg)
		if err != nil && try < 5 {
			continue
		}
		require.NoError(t, err)
		t.Cleanup(func() { _ = a.Close() })
		joiner = a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, joiner.Join(ctx, seed.Self().Addr), "the seed refused a join that came from another address than the advertised one")
	require.Eventually(t, func() bool { return alive(seed) == 2 }, 10*time.Second, 10*time.Millisecond)
	for _, m := range seed.Members() {
		if m.Node.ID == joiner.Self().ID {
			assert.Equal(t, joiner.Self().Addr, m.Node.Addr)
		}
	}
	assert.Zero(t, seed.Stats().Rejected, "no join refused")
}

// A join address that resolves only to this member itself is an error at
// once, not a wait for the context; a name resolving to hundreds of
// copies of one address sends one join, not hundreds.
func TestJoinAddressesSelfAndDuplicates(t *testing.T) {
	seed := start(t, Config{})
	var me netip.AddrPort
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "me.test" {
			return []netip.Addr{me.Addr()}, nil
		}
		out := make([]netip.Addr, 300)
		for i := range out {
			out[i] = netip.MustParseAddr("127.0.0.1")
		}
		return out, nil
	}
	a := start(t, Config{Resolve: resolve})
	me = netip.MustParseAddrPort(a.Self().Addr)
	// A Join that waited would end with this 30 s context; one that fails
	// at once takes milliseconds, or a few seconds on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	err := a.Join(ctx, "me.test:"+port(a))
	require.Error(t, err)
	assert.ErrorContains(t, err, "own address")
	assert.Less(t, time.Since(t0), 10*time.Second, "Join waited instead of failing")

	out, err := ResolveAddrs(ctx, resolve, []string{"many.test:" + port(seed), seed.Self().Addr}, me.Addr())
	require.NoError(t, err)
	assert.Equal(t, []string{seed.Self().Addr}, out)
}

// With a MergeFilter, Join completes only on a view transfer the filter
// accepted, as memberlist's Join counts only the push-pulls its
// MergeDelegate accepted: a seed whose view is refused, and whose ping
// makes it known (its Alive, gossip that no MergeFilter screens), does
// not complete it; the acceptable view it sends next does.
func TestJoinWaitsForAcceptedView(t *testing.T) {
	j := start(t, dcConfig("dc1"))
	seed := newPlainPeer(t)
	self := swim.Node{ID: "seed", Addr: seed.addr()}
	seedAlive := swim.Update{Kind: swim.UpdateAlive, Node: self, From: self.ID, Meta: "dc=dc1"}
	foreign := swim.Node{ID: "foreign", Addr: "127.0.0.1:9"}
	refused := []swim.Update{seedAlive, {Kind: swim.UpdateAlive, Node: foreign, From: foreign.ID, Meta: "dc=dc2"}}
	res := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res <- j.Join(ctx, self.Addr)
	}()
	// The seed answers the join (and each resend) with a view naming a
	// member of another datacenter, then pings the joiner.
	var joinFrom netip.AddrPort
	var token uint64 // the join's, which the seed's views echo
	select {
	case p := <-seed.conn.Packets():
		pk, err := seed.codec.Decode(p.Data)
		require.NoError(t, err)
		require.Equal(t, swim.MsgJoin, pk.Kind)
		joinFrom, token = p.From, pk.JoinToken
	case <-time.After(10 * time.Second):
		t.Fatal("no join came")
	}
	require.Equal(t, j.Self().Addr, joinFrom.String())
	seed.send(t, j, &swim.Packet{Kind: swim.MsgSync, From: self, To: j.Self(), Updates: refused, JoinToken: token})
	require.Eventually(t, func() bool { return j.Stats().Protocol.MergesRefused > 0 }, 10*time.Second, 10*time.Millisecond)
	seed.send(t, j, &swim.Packet{Kind: swim.MsgPing, From: self, To: j.Self(), Ping: swim.Ping{Seq: 2}, Updates: []swim.Update{seedAlive}})
	require.Eventually(t, func() bool { return alive(j) == 2 }, 10*time.Second, 10*time.Millisecond, "the ping made the seed known")
	require.NoError(t, j.do(context.Background(), func() {})) // the ping's packet is flushed
	select {
	case err := <-res:
		t.Fatalf("Join returned (%v) with no view accepted", err)
	case <-time.After(500 * time.Millisecond):
	}
	seed.send(t, j, &swim.Packet{Kind: swim.MsgSync, From: self, To: j.Self(), Updates: []swim.Update{seedAlive}, JoinToken: token})
	select {
	case err := <-res:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("an accepted view did not complete the Join")
	}
}
