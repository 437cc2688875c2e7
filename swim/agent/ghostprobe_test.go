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

// Over real sockets, a plain-mode insider (only a socket: it announces
// its own Alive from its own address, so the members hold and vouch for
// it, and answers their pings) plants a ghost at a victim's address in
// the same gossip, while the group, with 400 bytes of metadata, broadcasts
// 1,000-byte messages. The members probe the ghost, ask each other to,
// suspect it and declare it dead; no datagram they send the victim
// carries the queue or the broadcasts, only the ghost's notice and what
// the packet's kind carries (swim/verify.go, “sending”). Before, the probes, the relays'
// pings and the drain loop sent the victim packets of over 1,000 bytes,
// about 40× the attacker's bytes in all (docs/experiments.md, “SWIM:
// nothing queued to members not verified”).
func TestPlantedGhostGetsBarePings(t *testing.T) {
	cfg := Config{Plain: true, Protocol: fast()}
	cfg.Protocol.Meta = []byte(strings.Repeat("m", 400))
	as := group(t, 3, cfg)
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	victim := newVictim(t, codec)
	att, err := listenUDP(transport.Config{Bind: "127.0.0.1:0", QueueLen: 4096})
	require.NoError(t, err)
	defer att.Close()
	self := swim.Node{ID: "att", Addr: att.LocalAddr().String()}
	ghost := swim.Node{ID: "ghost", Addr: victim.LocalAddr().String()}
	sent := 0
	send := func(to swim.Node, pk swim.Packet) {
		t.Helper()
		pk.From, pk.To = self, to
		data, _, err := codec.Encode(&pk)
		require.NoError(t, err)
		dst, err := agentAddr(to.Addr)
		require.NoError(t, err)
		require.NoError(t, att.Send(dst, data))
		sent += len(data)
	}
	answer := func() { // the insider stays alive: it acks every ping
		for len(att.Packets()) > 0 {
			p := <-att.Packets()
			if pk, err := codec.Decode(p.Data); err == nil && pk.Kind == swim.MsgPing {
				send(pk.From, swim.Packet{Kind: swim.MsgAck, Ack: swim.Ack{Seq: pk.Ping.Seq}})
			}
		}
	}
	for _, a := range as {
		send(a.Self(), swim.Packet{Kind: swim.MsgGossip, Updates: []swim.Update{
			{Kind: swim.UpdateAlive, Node: self, From: self.ID, Incarnation: 1},
			{Kind: swim.UpdateAlive, Node: ghost, From: self.ID, Incarnation: 1},
		}})
	}
	state := func(a *Agent, id swim.ID) (swim.State, bool) {
		for _, m := range a.Members() {
			if m.Node.ID == id {
				return m.State, true
			}
		}
		return 0, false
	}
	require.Eventually(t, func() bool {
		answer()
		for _, a := range as {
			if _, ok := state(a, "ghost"); !ok {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond, "the ghost held by every member")
	largest, datagrams := 0, 0
	read := func() {
		for len(victim.Packets()) > 0 {
			p := <-victim.Packets()
			victim.got += len(p.Data)
			largest = max(largest, len(p.Data))
			datagrams++
			pk, err := codec.Decode(p.Data)
			require.NoError(t, err)
			assert.Empty(t, pk.Broadcasts, "%v from %s", pk.Kind, pk.From.ID)
			for _, u := range pk.Updates {
				// The ghost's notice, the sender's own Alive (a join
				// announcement), or an eager push's one update.
				own := u.Node.ID == ghost.ID || u.Node.ID == pk.From.ID || pk.Kind == swim.MsgGossip && len(pk.Updates) == 1
				assert.True(t, own, "%v from %s with %d updates: %v about %s", pk.Kind, pk.From.ID, len(pk.Updates), u.Kind, u.Node.ID)
			}
		}
	}
	for r := 0; ; r++ {
		for k, a := range as {
			require.NoError(t, a.Broadcast(context.Background(), fmt.Sprintf("k%d-%d", k, r), []byte(strings.Repeat("b", 1000))))
		}
		answer()
		read()
		dead := 0
		for _, a := range as {
			if s, ok := state(a, "ghost"); !ok || s == swim.StateDead {
				dead++
			}
		}
		if dead == len(as) {
			break
		}
		require.Less(t, r, 2000, "the ghost declared dead by every member")
		time.Sleep(10 * time.Millisecond)
	}
	periodsFrom(t, as...)(3)
	answer()
	read()
	t.Logf("the attacker sent %d B; the victim got %d B in %d datagrams (largest %d B): %.2f×",
		sent, victim.got, datagrams, largest, float64(victim.got)/float64(sent))
	assert.Positive(t, datagrams, "the ghost was probed")
}
