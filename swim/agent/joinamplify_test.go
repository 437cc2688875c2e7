package agent

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// TestSpoofedJoinsNotAmplified: 200 plain joins under fake IDs, each
// claiming the victim's address, sent from that address to the four
// members of a group in turn (a spoofed source: the members cannot tell
// them from joins the victim sent). The group sends the victim at most
// twice the joins' bytes, in the 2 s of joins and the 3 s after (30
// protocol periods), and admits none of the fake members: each gets at
// most the one challenge that answers its join, and no probe after it.
// (On a loaded machine the last challenges may come after the joins
// stopped, so when a packet comes does not tell them apart.)
func TestSpoofedJoinsNotAmplified(t *testing.T) {
	cfg := Config{Plain: true, Protocol: fast()}
	as := group(t, 4, cfg)
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	victim, err := listenUDP(transport.Config{QueueLen: 4096})
	require.NoError(t, err)
	defer victim.Close()
	got := 0
	kinds := map[swim.MessageKind]int{}
	perFake := map[swim.ID]int{}
	checked := map[uint32]swim.ID{}
	for i := range 200 {
		id := swim.ID(fmt.Sprintf("fake-%03d", i))
		checked[swim.IDCheck(id)] = id
	}
	read := func(until time.Time) {
		for {
			select {
			case p := <-victim.Packets():
				got += len(p.Data)
				if pk, err := codec.Decode(p.Data); err == nil {
					kinds[pk.Kind]++
					to := pk.To.ID
					if to == "" {
						to = checked[pk.ToCheck] // a long ID's check (swim.IDCheck)
					}
					perFake[to]++
				}
				continue
			case <-time.After(time.Until(until)):
			}
			return
		}
	}
	sent := 0
	for i := range 200 {
		f := swim.Node{ID: swim.ID(fmt.Sprintf("fake-%03d", i)), Addr: victim.LocalAddr().String()}
		a := as[i%len(as)]
		b, _, err := codec.Encode(&swim.Packet{Kind: swim.MsgJoin, From: f, To: swim.Node{Addr: a.Self().Addr},
			Updates: []swim.Update{{Kind: swim.UpdateAlive, Node: f, From: f.ID}}})
		require.NoError(t, err)
		require.NoError(t, victim.Send(netip.MustParseAddrPort(a.Self().Addr), b))
		sent += len(b)
		read(time.Now().Add(10 * time.Millisecond))
	}
	during := got
	read(time.Now().Add(3 * time.Second))
	ratio := float64(got) / float64(sent)
	t.Logf("forged joins: %d bytes sent; the group sent the victim %d bytes during them and %d in the 3 s after: %.2f×; by kind: %v",
		sent, during, got-during, ratio, kinds)
	assert.LessOrEqual(t, ratio, 2.0, "bytes sent to the victim per byte of forged joins")
	for _, a := range as {
		for _, m := range a.Members() {
			assert.False(t, strings.HasPrefix(string(m.Node.ID), "fake-"), "%s holds %s", a.Self().ID, m.Node.ID)
		}
	}
	for id, n := range perFake {
		assert.LessOrEqual(t, n, 1, "packets to %s at the victim: a challenge, then probes", id)
	}
	if got-during > 0 {
		t.Logf("%d bytes came after the joins stopped (late challenges)", got-during)
	}
}

// TestSpoofedPacketsNotAmplified: small plain packets of the kinds that
// draw an answer or a view request from a member that does not know
// their sender (pings, ping-reqs, gossip), under fake IDs claiming the
// victim's address and sent from it, to a group whose members carry 400
// bytes of metadata each. The group sends the victim at most twice their
// bytes: a view request, which carries the asker's Alive and so its
// metadata, goes only to a sender whose packet was at least half its size
// (swim: asksView); before, a 50-byte ping drew an ack and a request of
// about 500 bytes, 5.8 times its bytes.
func TestSpoofedPacketsNotAmplified(t *testing.T) {
	var as []*Agent
	for i := range 4 {
		cfg := Config{Plain: true, Protocol: fast()}
		cfg.Protocol.Meta = []byte(strings.Repeat(fmt.Sprint(i), 400))
		as = append(as, start(t, cfg))
		if i > 0 {
			join(t, as[i], as[0])
		}
	}
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	victim, err := listenUDP(transport.Config{QueueLen: 4096})
	require.NoError(t, err)
	defer victim.Close()
	got, sent := 0, 0
	kinds := map[swim.MessageKind]int{}
	read := func(until time.Time) {
		for {
			select {
			case p := <-victim.Packets():
				got += len(p.Data)
				if pk, err := codec.Decode(p.Data); err == nil {
					kinds[pk.Kind]++
				}
				continue
			case <-time.After(time.Until(until)):
			}
			return
		}
	}
	for i := range 300 {
		f := swim.Node{ID: swim.ID(fmt.Sprintf("fake-%03d", i)), Addr: victim.LocalAddr().String()}
		a := as[i%len(as)]
		pk := swim.Packet{From: f, To: a.Self()}
		switch i % 3 {
		case 0:
			pk.Kind, pk.Ping = swim.MsgPing, swim.Ping{Seq: uint32(i)}
		case 1:
			pk.Kind, pk.PingReq = swim.MsgPingReq, swim.PingReq{Seq: uint32(i), Target: as[(i+1)%len(as)].Self()}
		case 2:
			pk.Kind = swim.MsgGossip
			pk.Updates = []swim.Update{{Kind: swim.UpdateSuspect, Node: as[(i+1)%len(as)].Self(), From: f.ID}}
		}
		b, _, err := codec.Encode(&pk)
		require.NoError(t, err)
		require.NoError(t, victim.Send(netip.MustParseAddrPort(a.Self().Addr), b))
		sent += len(b)
		read(time.Now().Add(10 * time.Millisecond))
	}
	read(time.Now().Add(2 * time.Second))
	ratio := float64(got) / float64(sent)
	t.Logf("forged pings, ping-reqs and gossip: %d bytes sent; the group sent the victim %d: %.2f×; by kind: %v", sent, got, ratio, kinds)
	assert.LessOrEqual(t, ratio, 2.0, "bytes sent to the victim per byte of forged packets")
}
