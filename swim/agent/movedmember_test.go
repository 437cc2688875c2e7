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
	status := func(a *Agent) (swim.PeerStatus, bool) {
		for _, m := range a.Members() {
			if m.Node.ID == yNode.ID {
				return m.PeerStatus, true
			}
		}
		return swim.PeerStatus{}, false
	}
	var inc swim.Incarnation
	require.Eventually(t, func() bool {
		for _, a := range as {
			s, ok := status(a)
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
	att, err := listenUDP(transport.Config{Bind: "127.0.0.1:0", QueueLen: 4096})
	require.NoError(t, err)
	defer att.Close()
	self := swim.Node{ID: "att", Addr: att.LocalAddr().String()}
	moved := swim.Node{ID: yNode.ID, Addr: victim.LocalAddr().String()}
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
				// Y's notice, the sender's own Alive (a refutation or
				// a join announcement), or an eager push's one update.
				own := u.Node.ID == yNode.ID || u.Node.ID == pk.From.ID || pk.Kind == swim.MsgGossip && len(pk.Updates) == 1
				assert.True(t, own, "%v from %s with %d updates: %v about %s", pk.Kind, pk.From.ID, len(pk.Updates), u.Kind, u.Node.ID)
			}
		}
	}
	// held reports whether every member has held Y alive at the victim's
	// address since the attack began.
	seen := make([]bool, len(as))
	held := func() bool {
		all := true
		for i, a := range as {
			if s, ok := status(a); ok && s.Node == moved && s.State == swim.StateAlive {
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
			send(as[r/20%len(as)].Self(), swim.Packet{Kind: swim.MsgGossip, Updates: ups})
		}
		for k, a := range as {
			require.NoError(t, a.Broadcast(context.Background(), fmt.Sprintf("k%d-%d", k, r%8), []byte(strings.Repeat("b", 1000))))
		}
		read()
		if held() && time.Since(start) > 2*time.Second {
			break
		}
		require.Less(t, r, 1000, "every member holding Y alive at the victim's address")
		time.Sleep(10 * time.Millisecond)
	}
	for quiet := time.Now(); time.Since(quiet) < 100*time.Millisecond; time.Sleep(10 * time.Millisecond) {
		n := datagrams
		if read(); datagrams != n {
			quiet = time.Now()
		}
	}
	t.Logf("%s: the attacker sent %d B; the victim got %d B in %d datagrams (largest %d B): %.1f×",
		how, sent, victim.got, datagrams, largest, float64(victim.got)/float64(sent))
	assert.Positive(t, datagrams, "Y probed at the victim's address")
}
