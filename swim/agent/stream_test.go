package agent

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
)

// blockUDP is the impairment shim: a UDP transport whose received
// datagrams are dropped while blocked is set (a firewall dropping UDP to
// this member); its stream listener, which the agent opens on the same
// port, is untouched.
type blockUDP struct {
	*transport.UDP
	blocked, dropped atomic.Uint64
	ch               chan transport.Packet
}

func newBlockUDP(t *testing.T) *blockUDP {
	t.Helper()
	u, err := transport.Listen(transport.Config{})
	require.NoError(t, err)
	b := &blockUDP{UDP: u, ch: make(chan transport.Packet, 1024)}
	go func() {
		defer close(b.ch)
		for p := range u.Packets() {
			if b.blocked.Load() != 0 {
				b.dropped.Add(1)
				continue
			}
			b.ch <- p
		}
	}()
	return b
}

func (b *blockUDP) Packets() <-chan transport.Packet { return b.ch }

// startShimmed starts an agent over a blockUDP shim; the stream listener
// takes the shim's port number on TCP, which another process may hold:
// then it tries another port.
func startShimmed(t *testing.T, cfg Config) (*Agent, *blockUDP) {
	t.Helper()
	for try := 0; ; try++ {
		shim := newBlockUDP(t)
		c := cfg
		c.Transport = shim
		a, err := Start(context.Background(), c)
		if err != nil && strings.Contains(err.Error(), "stream listener") && try < 5 {
			_ = shim.Close()
			continue
		}
		require.NoError(t, err)
		t.Cleanup(func() { _ = a.Close() })
		return a, shim
	}
}

// streamGroup starts three agents and a fourth over a blockUDP shim, and
// waits until all four see each other alive.
func streamGroup(t *testing.T, cfg Config) ([]*Agent, *blockUDP) {
	t.Helper()
	cfg.Keys = [][]byte{testKey}
	cfg.Protocol = fast()
	cfg.LeaveTimeout = new(300 * time.Millisecond)
	var as []*Agent
	var addrs []string
	for i := range 3 {
		c := cfg
		c.Seed = uint64(i + 1)
		as = append(as, start(t, c))
		if i > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			require.NoError(t, as[i].Join(ctx, addrs...))
			cancel()
		}
		addrs = append(addrs, as[i].Self().Addr)
	}
	c := cfg
	c.Seed = 4
	x, shim := startShimmed(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	require.NoError(t, x.Join(ctx, addrs...))
	cancel()
	as = append(as, x)
	require.Eventually(t, func() bool {
		for _, a := range as {
			if alive(a) != 4 {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "full view")
	return as, shim
}

// collect gathers every agent's events about id (and, for the last agent,
// all its events) until stop is closed.
func collect(as []*Agent) (func() map[int][]swim.Event, func()) {
	type ev struct {
		i int
		e swim.Event
	}
	all := make(chan ev, 4096)
	var cancels []func()
	for i, a := range as {
		ch, cancel := a.Subscribe(1024)
		cancels = append(cancels, cancel)
		go func() {
			for e := range ch {
				all <- ev{i, e}
			}
		}()
	}
	stop := func() {
		for _, c := range cancels {
			c()
		}
	}
	get := func() map[int][]swim.Event {
		out := map[int][]swim.Event{}
		for {
			select {
			case e := <-all:
				out[e.i] = append(out[e.i], e.e)
			default:
				return out
			}
		}
	}
	return get, stop
}

// With every datagram to one member dropped and TCP open, the member is
// never declared dead over 30 probe periods: its probers reach it with the
// stream fallback ping, and they warn that only the stream reaches it
// (EventStreamOnly, Stats.Protocol.StreamOnly). The same group with the
// stream path off declares it dead (the control: the test can fail).
func TestUDPBlockedMemberKeptAliveByStream(t *testing.T) {
	as, shim := streamGroup(t, Config{})
	x := as[3].Self()
	get, stop := collect(as)
	defer stop()
	shim.blocked.Store(1)
	time.Sleep(30 * fast().ProbeInterval)
	evs := get()
	warned := 0
	for i := range 3 {
		for _, e := range evs[i] {
			if e.Node.ID == x.ID {
				assert.NotEqual(t, swim.EventDead, e.Kind, "agent %d declared the UDP-blocked member dead", i)
				if e.Kind == swim.EventStreamOnly {
					warned++
				}
			}
		}
		assert.Contains(t, []swim.State{swim.StateAlive, swim.StateSuspect}, state(as[i], x.ID), "agent %d", i)
	}
	assert.Positive(t, warned, "stream-only warning about the blocked member: %v", evs)
	var proberOnly int
	for i := range 3 {
		proberOnly += as[i].Stats().Protocol.StreamOnly
	}
	assert.Positive(t, proberOnly)
	assert.Positive(t, shim.dropped.Load(), "the shim dropped datagrams")
	// The blocked member gets no ack by datagram either: it reaches the
	// others over the stream, and says so.
	assert.Positive(t, as[3].Stats().Protocol.StreamOnly)
	assert.Positive(t, as[3].Stats().StreamsOut)
	for _, e := range evs[3] {
		assert.NotEqual(t, swim.EventDead, e.Kind, "the blocked member declared %s dead", e.Node.ID)
	}
}

func TestUDPBlockedMemberDeadWithoutStream(t *testing.T) {
	as, shim := streamGroup(t, Config{DisableStream: true})
	x := as[3].Self()
	ev, cancel := as[0].Subscribe(0)
	defer cancel()
	shim.blocked.Store(1)
	deadline := time.After(15 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Node.ID == x.ID && e.Kind == swim.EventDead {
				assert.Zero(t, as[0].Stats().Protocol.StreamProbes, "stream path off")
				return
			}
		case <-deadline:
			t.Fatal("without the stream path, the UDP-blocked member was not declared dead within 15 s")
		}
	}
}
