package agent

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// attacker is an insider's UDP socket: it encodes forged
// packets from self with codec, sends them to members and counts the
// bytes it sends.
type attacker struct {
	*transport.UDP
	codec *wire.Codec
	self  swim.Node
	sent  int
}

// newAttacker listens on 127.0.0.1 (newAttackerOn).
func newAttacker(t *testing.T, codec *wire.Codec, id swim.ID) *attacker {
	t.Helper()
	return newAttackerOn(t, codec, id, "127.0.0.1")
}

// newAttackerOn listens on host, any port, with a queue of 4,096
// datagrams as the node id; the socket closes when t ends.
func newAttackerOn(t *testing.T, codec *wire.Codec, id swim.ID, host string) *attacker {
	t.Helper()
	u, err := listenUDP(transport.Config{Bind: host + ":0", QueueLen: 4096})
	require.NoError(t, err)
	t.Cleanup(func() { u.Close() })
	return &attacker{UDP: u, codec: codec, self: swim.Node{ID: id, Addr: u.LocalAddr().String()}}
}

// send sends pk from the attacker to to and adds its size to sent.
func (a *attacker) send(t *testing.T, to swim.Node, pk swim.Packet) {
	t.Helper()
	pk.From = a.self
	n, err := a.write(to, pk)
	require.NoError(t, err)
	a.sent += n
}

// write encodes pk to to, from a.self unless pk names another sender, and
// sends it; it returns the bytes sent. Unlike send it neither fails a test
// nor counts in sent, so goroutines may call it (under their own lock).
func (a *attacker) write(to swim.Node, pk swim.Packet) (int, error) {
	if pk.From.ID == "" {
		pk.From = a.self
	}
	data, dst, err := encodeTo(a.codec, to, pk)
	if err != nil {
		return 0, err
	}
	if err := a.Send(dst, data); err != nil {
		return 0, err
	}
	return len(data), nil
}

// encodeTo encodes pk, addressed to to, with codec and resolves to's
// address: the datagram a forger writes and where (attacker.write,
// spoofer.send).
func encodeTo(codec *wire.Codec, to swim.Node, pk swim.Packet) ([]byte, netip.AddrPort, error) {
	pk.To = to
	data, _, err := codec.Encode(&pk)
	if err != nil {
		return nil, netip.AddrPort{}, err
	}
	dst, err := agentAddr(to.Addr)
	return data, dst, err
}

// answer acks every ping already queued, without waiting, so the insider
// stays alive.
func (a *attacker) answer(t *testing.T) {
	t.Helper()
	for len(a.Packets()) > 0 {
		p := <-a.Packets()
		if pk, err := a.codec.Decode(p.Data); err == nil && pk.Kind == swim.MsgPing {
			a.send(t, pk.From, swim.Packet{Kind: swim.MsgAck, Ack: swim.Ack{Seq: pk.Ping.Seq}})
		}
	}
}
