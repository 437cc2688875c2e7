package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Over real sockets, the pattern that drew 3.5 times its bytes before
// the budget counted every request (docs/experiments.md, "The budget per
// sender, every request counted"): a sender the group does not know, at
// its own address, sends a member one ping of several requests' size,
// then one of half a request's size every four protocol periods (each
// drew a request and its retry: 2.45 times the bytes at a5f066c~1). The
// view requests (MsgJoin without digest) it gets back total at most
// twice the bytes of its pings, as the member sizes packets
// (swim.Packet.Size).
func TestViewRequestsWithinTwiceReceivedOverSockets(t *testing.T) {
	a := group(t, 2, Config{Plain: true})[0]
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	sock, err := listenUDP(transport.Config{Bind: "127.0.0.1:0"})
	require.NoError(t, err)
	defer sock.Close()
	j := swim.Node{ID: "stranger", Addr: sock.LocalAddr().String()}
	dst, err := agentAddr(a.Self().Addr)
	require.NoError(t, err)

	sent, got, requests := 0, 0, 0
	read := func() {
		for {
			select {
			case p := <-sock.Packets():
				pk, err := codec.Decode(p.Data)
				if err != nil {
					t.Errorf("a datagram from the member: %v", err) // not FailNow: read runs in Eventually's goroutine
					continue
				}
				if pk.Kind == swim.MsgJoin && pk.Digest.IsZero() {
					if pk.To.Addr == "" {
						pk.To = j // the size as the member counted it
					}
					got += pk.Size()
					requests++
				}
			default:
				return
			}
		}
	}
	g := 0
	ping := func(seq uint32, updates int) []byte {
		pk := swim.Packet{Kind: swim.MsgPing, From: j, To: a.Self(), Ping: swim.Ping{Seq: seq}}
		for range updates {
			n := swim.Node{ID: swim.ID(fmt.Sprintf("u%d", g)), Addr: fmt.Sprintf("192.0.2.%d:7946", 1+g%250)}
			pk.Updates = append(pk.Updates, swim.Update{Kind: swim.UpdateAlive, Node: n, From: n.ID})
			g++
		}
		data, _, err := codec.Encode(&pk)
		require.NoError(t, err)
		back, err := codec.Decode(data)
		require.NoError(t, err)
		sent += back.Size() // as the member reads it
		return data
	}
	require.NoError(t, sock.Send(dst, ping(0, 6)))
	require.Eventually(t, func() bool { read(); return requests > 0 }, 10*time.Second, time.Millisecond, "no view request")
	req := got
	// The smallest ping that draws a request, as the member reads it: at
	// least half a request's size.
	small := 0
	for ; ; small++ {
		pk := swim.Packet{Kind: swim.MsgPing, From: j, To: a.Self()}
		for i := range small {
			n := swim.Node{ID: swim.ID(fmt.Sprintf("u%d", g+i)), Addr: fmt.Sprintf("192.0.2.%d:7946", 1+(g+i)%250)}
			pk.Updates = append(pk.Updates, swim.Update{Kind: swim.UpdateAlive, Node: n, From: n.ID})
		}
		data, _, err := codec.Encode(&pk)
		require.NoError(t, err)
		back, err := codec.Decode(data)
		require.NoError(t, err)
		if 2*back.Size() >= req {
			break
		}
	}
	for i := range 12 {
		periodsFrom(t, a)(4) // the retry of the last request is out
		read()
		require.NoError(t, sock.Send(dst, ping(uint32(i+1), small)))
	}
	periodsFrom(t, a)(5) // retries due within four periods would be out
	read()
	t.Logf("%d view requests, %d B, for %d B of pings", requests, got, sent)
	assert.Positive(t, requests, "the sender was never asked: nothing tested")
	assert.LessOrEqual(t, got, 2*sent)
}
