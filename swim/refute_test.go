package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ping that accuses this member, from the member b received from another
// port (StepFromOtherSource, so not vouched for), gets a bare ack: the
// refutation then goes to b on its own, at the address the view holds
// (tellAlive). It used not to: tellAlive skipped the ping's sender, as if
// the ack carried the Alive (rev31, F2). From b's own address the ack
// carries it, and nothing else goes to b.
func TestRefutationReachesUnvouchedAccuser(t *testing.T) {
	for _, other := range []bool{false, true} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		a.Tick(0)
		drain(a)
		p := Packet{Kind: MsgPing, From: node("b"), To: a.Self(), Ping: Ping{Seq: 7},
			Updates: []Update{{Kind: UpdateSuspect, Node: a.Self(), Incarnation: 0, From: "b"}}}
		if other {
			require.NoError(t, a.StepFromOtherSource(10*time.Millisecond, &p))
		} else {
			require.NoError(t, a.Step(10*time.Millisecond, &p))
		}
		pk, _ := drain(a)
		var toB []Packet
		for _, q := range pk {
			if q.To.ID == "b" {
				toB = append(toB, q)
			}
		}
		require.Len(t, toB, map[bool]int{false: 1, true: 2}[other], "other source %v", other)
		ack := only(t, toB, MsgAck)
		require.Len(t, ack, 1)
		assert.Equal(t, !other, hasUpdate(ack[0], UpdateAlive, "a", 1), "other source %v: the ack carries the Alive", other)
		if other {
			ping := only(t, toB, MsgPing)
			require.Len(t, ping, 1)
			assert.Equal(t, node("b"), ping[0].To, "at the address the view holds")
			assert.True(t, hasUpdate(ping[0], UpdateAlive, "a", 1))
		}
	}
}

// A packet from a sender the view did not hold, which names the sender
// Alive at a victim's address and accuses this member, draws the
// refutation's gossip but no refutation to that address: the address is
// only the packet's claim. The sender used to be sent this member's Alive
// there in a ping filled with the queue (tellAlive). It gets one bare
// challenge ping (receipt.go), smaller than the packet.
func TestRefutationNotToAddressThePacketBrought(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	x := Node{ID: "x", Addr: "victim:1"}
	p := Packet{Kind: MsgGossip, From: x, To: a.Self(), Updates: []Update{
		{Kind: UpdateAlive, Node: x, From: "x"},
		{Kind: UpdateSuspect, Node: a.Self(), Incarnation: 0, From: "x"}}}
	require.NoError(t, a.Step(10*time.Millisecond, &p))
	pk, _ := drain(a)
	assert.Equal(t, 1, a.Stats().Refutations)
	ch := challengeTo(t, a, pk, "x")
	assert.Less(t, ch.Size(), p.Size())
	for _, q := range pk {
		if q.Ping != ch.Ping || q.To != ch.To {
			assert.NotEqual(t, "victim:1", q.To.Addr, "%v to the victim: %+v", q.Kind, q.Updates)
		}
	}
	assert.NotEmpty(t, only(t, pk, MsgPing), "the refutation goes to members")
}

// A joiner whose seed's view holds it dead refutes, and tells the seed
// directly, though the view made the seed known: the seed is the member
// the joiner chose to trust (seedView).
func TestRefutationToJoinSeed(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{"b:7946"}))
	drain(a)
	v := Packet{Kind: MsgSync, From: node("b"), To: a.Self(), JoinToken: a.join.token, Updates: []Update{
		{Kind: UpdateAlive, Node: node("b"), From: "b"},
		{Kind: UpdateDead, Node: a.Self(), Incarnation: 0, From: "b"}}}
	require.NoError(t, a.Step(10*time.Millisecond, &v))
	pk, _ := drain(a)
	assert.False(t, a.Joining())
	told := false
	for _, q := range only(t, pk, MsgPing) {
		told = told || q.To == node("b") && hasUpdate(q, UpdateAlive, "a", 1)
	}
	assert.True(t, told, "the seed is told")
}

// The same when the packet comes from a member and names as the accuser
// a member whose Alive, at a victim's address, only that packet brought:
// the accuser is neither sent the Alive directly (tellAlive) nor picked
// among the members the refutation is announced to (announceAlive); the
// refutation reaches it by gossip if it exists. The relaying member is
// told. Before, the accuser got a ping filled with the queue there.
func TestRefutationNotToAccuserThePacketBrought(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	y := Node{ID: "y", Addr: "victim:1"}
	p := Packet{Kind: MsgGossip, From: node("b"), To: a.Self(), Updates: []Update{
		{Kind: UpdateAlive, Node: y, From: "y"},
		{Kind: UpdateSuspect, Node: a.Self(), Incarnation: 0, From: "y"}}}
	require.NoError(t, a.Step(10*time.Millisecond, &p))
	pk, _ := drain(a)
	assert.Equal(t, 1, a.Stats().Refutations)
	for _, q := range pk {
		assert.NotEqual(t, "victim:1", q.To.Addr, "%v to the victim: %+v", q.Kind, q.Updates)
	}
	told := false
	for _, q := range only(t, pk, MsgPing) {
		told = told || q.To == node("b") && hasUpdate(q, UpdateAlive, "a", 1)
	}
	assert.True(t, told, "the member that relayed the accusation is told")
}

// A stale suspicion of this member, relayed by c, that names as its
// accuser a member g an earlier packet planted at a victim's address (held,
// not verified): c, verified, is sent this member's Alive (tellAlive), g
// is not; the Alive, with its metadata, went to the victim once per
// forged suspicion (issue 27, user37 F1). A member not verified that
// accuses this member in a packet it sends from the address the view
// holds for it is told: it speaks for itself.
func TestRefutationNotToUnverifiedAccuser(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.Meta = []byte("zone=a") }, "b", "c", "d")
	a.Tick(0)
	drain(a)
	g, y := Node{ID: "g", Addr: "victim:1"}, node("y")
	step := func(at time.Duration, from Node, ups ...Update) []Packet {
		t.Helper()
		require.NoError(t, a.Step(at, &Packet{Kind: MsgGossip, From: from, To: a.Self(), Updates: ups}))
		pk, _ := drain(a)
		return pk
	}
	step(time.Millisecond, node("b"), Update{Kind: UpdateAlive, Node: g, From: "g"}, Update{Kind: UpdateAlive, Node: y, From: "y"})
	require.False(t, a.peers["g"].verified)
	require.False(t, a.peers["y"].verified)
	a.inc = 1 // as after a refutation, without the members it told

	pk := step(3*time.Millisecond, node("c"), Update{Kind: UpdateSuspect, Node: a.Self(), Incarnation: 0, From: "g"})
	toC := false
	for _, q := range pk {
		assert.NotEqual(t, g.Addr, q.To.Addr, "%v to the victim: %+v", q.Kind, q.Updates)
		toC = toC || q.Kind == MsgPing && q.To == node("c") && hasUpdate(q, UpdateAlive, "a", 1)
	}
	assert.True(t, toC, "c, verified, relayed the suspicion and is told")

	pk = step(4*time.Millisecond, y, Update{Kind: UpdateSuspect, Node: a.Self(), Incarnation: 0, From: "y"})
	toY := false
	for _, q := range only(t, pk, MsgPing) {
		toY = toY || q.To == y && hasUpdate(q, UpdateAlive, "a", 1)
	}
	assert.True(t, toY, "y, accusing from its own address, is told")
}

// Forged suspicions of a, relayed by b, each make a refute, and its Alive
// is announced at once to a few random live members (announceAlive); a
// holds 40 ghosts at a victim's address besides b, c and d. The Alive goes
// to verified members only while one is eligible (here b, c and d, from
// Bootstrap): before, of the members not verified one per protocol period
// was sent it, and earlier most of the three picks of each refutation were
// ghosts, the Alive with its metadata to the victim about twice per
// forgery (issue 27, user37 F1). Of the 10 refutations in a period the
// first announcePerPeriod (3) are announced, each to b, c and d: 9 pings
// (30 before the budget, issue 27, user46 M5). With none verified (peers
// "" below: the ghosts are all a holds), one member not verified per
// protocol period is told, whatever the number of refutations in it.
// Counted: the pings
// carrying the Alive (sendAlive), not the view request a member holding
// no verified member sends (a join to b).
func TestAnnouncedAliveToUnverifiedPerPeriod(t *testing.T) {
	for _, tc := range []struct {
		name     string
		peers    []string
		toVictim int // announced to the victim in each period
		toKnown  int // announced to b, c and d in each period
	}{
		{"verified members held", []string{"b", "c", "d"}, 0, 9},
		{"none verified", nil, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.Meta = []byte("zone=a") }, tc.peers...)
			a.Tick(0)
			drain(a)
			var ghosts []Update
			for i := range 40 {
				g := Node{ID: ID(fmt.Sprintf("g%02d", i)), Addr: "victim:1"}
				ghosts = append(ghosts, Update{Kind: UpdateAlive, Node: g, From: g.ID})
			}
			require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(), Updates: ghosts}))
			drain(a)
			require.Equal(t, 40, a.unverified)
			forge := func(at time.Duration) (victim, known int) {
				for range 10 {
					require.NoError(t, a.Step(at, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(), Updates: []Update{
						{Kind: UpdateSuspect, Node: a.Self(), Incarnation: a.Incarnation(), From: "b"}}}))
					pk, _ := drain(a)
					for _, q := range pk {
						if q.Kind != MsgPing || !hasUpdate(q, UpdateAlive, "a", a.Incarnation()) {
							continue
						}
						if q.To.Addr == "victim:1" {
							victim++
						} else {
							known++
						}
					}
				}
				return victim, known
			}
			v, k := forge(2 * time.Millisecond)
			assert.Equal(t, tc.toVictim, v, "to the victim in the first period")
			assert.Equal(t, tc.toKnown, k, "to b, c and d in the first period")
			require.Equal(t, 10, a.Stats().Refutations)
			next := a.probing.next
			advance(a, next)
			v, k = forge(next + time.Millisecond)
			assert.Equal(t, tc.toVictim, v, "to the victim in the next period")
			assert.Equal(t, tc.toKnown, k, "to b, c and d in the next period")
			assert.Equal(t, 20, a.Stats().Refutations)
		})
	}
}
