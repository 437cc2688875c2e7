package main

import (
	"errors"
	"io"
	"log"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// A member killed with its SYNs dropped is neither refused nor connected
// to: dialDropped names it (and the addresses a member process was told
// of), a silently killed or refused one is not.
func TestDialDroppedOnlyForDroppedKills(t *testing.T) {
	for _, c := range []struct {
		addr string
		kill func(*Impair)
		want bool
	}{
		{"127.0.0.1:11", func(*Impair) {}, false},
		{"127.0.0.1:12", (*Impair).Kill, false},
		{"127.0.0.1:13", (*Impair).KillSilent, false},
		{"127.0.0.1:14", (*Impair).KillDropped, true},
	} {
		imp := NewImpair(1)
		registerStream(c.addr, imp)
		t.Cleanup(func() { unregisterStream(c.addr) })
		c.kill(imp)
		if got := dialDropped(c.addr); got != c.want {
			t.Errorf("%s: dialDropped %v, want %v", c.addr, got, c.want)
		}
		if c.want && dialRefused(c.addr) != nil {
			t.Errorf("%s: a dropped SYN refused", c.addr)
		}
	}
	if dialDropped("127.0.0.1:15") {
		t.Error("unknown address dropped")
	}
	markDropped("127.0.0.1:15")
	t.Cleanup(func() { droppedAddrs.Delete("127.0.0.1:15") })
	if !dialDropped("127.0.0.1:15") {
		t.Error("address marked by markDropped not dropped")
	}
}

// memberlist's dial to a member whose SYNs are dropped connects to
// nothing and fails with a timeout once its timeout has passed, as
// connect() does; the listener sees no connection.
func TestMemberlistDialDroppedTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			_ = c.Close()
		}
	}()
	target := NewImpair(2)
	registerStream(ln.Addr().String(), target)
	t.Cleanup(func() { unregisterStream(ln.Addr().String()) })
	target.KillDropped()

	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{"127.0.0.1"}, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer nt.Shutdown()
	tr := newMLTransport(nt, NewImpair(3))
	const timeout = 150 * time.Millisecond
	start := time.Now()
	c, err := tr.DialAddressTimeout(memberlist.Address{Addr: ln.Addr().String()}, timeout)
	if c != nil {
		_ = c.Close()
		t.Fatal("connected to a member whose SYNs are dropped")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("error %v, want a timeout", err)
	}
	if el := time.Since(start); el < timeout {
		t.Errorf("gave up after %v, before the dial's timeout %v", el, timeout)
	}
	select {
	case <-accepted:
		t.Error("the dead member's listener saw a connection")
	case <-time.After(50 * time.Millisecond):
	}
}

// fdkit's StreamWrap sees a dial only once connected: awaitDropped holds
// it until its deadline, the dial's, then closes it and fails with a
// timeout, which is what the agent would have met in connect().
func TestAwaitDroppedWaitsForTheDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			held <- c // accepted, never answered
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if s := <-held; s != nil {
			_ = s.Close()
		}
	}()
	deadline := time.Now().Add(150 * time.Millisecond)
	_ = c.SetDeadline(deadline)
	err = awaitDropped(c)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("error %v, want a timeout", err)
	}
	if now := time.Now(); now.Before(deadline) {
		t.Errorf("returned %v before the deadline", deadline.Sub(now))
	}
	if _, err := c.Write([]byte{1}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after awaitDropped: %v, want the connection closed", err)
	}
}
