package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Over real sockets, forged plain pings from ever new IDs claiming a
// victim's address, sent from the victim's socket (as a spoofer would)
// and from another one, to every member of a group with 400 bytes of
// metadata that broadcasts 1,000-byte messages meanwhile: the bytes the
// group sends the victim stay within twice the bytes forged. Without the
// bound (swim/reply.go) each ping was answered by an ack filled with the
// queue's updates and the broadcasts (docs/experiments.md gives the ratio
// measured then).
func TestForgedPingsReflectWithinTwice(t *testing.T) {
	for _, fromVictim := range []bool{true, false} {
		t.Run(fmt.Sprint("from the victim's socket=", fromVictim), func(t *testing.T) {
			cfg := Config{Plain: true, Protocol: fast()}
			cfg.Protocol.Meta = []byte(strings.Repeat("m", 400))
			as := group(t, 3, cfg)
			codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
			require.NoError(t, err)
			victim := newVictim(t, codec)
			sender := victim.UDP
			if !fromVictim {
				sender, err = listenUDP(transport.Config{Bind: "127.0.0.1:0"})
				require.NoError(t, err)
				defer sender.Close()
			}
			forged, pings := 0, 0
			for r := range 10 {
				for k, a := range as {
					require.NoError(t, a.Broadcast(context.Background(), fmt.Sprintf("k%d-%d", k, r), []byte(strings.Repeat("b", 1000))))
				}
				for k, a := range as {
					f := swim.Node{ID: swim.ID(fmt.Sprintf("f%d-%d", r, k)), Addr: victim.LocalAddr().String()}
					pk := swim.Packet{Kind: swim.MsgPing, From: f, To: a.Self(), Ping: swim.Ping{Seq: uint32(r)}}
					data, _, err := codec.Encode(&pk)
					require.NoError(t, err)
					dst, err := agentAddr(a.Self().Addr)
					require.NoError(t, err)
					require.NoError(t, sender.Send(dst, data))
					forged += len(data)
					pings++
				}
				require.Eventually(t, func() bool { victim.read(); return victim.acks == pings }, 10*time.Second, time.Millisecond, "every forged ping answered")
			}
			// What comes later (view requests and their retries, 2 and 6
			// periods later, if any) counts too: wait until every agent
			// ran 7 more periods (a loaded machine may run fewer in a
			// second), then read until 100 ms pass without a datagram.
			periodsFrom(t, as...)(7)
			victim.readUntilQuiet()
			ratio := float64(victim.got) / float64(forged)
			t.Logf("%d forged pings, %d bytes; the group sent the victim %d bytes: %.2f×", pings, forged, victim.got, ratio)
			assert.LessOrEqual(t, ratio, 2.0)
		})
	}
}
