package agent

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// cutUDP is a UDP transport that drops the datagrams it receives from
// the addresses in cut (a firewall between two members); its stream
// listener, which the agent opens on the same port, is untouched.
type cutUDP struct {
	*transport.UDP
	mu  sync.Mutex
	cut map[netip.AddrPort]bool
	ch  chan transport.Packet
}

func newCutUDP(t *testing.T) *cutUDP {
	t.Helper()
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	c := &cutUDP{UDP: u, cut: map[netip.AddrPort]bool{}, ch: make(chan transport.Packet, 1024)}
	go func() {
		defer close(c.ch)
		for p := range u.Packets() {
			c.mu.Lock()
			drop := c.cut[p.From]
			c.mu.Unlock()
			if !drop {
				c.ch <- p
			}
		}
	}()
	return c
}

func (c *cutUDP) Packets() <-chan transport.Packet { return c.ch }

func (c *cutUDP) drop(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut[netip.MustParseAddrPort(addr)] = true
}

// startCut starts an agent over a cutUDP shim (startOnShim).
func startCut(t *testing.T, cfg Config) (*Agent, *cutUDP) {
	t.Helper()
	return startOnShim(t, cfg, newCutUDP)
}

// user37 F10 over sockets: A and B cannot reach each other by UDP (stream
// probes off), C and D relay their probes. A plain-mode insider at
// 127.0.0.2 opens 32 sockets (32 ports), announces each as a member from
// its own address and acks their pings, so each is a vouched origin, and
// each sends C and D ping-reqs for a silent address, 4 at a time
// (maxRelaysPerOrigin), every 20 ms for 15 s: 32 × 4 = 128, all the relays
// C and D hold. Before the cap per host (maxRelaysPerHost) C and D refused
// A's and B's ping-reqs, and A and B declared each other dead (user37: in 7
// of 8 runs, after 2.6 to 11.4 s); now the insider's origins share 32
// relays. Without -short only: 15 s of flood.
func TestRelayFloodFromOneHost(t *testing.T) {
	if testing.Short() {
		t.Skip("15 s of flood; TestRelaysPerHost (swim) checks the cap")
	}
	const host, ids, window = "127.0.0.2", 32, 15 * time.Second
	probe, err := listenUDP(transport.Config{Bind: host + ":0"})
	if err != nil {
		t.Skipf("no %s to bind on this machine: %v", host, err)
	}
	_ = probe.Close()
	cfg := Config{Plain: true, Protocol: fast(), DisableStreamProbes: true}
	a, ca := startCut(t, cfg)
	b, cb := startCut(t, cfg)
	c := start(t, cfg)
	d := start(t, cfg)
	join(t, c, d)
	join(t, a, c)
	join(t, b, c)
	require.Eventually(t, func() bool { return alive(a) == 4 && alive(b) == 4 && alive(c) == 4 && alive(d) == 4 },
		10*time.Second, 5*time.Millisecond)
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	var socks []*transport.UDP
	var nodes []swim.Node
	for i := range ids {
		u, err := listenUDP(transport.Config{Bind: host + ":0", QueueLen: 4096})
		require.NoError(t, err)
		defer u.Close()
		socks = append(socks, u)
		nodes = append(nodes, swim.Node{ID: swim.ID(fmt.Sprintf("ins%02d", i)), Addr: u.LocalAddr().String()})
	}
	silent, err := listenUDP(transport.Config{Bind: host + ":0"})
	require.NoError(t, err)
	defer silent.Close()
	target := swim.Node{ID: "silent", Addr: silent.LocalAddr().String()}
	sent := 0
	send := func(i int, to swim.Node, pk swim.Packet) {
		pk.From, pk.To = nodes[i], to
		data, _, err := codec.Encode(&pk)
		require.NoError(t, err)
		require.NoError(t, socks[i].Send(netip.MustParseAddrPort(to.Addr), data))
		sent += len(data)
	}
	answer := func() { // the insider acks every ping, so stays alive and verified
		for i, u := range socks {
			for len(u.Packets()) > 0 {
				p := <-u.Packets()
				if pk, err := codec.Decode(p.Data); err == nil && pk.Kind == swim.MsgPing {
					send(i, pk.From, swim.Packet{Kind: swim.MsgAck, Ack: swim.Ack{Seq: pk.Ping.Seq}})
				}
			}
		}
	}
	relays := []*Agent{c, d}
	for i := range socks {
		for _, r := range relays {
			send(i, r.Self(), swim.Packet{Kind: swim.MsgGossip, Updates: []swim.Update{
				{Kind: swim.UpdateAlive, Node: nodes[i], From: nodes[i].ID, Incarnation: 1}}})
		}
	}
	require.Eventually(t, func() bool {
		answer()
		return alive(c) >= 4+ids && alive(d) >= 4+ids
	}, 10*time.Second, 5*time.Millisecond, "C and D hold the insider's members")

	ca.drop(b.Self().Addr)
	cb.drop(a.Self().Addr)
	refusedBefore := c.Stats().Protocol.RelaysRefused + d.Stats().Protocol.RelaysRefused
	state := func(x, y *Agent) swim.State {
		for _, m := range x.Members() {
			if m.Node.ID == y.Self().ID {
				return m.State
			}
		}
		return swim.StateDead
	}
	begin := time.Now()
	seq := uint32(0)
	var suspect, dead time.Duration
	for time.Since(begin) < window {
		for i := range socks {
			for _, r := range relays {
				for range 4 {
					seq++
					send(i, r.Self(), swim.Packet{Kind: swim.MsgPingReq, PingReq: swim.PingReq{Seq: seq, Target: target}})
				}
			}
		}
		answer()
		if suspect == 0 && (state(a, b) == swim.StateSuspect || state(b, a) == swim.StateSuspect) {
			suspect = time.Since(begin)
		}
		if state(a, b) == swim.StateDead || state(b, a) == swim.StateDead {
			dead = time.Since(begin)
			break
		}
		time.Sleep(20 * time.Millisecond) // the insider's pace
	}
	refused := c.Stats().Protocol.RelaysRefused + d.Stats().Protocol.RelaysRefused - refusedBefore
	t.Logf("insider sent %d B; relays refused at C and D: %d; A sees B %v, B sees A %v; first suspicion after %v, dead after %v (0: none in %v)",
		sent, refused, state(a, b), state(b, a), suspect, dead, window)
	assert.Zero(t, dead, "A or B declared the other dead")
}
