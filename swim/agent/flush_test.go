package agent

import (
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// failing wraps a UDP transport and fails every Send while fail is set.
type failing struct {
	*transport.UDP
	fail atomic.Bool
}

func (f *failing) Send(to netip.AddrPort, b []byte) error {
	if f.fail.Load() {
		return errors.New("injected send failure")
	}
	return f.UDP.Send(to, b)
}

func TestSendErrorsCounted(t *testing.T) {
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	tr := &failing{UDP: u}
	a := start(t, Config{Plain: true, Transport: tr})
	b := start(t, Config{Plain: true})
	join(t, b, a)
	tr.fail.Store(true)
	require.Eventually(t, func() bool { return a.Stats().SendErrors > 0 }, 5*time.Second, 10*time.Millisecond)
	tr.fail.Store(false)
}

// TestBadPeerAddressCounted: a member announced with an address that is
// not ip:port is refused (memberAddr) and counted; a ping claiming such an
// address is answered there, which fails and is counted as a send error.
func TestBadPeerAddressCounted(t *testing.T) {
	a := start(t, Config{Plain: true})
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	defer u.Close()
	for _, p := range []swim.Packet{
		{Kind: swim.MsgSync, From: swim.Node{ID: "x", Addr: "127.0.0.1:9"}, To: a.Self(),
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: swim.Node{ID: "bogus", Addr: "not-an-address"}, From: "bogus"}}},
		{Kind: swim.MsgPing, From: swim.Node{ID: "y", Addr: "not-an-address"}, To: a.Self(), Ping: swim.Ping{Seq: 1}},
	} {
		pkt, _, err := codec.Encode(&p)
		require.NoError(t, err)
		require.NoError(t, u.Send(netip.MustParseAddrPort(a.Self().Addr), pkt))
	}
	require.Eventually(t, func() bool { return a.Stats().Protocol.AddrsRefused == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return a.Stats().SendErrors > 0 }, 5*time.Second, 10*time.Millisecond)
}
