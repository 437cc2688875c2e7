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
	att := newAttacker(t, codec, "att")
	self := att.self
	ghost := swim.Node{ID: "ghost", Addr: victim.LocalAddr().String()}
	for _, a := range as {
		att.send(t, a.Self(), swim.Packet{Kind: swim.MsgGossip, Updates: []swim.Update{
			{Kind: swim.UpdateAlive, Node: self, From: self.ID, Incarnation: 1},
			{Kind: swim.UpdateAlive, Node: ghost, From: self.ID, Incarnation: 1},
		}})
	}
	require.Eventually(t, func() bool {
		att.answer(t)
		for _, a := range as {
			if _, ok := member(a, ghost.ID); !ok {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond, "the ghost held by every member")
	for r := 0; ; r++ {
		for k, a := range as {
			require.NoError(t, a.Broadcast(context.Background(), fmt.Sprintf("k%d-%d", k, r), []byte(strings.Repeat("b", 1000))))
		}
		att.answer(t)
		victim.readBare(t, ghost.ID)
		dead := 0
		for _, a := range as {
			if m, ok := member(a, ghost.ID); !ok || m.State == swim.StateDead {
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
	att.answer(t)
	victim.readBare(t, ghost.ID)
	t.Logf("the attacker sent %d B; the victim got %d B in %d datagrams (largest %d B): %.2f×",
		att.sent, victim.got, victim.datagrams, victim.largest, float64(victim.got)/float64(att.sent))
	assert.Positive(t, victim.datagrams, "the ghost was probed")
}
