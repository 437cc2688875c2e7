package agent

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hungListener listens on 127.0.0.1 with a backlog of 0, never accepts,
// and fills its accept queue, so that a further dial's SYN is dropped and
// the dial hangs, as to a host that stopped behind a firewall that drops.
// It returns "" when the kernel still completes a dial (the queue not
// full).
func hungListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	for range 3 { // fill the accept queue
		d := net.Dialer{Timeout: 300 * time.Millisecond}
		if c, err := d.Dial("tcp", addr); err == nil {
			t.Cleanup(func() { _ = c.Close() })
		}
	}
	d := net.Dialer{Timeout: 200 * time.Millisecond}
	if c, err := d.Dial("tcp", addr); err == nil {
		_ = c.Close()
		return ""
	}
	return addr
}

// TestShutdownEndsDial (atk27 F6): a reliable message whose dial hangs
// (its SYN dropped) when the agent is shut down ends with ErrStopped at
// once. Before, the dial ran on the caller's context alone and the call
// returned StreamTimeout (10 s by default) after Shutdown.
func TestShutdownEndsDial(t *testing.T) {
	addr := hungListener(t)
	if addr == "" {
		t.Skip("the listener's accept queue is not full: a dial would not hang")
	}
	a := start(t, Config{Plain: true})
	errc := make(chan error, 1)
	go func() { errc <- a.SendReliableToAddress(context.Background(), addr, []byte("x")) }()
	time.Sleep(100 * time.Millisecond) // the dial under way
	t0 := time.Now()
	require.NoError(t, a.Shutdown())
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, ErrStopped)
		assert.Less(t, time.Since(t0), 2*time.Second, "the send ended with the agent")
	case <-time.After(8 * time.Second):
		t.Fatal("the send outlived Shutdown by 8 s: its dial was not cut")
	}
}
