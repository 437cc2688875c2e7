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

// Over real sockets, in plain mode, a member Y leaves the group; anyone
// then sends one member, every 200 ms, gossip that moves Y's entry to a
// victim's address and revives it there: Alive(Y at the victim, inc+2),
// after Dead(Y at the victim, inc+1) in the variant "dead+alive" (a
// declaration above the stored incarnation moves a dead or left entry
// without any reclaim time). The members hold Y at the victim's address
// as a member they have not verified (swim/verify.go, readdress): while
// the group, with 400 bytes of metadata, broadcasts 1,000-byte messages,
// no datagram to the victim carries the queue or the broadcasts, only
// Y's notice and what the packet's kind carries (swim/verify.go,
// “sending”). Before, Y kept the verification it had at its old address,
// and the victim got full packets, 76-120× the attacker's bytes (issue
// 27, user37 F2; docs/experiments.md, “SWIM: refutations and moved
// members (user37 F1, F2)”).
func TestMovedMemberGetsBarePackets(t *testing.T) {
	for _, how := range []string{"alive", "dead+alive"} {
		t.Run(how, func(t *testing.T) { movedMemberBare(t, how) })
	}
}

func movedMemberBare(t *testing.T, how string) {
	cfg := Config{Plain: true, Protocol: fast()}
	cfg.Protocol.Meta = []byte(strings.Repeat("m", 400))
	as := group(t, 4, cfg)
	y := as[3]
	yNode := y.Self()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	require.NoError(t, y.Leave(ctx))
	cancel()
	as = as[:3]
	var inc swim.Incarnation
	require.Eventually(t, func() bool {
		for _, a := range as {
			s, ok := member(a, yNode.ID)
			if !ok || s.State == swim.StateAlive || s.State == swim.StateSuspect {
				return false
			}
			inc = max(inc, s.Incarnation)
		}
		return true
	}, 10*time.Second, 5*time.Millisecond, "Y down at every member")
	codec, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Plain: true}})
	require.NoError(t, err)
	victim := newVictim(t, codec)
	att := newAttacker(t, codec, "att")
	self := att.self
	moved := swim.Node{ID: yNode.ID, Addr: victim.LocalAddr().String()}
	// held reports whether every member has held Y alive at the victim's
	// address since the attack began.
	seen := make([]bool, len(as))
	held := func() bool {
		all := true
		for i, a := range as {
			if s, ok := member(a, yNode.ID); ok && s.Node == moved && s.State == swim.StateAlive {
				seen[i] = true
			}
			all = all && seen[i]
		}
		return all
	}
	start := time.Now()
	for r := 0; ; r++ {
		if r%20 == 0 { // every 200 ms: bring Y back at the victim's address
			inc += 2
			ups := []swim.Update{
				{Kind: swim.UpdateDead, Node: moved, From: self.ID, Incarnation: inc - 1},
				{Kind: swim.UpdateAlive, Node: moved, From: yNode.ID, Incarnation: inc, Meta: "x"},
			}
			if how == "alive" {
				ups = ups[1:]
			}
			att.send(t, as[r/20%len(as)].Self(), swim.Packet{Kind: swim.MsgGossip, Updates: ups})
		}
		for k, a := range as {
			require.NoError(t, a.Broadcast(context.Background(), fmt.Sprintf("k%d-%d", k, r%8), []byte(strings.Repeat("b", 1000))))
		}
		victim.readBare(t, yNode.ID)
		if held() && time.Since(start) > 2*time.Second {
			break
		}
		require.Less(t, r, 1000, "every member holding Y alive at the victim's address")
		time.Sleep(10 * time.Millisecond)
	}
	for quiet := time.Now(); time.Since(quiet) < 100*time.Millisecond; time.Sleep(10 * time.Millisecond) {
		n := victim.datagrams
		if victim.readBare(t, yNode.ID); victim.datagrams != n {
			quiet = time.Now()
		}
	}
	t.Logf("%s: the attacker sent %d B; the victim got %d B in %d datagrams (largest %d B): %.1f×",
		how, att.sent, victim.got, victim.datagrams, victim.largest, float64(victim.got)/float64(att.sent))
	assert.Positive(t, victim.datagrams, "Y probed at the victim's address")
}
