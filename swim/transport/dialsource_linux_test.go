package transport

import (
	"context"
	"net"
	"net/netip"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// optNoPort reads IP_BIND_ADDRESS_NO_PORT of c's socket.
func optNoPort(t *testing.T, c *Conn) int {
	rc, err := c.c.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	v, gerr := 0, error(nil)
	require.NoError(t, rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort)
	}))
	require.NoError(t, gerr)
	return v
}

// A stream dialled from Source leaves from it and takes its port when it
// connects (IP_BIND_ADDRESS_NO_PORT); one dialled from the kernel's choice
// is left as the kernel makes it.
func TestDialStreamSourceBindsNoPort(t *testing.T) {
	l, err := ListenStream(StreamConfig{}, func(c *Conn) { _, _ = c.ReadFrame() })
	require.NoError(t, err)
	defer l.Close()
	src := netip.MustParseAddr("127.0.0.3")
	c, err := DialStream(context.Background(), l.LocalAddr(), StreamConfig{Source: src})
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, src, c.c.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap(), "dialled from Source")
	assert.Equal(t, 1, optNoPort(t, c))
	plain, err := DialStream(context.Background(), l.LocalAddr(), StreamConfig{})
	require.NoError(t, err)
	defer plain.Close()
	assert.Equal(t, 0, optNoPort(t, plain))
}
