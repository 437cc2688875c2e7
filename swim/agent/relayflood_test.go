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
	var atts []*attacker
	for i := range ids {
		atts = append(atts, newAttackerOn(t, codec, swim.ID(fmt.Sprintf("ins%02d", i)), host))
	}
	silent, err := listenUDP(transport.Config{Bind: host + ":0"})
	require.NoError(t, err)
	defer silent.Close()
	target := swim.Node{ID: "silent", Addr: silent.LocalAddr().String()}
	answer := func() { // the insider acks every ping, so stays alive and verified
		for _, at := range atts {
			at.answer(t)
		}
	}
	relays := []*Agent{c, d}
	for _, at := range atts {
		for _, r := range relays {
			at.send(t, r.Self(), swim.Packet{Kind: swim.MsgGossip, Updates: []swim.Update{
				{Kind: swim.UpdateAlive, Node: at.self, From: at.self.ID, Incarnation: 1}}})
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
		for _, at := range atts {
			for _, r := range relays {
				for range 4 {
					seq++
					at.send(t, r.Self(), swim.Packet{Kind: swim.MsgPingReq, PingReq: swim.PingReq{Seq: seq, Target: target}})
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
	sent := 0
	for _, at := range atts {
		sent += at.sent
	}
	refused := c.Stats().Protocol.RelaysRefused + d.Stats().Protocol.RelaysRefused - refusedBefore
	t.Logf("insider sent %d B; relays refused at C and D: %d; A sees B %v, B sees A %v; first suspicion after %v, dead after %v (0: none in %v)",
		sent, refused, state(a, b), state(b, a), suspect, dead, window)
	assert.Zero(t, dead, "A or B declared the other dead")
}
