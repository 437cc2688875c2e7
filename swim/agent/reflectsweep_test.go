package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/wire"
)

// Forged pings of every size from 48 to 600 bytes on the wire, from the
// victim's own socket, one to each member of a group whose members carry
// 400 bytes of metadata (so a view request is about 500 bytes): for each
// size, the datagrams the group sends the victim (acks, view requests and
// their retries) stay within twice the forged datagrams, counted in bytes
// on the wire, in plain and in sealed mode (issue 27). The budgets used to
// count Packet.Size, which overstates a ping more than its answers: pings
// of 252 bytes drew 2.14 times their bytes.
func TestForgedPingSizesWithinTwiceOnTheWire(t *testing.T) {
	for _, plain := range []bool{true, false} {
		t.Run(fmt.Sprint("plain=", plain), func(t *testing.T) {
			t.Parallel()
			cfg := Config{Plain: plain, Protocol: fast()}
			cfg.Protocol.Meta = []byte(strings.Repeat("m", 400))
			as := group(t, 3, cfg)
			sec := &wire.Security{Plain: true}
			if !plain {
				kr, err := wire.NewKeyring(testKey)
				require.NoError(t, err)
				sec = &wire.Security{Keyring: kr}
			}
			codec, err := wire.NewCodec(wire.CodecConfig{Security: sec})
			require.NoError(t, err)
			victim := newVictim(t, codec)
			// forge returns a ping from id at the victim's address to a,
			// padded to size bytes on the wire with Alive updates of the
			// group's members and then with the ID's length.
			forge := func(a *Agent, id string, size int) []byte {
				pk := swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: swim.ID(id), Addr: victim.LocalAddr().String()}, To: a.Self()}
				for {
					data, _, err := codec.Encode(&pk)
					require.NoError(t, err)
					switch n := len(data); {
					case n == size:
						return data
					case n > size:
						t.Fatalf("a ping of %d bytes is above the %d wanted", n, size)
					case size-n > 60:
						m := as[len(pk.Updates)%len(as)].Self()
						pk.Updates = append(pk.Updates, swim.Update{Kind: swim.UpdateAlive, Node: m, From: m.ID})
					default:
						pk.From.ID += swim.ID(strings.Repeat("x", size-n))
					}
				}
			}
			low := 48
			if !plain {
				low = 48 + 37 // the seal's nonce, tag and timestamp
			}
			worst := 0.0
			for size := low; size <= 600; size += 25 {
				victim.got, victim.acks = 0, 0
				forged := 0
				for k, a := range as {
					data := forge(a, fmt.Sprintf("f%d-%d-", size, k), size)
					dst, err := agentAddr(a.Self().Addr)
					require.NoError(t, err)
					require.NoError(t, victim.Send(dst, data))
					forged += len(data)
				}
				require.Eventually(t, func() bool { victim.read(); return victim.acks == len(as) }, 10*time.Second, time.Millisecond, "every forged ping of %d bytes answered", size)
				// View requests and their retries (2 and 6 periods
				// later) count too: wait until every agent ran 7 more
				// periods (a loaded machine may run fewer in 700 ms),
				// then read until 100 ms pass without a datagram.
				periodsFrom(t, as...)(7)
				victim.readUntilQuiet()
				got := victim.got
				ratio := float64(got) / float64(forged)
				worst = max(worst, ratio)
				t.Logf("pings of %d bytes: %d forged, %d sent to the victim: %.2f×", size, forged, got, ratio)
				assert.LessOrEqual(t, got, 2*forged, "pings of %d bytes", size)
			}
			t.Logf("plain=%v: worst %.2f×", plain, worst)
		})
	}
}
