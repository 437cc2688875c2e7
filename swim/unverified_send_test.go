package swim

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bareFor reports whether pk, sent to a member the view has not verified,
// carries nothing from the queues: no application broadcasts, and no
// update but what pk's kind always carries (the recipient's notice, this
// member's own Alive; an eager push, MsgGossip, its one update).
func bareFor(pk Packet, self ID) bool {
	if len(pk.Broadcasts) > 0 {
		return false
	}
	if pk.Kind == MsgGossip {
		return len(pk.Updates) == 1
	}
	for _, u := range pk.Updates {
		if u.Node.ID != pk.To.ID && u.Node.ID != self {
			return false
		}
	}
	return true
}

// A member's packets to members it has not verified (verify.go: only told
// of, by gossip) carry nothing from its queues, whatever path sends them:
// its probes, the gate's and the relays' pings, the drain loop, the
// reconnect pings to the dead. Announced at a victim's address, a ghost
// would otherwise draw the queue and the application's broadcasts to the
// victim with every probe (issue 27, user33 F4: about 40× the attacker's
// bytes over real sockets). Here a holds b, c and d (configured, so
// verified) and 30 members b told it of, its queue and a 300-byte
// broadcast full; nobody answers for a minute, so every member is
// probed, suspected and declared dead, and the dead are pinged again.
func TestNothingQueuedToUnverified(t *testing.T) {
	a := relayMember(t)
	verified := map[ID]bool{"b": true, "c": true, "d": true}
	for i := range 30 {
		require.False(t, a.peers[ID(fmt.Sprintf("n%02d", i))].verified)
	}
	pk, _ := advance(a, time.Minute)
	full, unverified := 0, map[MessageKind]int{}
	for _, p := range pk {
		if verified[p.To.ID] {
			if !bareFor(p, a.Self().ID) {
				full++
			}
			continue
		}
		unverified[p.Kind]++
		assert.True(t, bareFor(p, a.Self().ID), "%v to %s: %d updates, %d broadcasts, %d bytes",
			p.Kind, p.To.ID, len(p.Updates), len(p.Broadcasts), p.Size())
	}
	t.Logf("packets to the unverified members: %v", unverified)
	assert.GreaterOrEqual(t, unverified[MsgPing], 5, "pings to the unverified members")
	assert.Positive(t, full, "the verified members get the queue")
}

// A ghost whose probe was answered but that is not verified (verify: it
// is announced at the address of b, a verified live member, and one
// address speaks for one member) is answered, not verified: the ping-reqs
// it is then asked to relay, as the first choice of relay, carry nothing
// from the queues either. They carried the queue and a 300-byte broadcast
// to the victim whose address the ghost was announced at, when an ack from
// another host still answered a probe (onAck; since user38 F1 none does).
func TestPingReqToAnsweredUnverifiedBare(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	require.Same(t, a.peers["b"], a.verifiedAt[node("b").Addr], "b, configured (Bootstrap), verified at its address")
	g := Node{ID: "g", Addr: node("b").Addr}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: node("c"), To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: "g"}}}))
	drain(a)
	require.False(t, a.peers["g"].verified)
	// Tick until a probes g, and answer that probe from g's address.
	for now := 2 * time.Millisecond; !a.peers["g"].answered; {
		at, ok := a.NextDeadline()
		require.True(t, ok)
		require.Less(t, at, time.Minute, "a never probed g")
		now = at
		a.Tick(now)
		drain(a)
		if a.pr.active && a.pr.target == a.peers["g"] {
			require.NoError(t, a.Step(now+time.Millisecond,
				&Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: a.pr.seq}}))
			drain(a)
		}
	}
	require.False(t, a.peers["g"].verified, "b holds g's address")
	require.NoError(t, a.Broadcast("k", bytes.Repeat([]byte("x"), 300)))
	pk, _ := advance(a, time.Minute)
	reqs := 0
	for _, p := range pk {
		if p.To.ID != g.ID || p.Kind != MsgPingReq {
			continue
		}
		reqs++
		assert.True(t, bareFor(p, a.Self().ID), "%v to the victim: %d updates, %d broadcasts, %d bytes",
			p.Kind, len(p.Updates), len(p.Broadcasts), p.Size())
	}
	assert.Positive(t, reqs, "g, answered, is asked to relay")
}

// SendTo a member not verified sends the application's message and nothing
// from the queues (verify.go, “sending”): a ghost announced at a victim's
// address, sent a message (kvstore's joiner asks every live member for
// its store), drew the queue and the broadcasts to the victim.
func TestSendToUnverifiedBare(t *testing.T) {
	a := relayMember(t)
	require.False(t, a.peers["n00"].verified)
	require.NoError(t, a.SendTo(0, "n00", []byte("ask")))
	require.NoError(t, a.SendTo(0, "b", []byte("ask")))
	pk, _ := drain(a)
	require.Len(t, pk, 2)
	assert.Equal(t, []byte("ask"), pk[0].User)
	assert.True(t, bareFor(pk[0], a.Self().ID), "to n00: %d updates, %d broadcasts, %d bytes",
		len(pk[0].Updates), len(pk[0].Broadcasts), pk[0].Size())
	assert.False(t, bareFor(pk[1], a.Self().ID), "b, verified, gets the queue")
}
