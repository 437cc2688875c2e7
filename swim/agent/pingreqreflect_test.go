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

// Over real sockets, forged plain ping-reqs sent from an attacker's own
// socket (no spoofing) to every member of a group with 400 bytes of
// metadata that broadcasts 1,000-byte messages meanwhile, in three forms:
// from the attacker's true address for a stranger at the victim's address
// (the relay would ping the victim), and from a stranger at the victim's
// address for a real member, with and without a nack asked (the relay
// would send the member's ack, or the nack, to the victim). The bytes the
// group sends the victim stay within twice the bytes forged. Without the
// relay's bounds (swim/relay.go) each ping-req drew a ping or a relayed ack
// filled with the queue's updates and the broadcasts (docs/experiments.md
// gives the ratios measured then).
func TestForgedPingReqsReflectWithinTwice(t *testing.T) {
	cfg := Config{Plain: true, Protocol: fast()}
	cfg.Protocol.Meta = []byte(strings.Repeat("m", 400))
	as := group(t, 3, cfg)
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	victim := newVictim(t, codec)
	attacker, err := listenUDP(transport.Config{Bind: "127.0.0.1:0", QueueLen: 4096})
	require.NoError(t, err)
	defer attacker.Close()
	vaddr, aaddr := victim.LocalAddr().String(), attacker.LocalAddr().String()

	refused := func() int {
		n := 0
		for _, a := range as {
			n += a.Stats().Protocol.RelaysRefused
		}
		return n
	}
	refused0 := refused()
	expired := func() int {
		n := 0
		for _, a := range as {
			n += a.Stats().Protocol.RelaysExpired
		}
		return n
	}
	expired0 := expired()
	forged, stranger, relayed := 0, 0, 0
	read := func() {
		victim.read()
		for len(attacker.Packets()) > 0 { // view requests to the attacker's true address
			<-attacker.Packets()
		}
	}
	send := func(a *Agent, pk swim.Packet) {
		t.Helper()
		pk.To = a.Self()
		data, _, err := codec.Encode(&pk)
		require.NoError(t, err)
		dst, err := agentAddr(a.Self().Addr)
		require.NoError(t, err)
		require.NoError(t, attacker.Send(dst, data))
		forged += len(data)
	}
	for r := range 10 {
		for k, a := range as {
			require.NoError(t, a.Broadcast(context.Background(), fmt.Sprintf("k%d-%d", k, r), []byte(strings.Repeat("b", 1000))))
		}
		for k, a := range as {
			other := as[(k+1)%len(as)].Self()
			id := func(s string) swim.ID { return swim.ID(fmt.Sprintf("%s%d-%d", s, r, k)) }
			send(a, swim.Packet{Kind: swim.MsgPingReq, From: swim.Node{ID: id("o"), Addr: aaddr},
				PingReq: swim.PingReq{Seq: uint32(r), Target: swim.Node{ID: id("t"), Addr: vaddr}, Nack: true}})
			stranger++
			for _, nack := range []bool{false, true} {
				send(a, swim.Packet{Kind: swim.MsgPingReq, From: swim.Node{ID: id("v"), Addr: vaddr},
					PingReq: swim.PingReq{Seq: uint32(r), Target: other, Nack: nack}})
				relayed++
			}
		}
		// Each member refused the relay to the stranger, and relayed the
		// real member's ack to the victim, bare, unless the relay expired
		// first: under -race on a loaded machine the ack can come after
		// the relay's 50 ms deadline, and the victim then gets a nack or
		// nothing (the members' own relays can expire too, hence ≥).
		resolved := func() bool {
			read()
			return refused()-refused0 == stranger && victim.acks+expired()-expired0 >= relayed
		}
		if !assert.Eventually(t, resolved, 10*time.Second, time.Millisecond) {
			t.Fatalf("round %d: %d relays refused of %d, %d acks relayed and %d relays expired of %d",
				r, refused()-refused0, stranger, victim.acks, expired()-expired0, relayed)
		}
	}
	require.Positive(t, victim.acks, "no relayed ack reached the victim")
	// What comes later counts too (nacks, view requests and their retries,
	// due up to six periods after a request): wait seven periods of every
	// member, then read what is left.
	periodsFrom(t, as...)(7)
	read()
	ratio := float64(victim.got) / float64(forged)
	t.Logf("%d forged ping-reqs, %d bytes; the group sent the victim %d bytes (%d relayed acks): %.2f×",
		stranger+relayed, forged, victim.got, victim.acks, ratio)
	assert.LessOrEqual(t, ratio, 2.0)
}
