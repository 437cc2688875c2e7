package transport

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// second is a loopback address other than 127.0.0.1: Linux answers every
// address of 127.0.0.0/8; elsewhere the tests that need it skip.
var second = netip.MustParseAddr("127.0.0.2")

func needSecond(t *testing.T) {
	t.Helper()
	if !IsLocal(second) {
		t.Skip("127.0.0.2 is not an address of this host (Linux loopback accepts all of 127/8)")
	}
}

// A socket bound to 0.0.0.0 sends from the address of the route (127.0.0.1
// towards 127.0.0.1) unless Source says otherwise: with Source 127.0.0.2
// its datagrams come from 127.0.0.2, and so do the streams it dials.
func TestSourceAddress(t *testing.T) {
	needSecond(t)
	dst := listen(t, Config{})

	plain := listen(t, Config{Bind: "0.0.0.0:0"})
	require.NoError(t, plain.Send(dst.LocalAddr(), []byte("a")))
	assert.Equal(t, netip.MustParseAddr("127.0.0.1"), recv(t, dst).From.Addr(), "without Source the route's address")

	src := listen(t, Config{Bind: "0.0.0.0:0", Source: second})
	require.NoError(t, src.Send(dst.LocalAddr(), []byte("b")))
	p := recv(t, dst)
	assert.Equal(t, netip.AddrPortFrom(second, src.LocalAddr().Port()), p.From)

	// The same for a wildcard IPv6 socket (dual stack) sending to IPv4.
	if six, err := Listen(Config{Bind: "[::]:0", Source: second}); err == nil {
		defer six.Close()
		require.NoError(t, six.Send(dst.LocalAddr(), []byte("c")))
		assert.Equal(t, second, recv(t, dst).From.Addr())
	}

	from := make(chan netip.AddrPort, 1)
	l, err := ListenStream(StreamConfig{}, func(c *Conn) { from <- c.RemoteAddr() })
	require.NoError(t, err)
	defer l.Close()
	c, err := DialStream(context.Background(), l.LocalAddr(), StreamConfig{Source: second, Timeout: 5 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	select {
	case a := <-from:
		assert.Equal(t, second, a.Addr())
	case <-time.After(5 * time.Second):
		t.Fatal("no stream accepted within 5 s")
	}
}

// A Source that is not an address of this host, or that contradicts a
// specific Bind, is refused at Listen (sendmsg would fail on every
// datagram).
func TestSourceRefused(t *testing.T) {
	_, err := Listen(Config{Bind: "0.0.0.0:0", Source: netip.MustParseAddr("192.0.2.1")})
	assert.ErrorContains(t, err, "Source 192.0.2.1 is not an address of this host")
	_, err = Listen(Config{Bind: "127.0.0.1:0", Source: second})
	assert.ErrorContains(t, err, "Source 127.0.0.2 with Bind 127.0.0.1:0: a socket bound to one address sends from it")
	u, err := Listen(Config{Bind: "127.0.0.1:0", Source: netip.MustParseAddr("127.0.0.1")})
	require.NoError(t, err)
	_ = u.Close()
}
