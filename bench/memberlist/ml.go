package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/hashicorp/memberlist"
)

// mlCluster runs hashicorp/memberlist with DefaultLANConfig. With
// piggybackOnly its separate gossip loop (every 200 ms to 3 members) is
// turned off, so updates travel only on probes and acks, as in SWIM.
type mlCluster struct {
	cfg           Params
	piggybackOnly bool
}

func (c mlCluster) Library() string {
	if c.piggybackOnly {
		return "memberlist-piggyback"
	}
	return "memberlist"
}

type mlNode struct {
	name string
	imp  *Impair
	ml   *memberlist.Memberlist
	addr string // UDP and stream address
}

func (n *mlNode) Name() string    { return n.name }
func (n *mlNode) Impair() *Impair { return n.imp }
func (n *mlNode) Alive() int      { return n.ml.NumMembers() }
func (n *mlNode) Seen() []string {
	var s []string
	for _, m := range n.ml.Members() {
		s = append(s, m.Name)
	}
	return s
}
func (n *mlNode) Stop() {
	unregisterStream(n.addr)
	n.imp.Close()
	_ = n.ml.Shutdown()
}

type mlEvents struct {
	rec  *Recorder
	self string
}

func (e *mlEvents) NotifyJoin(*memberlist.Node)   {}
func (e *mlEvents) NotifyUpdate(*memberlist.Node) {}

// NotifyLeave fires for dead and left members alike (memberlist does not
// set Node.State here); no member leaves voluntarily in these scenarios.
func (e *mlEvents) NotifyLeave(n *memberlist.Node) { e.rec.Dead(e.self, n.Name) }

// StartOne starts member i, joined through seeds (none for the first)
// with memberlist's Join, as its users do.
func (c mlCluster) StartOne(i int, seeds []string, rec *Recorder, seed uint64) (Node, string, error) {
	name := c.cfg.memberName(i)
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{
		BindAddrs: []string{"127.0.0.1"},
		Logger:    log.New(io.Discard, "", 0),
	})
	if err != nil {
		return nil, "", err
	}
	imp := NewImpair(seed + uint64(i))
	cfg := memberlist.DefaultLANConfig()
	cfg.Name = name
	cfg.BindAddr = "127.0.0.1"
	cfg.BindPort = nt.GetAutoBindPort()
	cfg.AdvertiseAddr = "127.0.0.1"
	cfg.AdvertisePort = cfg.BindPort
	cfg.LogOutput = io.Discard
	cfg.Transport = newMLTransport(nt, imp)
	cfg.Events = &mlEvents{rec: rec, self: name}
	c.cfg.applyML(cfg)
	if c.piggybackOnly {
		cfg.GossipNodes = 0
	}
	ml, err := memberlist.Create(cfg)
	if err != nil {
		return nil, "", err
	}
	if len(seeds) > 0 {
		if _, err := ml.Join(seeds); err != nil {
			_ = ml.Shutdown()
			return nil, "", fmt.Errorf("memberlist join: %w", err)
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", cfg.BindPort)
	registerStream(addr, imp)
	return &mlNode{name: name, imp: imp, ml: ml, addr: addr}, addr, nil
}

// mlTransport puts an Impair in front of memberlist's NetTransport. UDP
// datagrams are dropped, held and counted; TCP streams (memberlist's
// push-pull and fallback pings) are held while paused, refused once killed,
// and counted (one message per stream, bytes written).
type mlTransport struct {
	*memberlist.NetTransport
	imp     *Impair
	packets chan *memberlist.Packet
	streams chan net.Conn
}

var _ memberlist.NodeAwareTransport = (*mlTransport)(nil)

func newMLTransport(nt *memberlist.NetTransport, imp *Impair) *mlTransport {
	t := &mlTransport{NetTransport: nt, imp: imp, packets: make(chan *memberlist.Packet, 1024), streams: make(chan net.Conn, 64)}
	go func() {
		for p := range nt.PacketCh() {
			imp.wait()
			if imp.drop() {
				continue
			}
			p.Timestamp = time.Now()
			t.packets <- p
		}
	}()
	go func() {
		for c := range nt.StreamCh() {
			imp.wait()
			if imp.Killed() {
				if imp.silent.Load() {
					imp.hold(c) // accepted, never answered
				} else {
					_ = c.Close()
				}
				continue
			}
			t.streams <- &countConn{Conn: c, imp: imp}
		}
	}()
	return t
}

func (t *mlTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }
func (t *mlTransport) StreamCh() <-chan net.Conn           { return t.streams }

func (t *mlTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

func (t *mlTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.imp.wait()
	if t.imp.Killed() {
		return time.Now(), nil
	}
	t.imp.sent(len(b))
	if t.imp.drop() {
		return time.Now(), nil
	}
	return t.NetTransport.WriteToAddress(b, a)
}

func (t *mlTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

func (t *mlTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	t.imp.wait()
	if t.imp.Killed() {
		return nil, fmt.Errorf("killed")
	}
	if err := dialRefused(a.Addr); err != nil {
		return nil, err
	}
	if dialDropped(a.Addr) {
		time.Sleep(timeout) // SYNs retransmitted, never answered
		return nil, errSYNDropped
	}
	c, err := t.NetTransport.DialAddressTimeout(a, timeout)
	if err != nil {
		return nil, err
	}
	t.imp.sent(0)
	return &countConn{Conn: c, imp: t.imp}, nil
}

type countConn struct {
	net.Conn
	imp *Impair
}

func (c *countConn) Write(b []byte) (int, error) {
	c.imp.wait()
	n, err := c.Conn.Write(b)
	c.imp.bytes.Add(uint64(n))
	return n, err
}

func (c *countConn) Read(b []byte) (int, error) {
	c.imp.wait()
	return c.Conn.Read(b)
}
