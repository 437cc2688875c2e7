package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/transport"
)

// fdCluster runs fdkit's swim agents in one mode.
type fdCluster struct {
	p    Params
	mode swim.Mode
	name string
}

func (c fdCluster) Library() string { return c.name }

type fdNode struct {
	name   string
	imp    *Impair
	a      *agent.Agent
	cancel context.CancelFunc
	addr   string // UDP and stream address
}

func (n *fdNode) Name() string    { return n.name }
func (n *fdNode) Impair() *Impair { return n.imp }
func (n *fdNode) Alive() int {
	k := 0
	for _, m := range n.a.Members() {
		if m.State == swim.StateAlive || m.State == swim.StateSuspect {
			k++
		}
	}
	return k
}
func (n *fdNode) Seen() []string {
	var s []string
	for _, m := range n.a.Members() {
		if m.State == swim.StateAlive || m.State == swim.StateSuspect {
			s = append(s, string(m.Node.ID))
		}
	}
	return s
}
func (n *fdNode) Stop() {
	unregisterStream(n.addr)
	n.imp.Kill()
	n.imp.Close()
	n.cancel()
	<-n.a.Done()
}

// StartOne starts member i, joined through seeds (none for the first).
func (c fdCluster) StartOne(i int, seeds []string, rec *Recorder, seed uint64) (Node, string, error) {
	name := c.p.memberName(i)
	imp := NewImpair(seed + uint64(i))
	var u *transport.UDP
	var a *agent.Agent
	ctx, cancel := context.WithCancel(context.Background())
	// The agent's stream listener takes the UDP port's number on TCP;
	// when another process holds it, try another port.
	for try := 0; ; try++ {
		var err error
		if u, err = transport.Listen(transport.Config{}); err != nil {
			cancel()
			return nil, "", err
		}
		cfg := agent.Config{
			ID:           swim.ID(name),
			Transport:    newFDTransport(u, imp),
			Protocol:     c.p.swimConfig(c.mode),
			Seed:         seed*1000 + uint64(i) + 1,
			LeaveTimeout: new(100 * time.Millisecond),
			// memberlist calls its EventDelegate inline and loses no
			// event; by default fdkit drops events a full channel
			// cannot take, which would hide false positives.
			BlockingDelivery: true,
			// The stream path (TCP pings, views over TCP) goes through
			// the Impair as memberlist's streams do (mlTransport):
			// held while paused, refused once killed (held unanswered
			// once silently killed, timed out at the dial's deadline
			// once its SYNs are dropped), counted.
			StreamWrap: func(conn net.Conn, inbound bool) (net.Conn, error) {
				imp.wait()
				if imp.Killed() {
					if inbound && imp.silent.Load() {
						imp.hold(conn) // accepted, never answered
						<-imp.closed
					}
					return nil, errors.New("killed")
				}
				if !inbound {
					if err := dialRefused(conn.RemoteAddr().String()); err != nil {
						return nil, err
					}
					if dialDropped(conn.RemoteAddr().String()) {
						return nil, awaitDropped(conn)
					}
					imp.sent(0)
				}
				return &countConn{Conn: conn, imp: imp}, nil
			},
		}
		if c.p.Key != nil {
			cfg.Keys = [][]byte{c.p.Key}
		} else {
			cfg.Plain = true
		}
		a, err = agent.Start(ctx, cfg)
		if err == nil {
			break
		}
		if try < 5 && strings.Contains(err.Error(), "stream listener") {
			continue
		}
		cancel()
		return nil, "", err
	}
	ev, _ := a.Subscribe(4096)
	go func() {
		for e := range ev {
			if e.Kind == swim.EventDead {
				rec.Dead(name, string(e.Node.ID))
			}
		}
	}()
	nd := &fdNode{name: name, imp: imp, a: a, cancel: cancel, addr: u.LocalAddr().String()}
	if len(seeds) > 0 {
		jctx, jcancel := context.WithTimeout(ctx, 10*time.Second)
		err := a.Join(jctx, seeds...)
		jcancel()
		if err != nil {
			nd.Stop()
			return nil, "", fmt.Errorf("fdkit join: %w", err)
		}
	}
	registerStream(nd.addr, imp)
	return nd, nd.addr, nil
}

// fdTransport puts an Impair in front of a transport.UDP, exactly as
// mlTransport does for memberlist.
type fdTransport struct {
	inner transport.Transport
	imp   *Impair
	out   chan transport.Packet
}

func newFDTransport(inner transport.Transport, imp *Impair) *fdTransport {
	t := &fdTransport{inner: inner, imp: imp, out: make(chan transport.Packet, 1024)}
	go func() {
		defer close(t.out)
		for p := range inner.Packets() {
			imp.wait()
			if imp.drop() {
				continue
			}
			p.At = time.Now()
			t.out <- p
		}
	}()
	return t
}

func (t *fdTransport) LocalAddr() netip.AddrPort        { return t.inner.LocalAddr() }
func (t *fdTransport) Packets() <-chan transport.Packet { return t.out }
func (t *fdTransport) Close() error                     { return t.inner.Close() }
func (t *fdTransport) Send(to netip.AddrPort, b []byte) error {
	t.imp.wait()
	if t.imp.Killed() {
		return nil
	}
	t.imp.sent(len(b))
	if t.imp.drop() {
		return nil
	}
	return t.inner.Send(to, b)
}
