package agent

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// The listener's known sources follow the events: a member's address is
// marked while it is alive or suspected, kept while another live member
// has it, moved with an update of its address, and unmarked once no live
// member has it; this member's own events mark nothing.
func TestKnownSourcesFollowEvents(t *testing.T) {
	a := start(t, Config{ID: "self"})
	l := a.stream.listener
	ev := func(kind swim.EventKind, id, addr string) swim.Event {
		return swim.Event{Kind: kind, Node: swim.Node{ID: swim.ID(id), Addr: addr}}
	}
	ip5, ip6, ip7 := netip.MustParseAddr("127.0.0.5"), netip.MustParseAddr("127.0.0.6"), netip.MustParseAddr("127.0.0.7")
	steps := []struct {
		name       string
		events     []swim.Event
		k5, k6, k7 bool
	}{
		{"two members join at one address", []swim.Event{ev(swim.EventJoin, "m1", "127.0.0.5:1"), ev(swim.EventJoin, "m2", "127.0.0.5:2")}, true, false, false},
		{"one of them dies", []swim.Event{ev(swim.EventDead, "m1", "127.0.0.5:1")}, true, false, false},
		{"the other moves", []swim.Event{ev(swim.EventUpdate, "m2", "127.0.0.7:2")}, false, false, true},
		{"a suspect is marked", []swim.Event{ev(swim.EventSuspect, "m3", "127.0.0.6:1")}, false, true, true},
		{"it refutes", []swim.Event{ev(swim.EventAlive, "m3", "127.0.0.6:1")}, false, true, true},
		{"it leaves", []swim.Event{ev(swim.EventLeave, "m3", "127.0.0.6:1")}, false, false, true},
		{"the dead one comes back, and self", []swim.Event{ev(swim.EventJoin, "m1", "127.0.0.5:1"), ev(swim.EventJoin, "self", "127.0.0.6:9")}, true, false, true},
		{"conflicts and stream-only mark nothing", []swim.Event{ev(swim.EventConflict, "m4", "127.0.0.6:2"), ev(swim.EventStreamOnly, "m5", "127.0.0.6:3")}, true, false, true},
	}
	for _, s := range steps {
		require.NoError(t, a.do(context.Background(), func() { a.markSources(s.events) }))
		assert.Equal(t, []bool{s.k5, s.k6, s.k7}, []bool{l.IsKnownSource(ip5), l.IsKnownSource(ip6), l.IsKnownSource(ip7)}, s.name)
	}
	var held map[netip.Addr]int
	require.NoError(t, a.do(context.Background(), func() { held = a.stream.known.refs }))
	assert.Equal(t, map[netip.Addr]int{ip5: 1, ip7: 1}, held, "one reference per live member")
}

// gatedConn holds every Write until its gate is closed.
type gatedConn struct {
	net.Conn
	gate <-chan struct{}
}

func (g *gatedConn) Write(p []byte) (int, error) {
	<-g.gate
	return g.Conn.Write(p)
}

// F1 of the attacker review (issue 27), over sockets: a member's reliable
// message whose stream was accepted but has not yet sent a byte survives
// a flood of streams that stall inside their first frame, 24 of them from
// eight loopback addresses the victim does not know, redialled as soon as
// they are closed. The member's stream is idle longest and without a
// frame, so before the listener knew its members' addresses it was the
// first to go.
func TestKnownMemberStreamSurvivesFlood(t *testing.T) {
	cfg := Config{Protocol: fast(), StreamTimeout: 30 * time.Second, LeaveTimeout: new(100 * time.Millisecond)}
	vc := cfg
	vc.ID, vc.Seed = "victim", 1
	vc.MaxStreamConns, vc.MaxStreamConnsPerSource = 16, 16 // crowded above 4 streams: no source here is
	victim := start(t, vc)
	var gate atomic.Pointer[chan struct{}]
	mc := cfg
	mc.ID, mc.Seed = "member", 2
	mc.StreamWrap = func(c net.Conn, inbound bool) (net.Conn, error) {
		if g := gate.Load(); g != nil && !inbound {
			return &gatedConn{Conn: c, gate: *g}, nil
		}
		return c, nil
	}
	member := start(t, mc)
	join(t, member, victim)
	require.Eventually(t, func() bool {
		return stateOf(victim, "member") == swim.StateAlive
	}, 10*time.Second, 10*time.Millisecond, "the victim holds the member alive")
	require.True(t, victim.stream.listener.IsKnownSource(netip.MustParseAddr("127.0.0.1")), "the member's address is known")
	msgs, cancel := victim.Receive(4)
	defer cancel()

	open := make(chan struct{})
	gate.Store(&open)
	in := victim.Stats().StreamsIn
	sent := make(chan error, 1)
	data := make([]byte, 10<<10)
	go func() {
		ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
		defer stop()
		sent <- member.SendReliable(ctx, victim.Self().ID, data)
	}()
	require.Eventually(t, func() bool { return victim.Stats().StreamsIn > in }, 10*time.Second, time.Millisecond, "the member's stream is served")

	stopFlood := unframedFlood(t, netip.MustParseAddrPort(victim.Self().Addr), 8, 3)
	require.Eventually(t, func() bool { return victim.Stats().StreamsEvicted >= 100 }, 20*time.Second, time.Millisecond, "the flood cycles the slots")
	close(open)
	require.NoError(t, <-sent, "the member's reliable message")
	assert.Equal(t, data, receiveOne(t, msgs).Data)
	stopFlood()
	t.Logf("victim: %d streams evicted", victim.Stats().StreamsEvicted)
}

// unframedFlood opens perSrc streams from each of srcs loopback addresses
// 127.0.1.10 onwards to victim, each sending a frame's length prefix (600)
// and 10 bytes of it, and redials each as soon as the victim closes it,
// until the returned stop.
func unframedFlood(t *testing.T, victim netip.AddrPort, srcs, perSrc int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	frame := append(binary.BigEndian.AppendUint32(nil, 600), make([]byte, 10)...)
	for i := range srcs * perSrc {
		src := fmt.Sprintf("127.0.1.%d", 10+i/perSrc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: time.Second}
				c, err := d.Dial("tcp", victim.String())
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				closed := make(chan struct{})
				go func() {
					select {
					case <-done:
					case <-closed:
					}
					_ = c.Close()
				}()
				if _, err := c.Write(frame); err == nil {
					_, _ = c.Read(make([]byte, 1)) // until the victim closes it
				}
				close(closed)
			}
		}()
	}
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// A member bound to an address that is not the kernel's choice towards
// the victim (127.0.0.2, where the route to 127.0.0.1 leaves from
// 127.0.0.1) dials its streams from the bound address, as its datagrams
// leave from it: the victim sees them come from the address it holds the
// member at, which it marks known. Before, they came from 127.0.0.1.
func TestStreamsLeaveFromBoundAddress(t *testing.T) {
	var mu sync.Mutex
	var from []netip.Addr
	victim := start(t, Config{ID: "victim", StreamWrap: func(c net.Conn, inbound bool) (net.Conn, error) {
		if inbound {
			mu.Lock()
			from = append(from, c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap())
			mu.Unlock()
		}
		return c, nil
	}})
	member := start(t, Config{ID: "member", Bind: "127.0.0.2:0"})
	join(t, member, victim)
	msgs, cancel := victim.Receive(4)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	require.NoError(t, member.SendReliable(ctx, victim.Self().ID, []byte("hello")))
	assert.Equal(t, []byte("hello"), receiveOne(t, msgs).Data)
	want := netip.MustParseAddr("127.0.0.2")
	mu.Lock()
	assert.Contains(t, from, want, "the reliable message's stream")
	for _, ip := range from {
		assert.Equal(t, want, ip, "every stream from the member")
	}
	mu.Unlock()
	assert.True(t, victim.stream.listener.IsKnownSource(want), "the member's address is known")
}

// Members the state machine forgets without an event (evicted to make
// room under MaxMembers) do not stay marked without bound: once the marks
// outnumber twice the live members by knownSlack, those no longer in the
// view are swept.
func TestKnownSourcesSweepForgottenMembers(t *testing.T) {
	a := start(t, Config{ID: "self"})
	l := a.stream.listener
	const n = 100 // none of them in the view: forgotten without an event
	for i := range n {
		addr := fmt.Sprintf("127.0.%d.%d:1", i/200+1, i%200+1)
		e := swim.Event{Kind: swim.EventJoin, Node: swim.Node{ID: swim.ID(fmt.Sprintf("m%d", i)), Addr: addr}}
		require.NoError(t, a.do(context.Background(), func() { a.markSources([]swim.Event{e}) }))
	}
	var marks, refs int
	require.NoError(t, a.do(context.Background(), func() { marks, refs = len(a.stream.known.byID), len(a.stream.known.refs) }))
	assert.LessOrEqual(t, marks, 2*1+knownSlack, "marks of members not in the view")
	assert.Equal(t, marks, refs)
	assert.False(t, l.IsKnownSource(netip.MustParseAddr("127.0.1.1")), "the first one, swept")
}
