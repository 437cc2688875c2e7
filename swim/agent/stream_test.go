package agent

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
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
	u, err := listenUDP(transport.Config{})
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

// startShimmed starts an agent over a blockUDP shim (startOnShim).
func startShimmed(t *testing.T, cfg Config) (*Agent, *blockUDP) {
	t.Helper()
	return startOnShim(t, cfg, newBlockUDP)
}

// memberAndCutJoiner starts b (Seed 1) and x (Seed 2), both with cfg, x
// behind a shim that drops every datagram it receives, so that only an
// answer on a join's stream can complete x's Join: the setup of the
// stalling, silent and slowloris seed tests.
func memberAndCutJoiner(t *testing.T, cfg Config) (b, x *Agent) {
	t.Helper()
	bc := cfg
	bc.Seed = 1
	b = start(t, bc)
	xc := cfg
	xc.Seed = 2
	x, shim := startShimmed(t, xc)
	shim.blocked.Store(1)
	return b, x
}

// startOnShim starts an agent over a shim made by newShim; the stream
// listener takes the shim's port number on TCP, which another process
// may hold: then it closes the shim and tries another port, up to 5
// times. The agent closes when t ends.
func startOnShim[S transport.Transport](t *testing.T, cfg Config, newShim func(*testing.T) S) (*Agent, S) {
	t.Helper()
	for try := 0; ; try++ {
		shim := newShim(t)
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
	as := group(t, 3, cfg)
	var addrs []string
	for _, a := range as {
		addrs = append(addrs, a.Self().Addr)
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
// never declared dead over at least 30 probe periods: its probers reach
// it with the stream fallback ping, and they warn that only the stream
// reaches it (EventStreamOnly, Stats.Protocol.StreamOnly). The same group with the
// stream path off declares it dead (the control: the test can fail).
func TestUDPBlockedMemberKeptAliveByStream(t *testing.T) {
	var wrappedIn, wrappedOut atomic.Int64
	as, shim := streamGroup(t, Config{StreamWrap: func(c net.Conn, inbound bool) (net.Conn, error) {
		if inbound {
			wrappedIn.Add(1)
		} else {
			wrappedOut.Add(1)
		}
		return c, nil
	}})
	x := as[3].Self()
	get, stop := collect(as)
	defer stop()
	shim.blocked.Store(1)
	blockedAt := time.Now()
	time.Sleep(30 * fast().ProbeInterval)
	// On a loaded machine the local health multiplier stretches the
	// periods (up to eightfold), and 30 of 100 ms may hold no probe of the
	// blocked member yet: after the 30, wait for the stream-only evidence
	// on both sides, while still no member may be declared dead.
	evs := map[int][]swim.Event{}
	warned, proberOnly := 0, 0
	ok := assert.Eventually(t, func() bool {
		for i, es := range get() {
			evs[i] = append(evs[i], es...)
			for _, e := range es {
				if i < 3 && e.Node.ID == x.ID && e.Kind == swim.EventStreamOnly {
					warned++
				}
			}
		}
		proberOnly = 0
		for i := range 3 {
			proberOnly += as[i].Stats().Protocol.StreamOnly
		}
		return warned > 0 && proberOnly > 0 && as[3].Stats().Protocol.StreamOnly > 0
	}, 30*time.Second, 20*time.Millisecond, "stream-only probes and warnings on both sides")
	for i := range 3 {
		for _, e := range evs[i] {
			if e.Node.ID == x.ID {
				assert.NotEqual(t, swim.EventDead, e.Kind, "agent %d declared the UDP-blocked member dead", i)
			}
		}
		assert.Contains(t, []swim.State{swim.StateAlive, swim.StateSuspect}, state(as[i], x.ID), "agent %d", i)
	}
	if !ok {
		t.Logf("events: %v", evs)
	}
	assert.Positive(t, shim.dropped.Load(), "the shim dropped datagrams")
	// The blocked member gets no ack by datagram either: it reaches the
	// others over the stream, and says so.
	assert.Positive(t, as[3].Stats().StreamsOut)
	for _, e := range evs[3] {
		assert.NotEqual(t, swim.EventDead, e.Kind, "the blocked member declared %s dead", e.Node.ID)
	}
	assert.Positive(t, wrappedIn.Load(), "StreamWrap sees inbound streams")
	assert.Positive(t, wrappedOut.Load(), "StreamWrap sees dialled streams")
	t.Logf("%v blocked (at least 30 periods of 100 ms): %d datagrams dropped by the shim, %d stream-only probes of the blocked member, %d warnings about it, %d stream-only probes by it",
		time.Since(blockedAt).Round(10*time.Millisecond), shim.dropped.Load(), proberOnly, warned, as[3].Stats().Protocol.StreamOnly)
}

func TestUDPBlockedMemberDeadWithoutStream(t *testing.T) {
	as, shim := streamGroup(t, Config{DisableStream: true})
	x := as[3].Self()
	ev, cancel := as[0].Subscribe(0)
	defer cancel()
	shim.blocked.Store(1)
	blockedAt := time.Now()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.Node.ID == x.ID && e.Kind == swim.EventDead {
				assert.Zero(t, as[0].Stats().Protocol.StreamProbes, "stream path off")
				t.Logf("stream path off: declared dead %v after its datagrams were blocked", time.Since(blockedAt).Round(10*time.Millisecond))
				return
			}
		case <-deadline:
			t.Fatal("without the stream path, the UDP-blocked member was not declared dead within 15 s")
		}
	}
}

// A view larger than one datagram arrives over a stream: a joiner that no
// datagram reaches (the shim drops them all from the start) still gets the
// answer to its join, two MsgSync packets' worth (long IDs, 700-byte
// packets), and its Join returns; with the stream path off it times out.
func TestLargeViewSyncsOverStream(t *testing.T) {
	for _, off := range []bool{false, true} {
		cfg := Config{Keys: [][]byte{testKey}, Protocol: fast(), MaxPacketSize: 700, DisableStream: off,
			LeaveTimeout: new(100 * time.Millisecond)}
		id := func(i int) swim.ID { return swim.ID(fmt.Sprintf("member-%d-%s", i, strings.Repeat("x", 100))) }
		var as []*Agent
		for i := range 2 {
			c := cfg
			c.ID, c.Seed = id(i), uint64(i+1)
			as = append(as, start(t, c))
		}
		join(t, as[1], as[0])
		c := cfg
		c.ID, c.Seed = id(2), 3
		x, shim := startShimmed(t, c)
		shim.blocked.Store(1)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		err := x.Join(ctx, as[0].Self().Addr)
		cancel()
		if off {
			assert.Error(t, err, "stream off: the view has no way in")
			assert.Zero(t, as[0].Stats().StreamSyncs)
			continue
		}
		require.NoError(t, err)
		require.Eventually(t, func() bool { return alive(x) == 3 }, 5*time.Second, 10*time.Millisecond)
		assert.Positive(t, as[0].Stats().StreamSyncs, "the seed sent its view over a stream")
		assert.Positive(t, x.Stats().StreamJoins, "the joiner resent its join over a stream")
		assert.Positive(t, x.Stats().StreamJoinAnswers, "the view came back on the join's stream")
		assert.Zero(t, x.Stats().PacketsReceived, "no datagram reached the joiner")
		assert.Zero(t, as[0].Stats().StreamSyncFallbacks)
	}
}

// Hostile streams are cut and counted by reason, and the agent still
// answers a genuine stream ping afterwards: a frame sealed with another
// key, a sealed frame whose payload is garbage, a replayed ping, a ping
// for another member, a kind a stream does not carry, a length prefix of
// 1 GiB, a slow sender (slowloris) held past the deadline, and a
// connection over MaxStreamConns.
func TestHostileStreamsRefused(t *testing.T) {
	// Every connection comes from loopback: one source may hold both slots.
	// The deadline is long enough that, on a loaded machine, the first slow
	// sender is still waiting when the third connects (CI once saw it cut
	// at a 400 ms deadline before the third arrived).
	a := start(t, Config{StreamTimeout: 2 * time.Second, MaxStreamConns: 2, MaxStreamConnsPerSource: 2})
	to := netip.MustParseAddrPort(a.Self().Addr)
	good, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t)}})
	require.NoError(t, err)
	otherKey, err := wire.NewKeyring([]byte("fedcba9876543210fedcba9876543210"))
	require.NoError(t, err)
	bad, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: otherKey}})
	require.NoError(t, err)
	from := swim.Node{ID: "prober", Addr: "127.0.0.1:9"}
	ping := func(c *wire.Codec, seq uint32, target swim.Node) []byte {
		b, _, err := c.Encode(&swim.Packet{Kind: swim.MsgPing, From: from, To: target, Ping: swim.Ping{Seq: seq}})
		require.NoError(t, err)
		return b
	}
	// exchange sends frames on a fresh stream and returns the answer
	// frame, or the error that ended the stream.
	exchange := func(frames ...[]byte) ([]byte, error) {
		c, err := transport.DialStream(context.Background(), to, transport.StreamConfig{Timeout: 3 * time.Second})
		require.NoError(t, err)
		defer c.Close()
		for _, f := range frames {
			if err := c.WriteFrame(f); err != nil {
				return nil, err
			}
		}
		return c.ReadFrame()
	}
	answered := func(b []byte, err error, seq uint32) {
		t.Helper()
		require.NoError(t, err)
		p, err := good.Decode(b)
		require.NoError(t, err)
		assert.Equal(t, swim.MsgAck, p.Kind)
		assert.Equal(t, seq, p.Ack.Seq)
		assert.Equal(t, a.Self().ID, p.From.ID)
	}
	first := ping(good, 1, a.Self())
	b, err := exchange(first)
	answered(b, err, 1)
	// One ping per stream: a second on the same stream is not read.
	c, err := transport.DialStream(context.Background(), to, transport.StreamConfig{Timeout: 3 * time.Second})
	require.NoError(t, err)
	require.NoError(t, c.WriteFrame(ping(good, 10, a.Self())))
	b, err = c.ReadFrame()
	answered(b, err, 10)
	_ = c.WriteFrame(ping(good, 11, a.Self()))
	_, err = c.ReadFrame()
	assert.Error(t, err, "the stream ended after its ping")
	_ = c.Close()

	_, err = exchange(ping(bad, 2, a.Self()))
	assert.Error(t, err, "wrong key: no answer")
	sealed, err := (&wire.Security{Keyring: mustKeyring(t)}).Seal(nil, []byte("twelve bytes of junk"))
	require.NoError(t, err)
	_, err = exchange(sealed)
	assert.Error(t, err, "garbage: no answer")
	_, err = exchange(first)
	assert.Error(t, err, "replay: no answer")
	_, err = exchange(ping(good, 3, swim.Node{ID: "someone-else", Addr: a.Self().Addr}))
	assert.Error(t, err, "ping for another member: no answer")
	ack, _, err := good.Encode(&swim.Packet{Kind: swim.MsgAck, From: from, To: a.Self(), Ack: swim.Ack{Seq: 4}})
	require.NoError(t, err)
	_, err = exchange(ack)
	assert.Error(t, err, "an ack on a stream: cut")

	raw := func() net.Conn {
		c, err := net.Dial("tcp", to.String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	huge := raw()
	_, err = huge.Write(binary.BigEndian.AppendUint32(nil, 1<<30))
	require.NoError(t, err)
	_ = huge.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = huge.Read(make([]byte, 1))
	assert.Error(t, err, "a 1 GiB frame: cut at its prefix")
	require.Eventually(t, func() bool { return a.Stats().StreamOversize == 1 }, 3*time.Second, 5*time.Millisecond)

	// Two slow senders, no frame yet, fill MaxStreamConns; a third takes
	// the older one's slot (closed and counted in StreamsEvicted), so that
	// idle connections cannot shut out genuine stream pings; the other
	// slow sender and the third are cut at the deadline.
	for range 2 {
		_, err := raw().Write([]byte{0, 0})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return a.Stats().StreamsIn == 10 }, 3*time.Second, 5*time.Millisecond)
	third := raw()
	_ = third.SetReadDeadline(time.Now().Add(6 * time.Second))
	_, err = third.Read(make([]byte, 1))
	assert.Error(t, err)
	// Each of the three is either evicted or cut at the deadline. If the
	// machine stalled past the deadline before the third connected, the
	// first was cut rather than evicted; the test says so instead of
	// failing, since the deadline did its job.
	require.Eventually(t, func() bool {
		st := a.Stats()
		return st.StreamTimeouts+st.StreamsEvicted == 3
	}, 10*time.Second, 5*time.Millisecond, "slow senders evicted or cut at the 2 s deadline")
	evicted := a.Stats().StreamsEvicted
	if evicted == 0 {
		t.Log("the first slow sender reached its deadline before the third connected: no eviction seen")
	}

	b, err = exchange(ping(good, 5, a.Self()))
	answered(b, err, 5)
	st := a.Stats()
	assert.Equal(t, uint64(1), st.StreamAuthFailures, "wrong key")
	assert.Equal(t, uint64(1), st.StreamReplayed)
	assert.Equal(t, uint64(3), st.StreamDecodeErrors, "garbage, another member's ping, an ack")
	assert.Equal(t, uint64(1), st.StreamOversize)
	assert.Equal(t, 3-evicted, st.StreamTimeouts)
	assert.LessOrEqual(t, evicted, uint64(1), "at most the older slow sender, accepted and then evicted")
	assert.Zero(t, st.StreamsRefused, "every stream was accepted: counted once, in StreamsIn")
	assert.Equal(t, uint64(12), st.StreamsIn)
	assert.Zero(t, st.Rejected)
}

// A member without the stream path (an older version, or --no-stream) still
// gets a view larger than one datagram: the seed's stream is refused and
// the view goes as datagrams (Stats.StreamSyncFallbacks).
func TestViewFallsBackToDatagrams(t *testing.T) {
	id := func(i int) swim.ID { return swim.ID(fmt.Sprintf("member-%d-%s", i, strings.Repeat("y", 100))) }
	cfg := Config{Protocol: fast(), MaxPacketSize: 700}
	var as []*Agent
	for i := range 3 {
		c := cfg
		c.ID, c.Seed, c.DisableStream = id(i), uint64(i+1), i == 2
		as = append(as, start(t, c))
	}
	join(t, as[1], as[0])
	join(t, as[2], as[0])
	require.Eventually(t, func() bool { return alive(as[2]) == 3 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return as[0].Stats().StreamSyncFallbacks > 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Positive(t, as[0].Stats().StreamDialErrors)
	assert.Zero(t, as[2].Stats().StreamsIn)
}

// A view stream is cut once it has carried more membership updates than
// MaxStreamMembers: what came before the cap is applied, nothing after.
func TestStreamMemberCap(t *testing.T) {
	a := start(t, Config{MaxStreamMembers: 3})
	good, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t)}})
	require.NoError(t, err)
	from := swim.Node{ID: "sender", Addr: "127.0.0.1:9"}
	alive := func(id string) swim.Update {
		return swim.Update{Kind: swim.UpdateAlive, Node: swim.Node{ID: swim.ID(id), Addr: "127.0.0.1:1" + id[1:]}, From: swim.ID(id)}
	}
	c, err := transport.DialStream(context.Background(), netip.MustParseAddrPort(a.Self().Addr), transport.StreamConfig{})
	require.NoError(t, err)
	defer c.Close()
	for _, ups := range [][]swim.Update{{alive("m1"), alive("m2")}, {alive("m3"), alive("m4")}} {
		b, _, err := good.Encode(&swim.Packet{Kind: swim.MsgSync, From: from, To: a.Self(), Updates: ups})
		require.NoError(t, err)
		_ = c.WriteFrame(b)
	}
	require.Eventually(t, func() bool { return a.Stats().StreamOversize == 1 }, 3*time.Second, 5*time.Millisecond)
	ids := map[swim.ID]bool{}
	require.Eventually(t, func() bool {
		clear(ids)
		for _, m := range a.Members() {
			ids[m.Node.ID] = true
		}
		return ids["m1"] && ids["m2"]
	}, 3*time.Second, 5*time.Millisecond, "the first frame, within the cap, is applied")
	assert.False(t, ids["m3"] || ids["m4"], "the frame over the cap is not: %v", ids)
}

// The switches: by default the listener runs and the state machine asks
// for stream pings; DisableStreamProbes keeps the listener and stops the
// pings; DisableStream stops both.
func TestStreamSwitches(t *testing.T) {
	for _, c := range []struct {
		name             string
		cfg              Config
		listener, probes bool
	}{
		{"default", Config{}, true, true},
		{"DisableStreamProbes", Config{DisableStreamProbes: true}, true, false},
		{"DisableStream", Config{DisableStream: true}, false, false},
	} {
		a := start(t, c.cfg)
		var probes bool
		require.NoError(t, a.do(context.Background(), func() { probes = a.m.Config().StreamProbe }))
		assert.Equal(t, c.listener, a.stream.listener != nil, c.name)
		assert.Equal(t, c.probes, probes, c.name)
	}
	_, err := Start(context.Background(), Config{Plain: true, DisableStream: true, StreamBind: "127.0.0.1:0"})
	assert.ErrorContains(t, err, "StreamBind is set but DisableStream")
	for _, bad := range []Config{{StreamTimeout: -1}, {MaxStreamConns: -1}, {MaxStreamBytes: -1}, {MaxStreamMembers: -1}, {MaxStreamConns: 4, MaxStreamConnsPerSource: 5}} {
		bad.Plain = true
		_, err := Start(context.Background(), bad)
		assert.Error(t, err, "%+v", bad)
	}
}
