package swim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// challengeTest is newTest with join challenges on.
func challengeTest(t *testing.T, id string, peers ...string) *Member {
	m := newTest(t, id, ModeSWIM, nil, peers...)
	m.join.noChallenge = false
	return m
}

// 200 joins forged from a victim's address (fake IDs, plain mode) over
// 20 s: the member sends the victim at most the bytes the joins carried,
// adds none of the fakes, and sends the victim nothing after.
func TestForgedJoinsNotAmplified(t *testing.T) {
	a := challengeTest(t, "a", "b", "c", "d")
	victim := "victim:7946"
	received, sent := 0, 0
	count := func(pk []Packet) {
		for _, p := range pk {
			if p.To.Addr == victim {
				sent += p.Size()
			}
		}
	}
	for i := range 200 {
		now := time.Duration(i) * 100 * time.Millisecond
		pk, _ := advance(a, now)
		count(pk)
		f := Node{ID: ID(fmt.Sprintf("fake%03d", i)), Addr: victim}
		join := Packet{Kind: MsgJoin, From: f, To: Node{Addr: "a:7946"}, Updates: []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}}
		received += join.Size()
		require.NoError(t, a.Step(now, &join))
		pk, _ = drain(a)
		count(pk)
	}
	pk, _ := advance(a, 80*time.Second)
	after := 0
	for _, p := range pk {
		if p.To.Addr == victim {
			after++
		}
	}
	for _, ps := range a.Members(80 * time.Second) {
		assert.False(t, strings.HasPrefix(string(ps.Node.ID), "fake"), "%s admitted", ps.Node.ID)
	}
	assert.Positive(t, sent)
	assert.LessOrEqual(t, sent, received, "bytes sent to the victim")
	assert.Zero(t, after, "packets to the victim after the joins stopped")
	t.Logf("forged joins: %d bytes received, %d sent to the victim (%.2f×); %d challenges, %d refused",
		received, sent, float64(sent)/float64(received), a.Stats().JoinChallenges, a.Stats().PullsRefused)
}

// A real joiner answers the challenge ping and gets the view one round
// trip later; the seed holds it verified.
func TestJoinChallengeAnswered(t *testing.T) {
	a := challengeTest(t, "a", "b", "c")
	j := newTest(t, "j", ModeSWIM, nil)
	require.NoError(t, j.Join(0, []string{"a:7946"}))
	deliver := func(from, to *Member, now time.Duration) []Packet {
		pk, _ := drain(from)
		var got []Packet
		for i := range pk {
			if pk[i].To.Addr == to.Self().Addr {
				got = append(got, pk[i])
				require.NoError(t, to.Step(now, &pk[i]))
			}
		}
		return got
	}
	got := deliver(j, a, time.Millisecond)
	require.Len(t, got, 1)
	out, _ := drain(a)
	require.Len(t, out, 1, "one packet: the challenge")
	assert.Equal(t, MsgPing, out[0].Kind)
	assert.Empty(t, out[0].Updates, "a bare ping")
	assert.LessOrEqual(t, out[0].Size(), got[0].Size())
	assert.Equal(t, State(0), a.State("j"), "not admitted before the ack")
	require.NoError(t, j.Step(2*time.Millisecond, &out[0]))
	deliver(j, a, 3*time.Millisecond)
	deliver(a, j, 4*time.Millisecond)
	assert.Equal(t, StateAlive, j.State("b"), "j has the view")
	assert.Equal(t, StateAlive, j.State("c"))
	assert.Equal(t, StateAlive, a.State("j"))
	assert.True(t, a.peers["j"].verified)
	assert.Equal(t, 1, a.Stats().JoinChallenges)
}

// An ack with the wrong sequence number, or from another address, or
// under another ID, admits nothing.
func TestJoinChallengeWrongAck(t *testing.T) {
	a := challengeTest(t, "a", "b")
	f := Node{ID: "f", Addr: "f:7946"}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgJoin, From: f, To: Node{Addr: "a:7946"}, Updates: []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}}))
	out, _ := drain(a)
	require.Len(t, out, 1)
	seq := out[0].Ping.Seq
	for _, ack := range []Packet{
		{Kind: MsgAck, From: f, To: node("a"), Ack: Ack{Seq: seq + 1}},
		{Kind: MsgAck, From: Node{ID: "f", Addr: "g:7946"}, To: node("a"), Ack: Ack{Seq: seq}},
		{Kind: MsgAck, From: Node{ID: "g", Addr: "f:7946"}, To: node("a"), Ack: Ack{Seq: seq}},
	} {
		require.NoError(t, a.Step(time.Millisecond, &ack))
		assert.Equal(t, State(0), a.State("f"))
	}
	drain(a)
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgAck, From: f, To: node("a"), Ack: Ack{Seq: seq}}))
	assert.Equal(t, StateAlive, a.State("f"))
	// Late: a challenge expires after one protocol period.
	g := Node{ID: "g", Addr: "g:7946"}
	require.NoError(t, a.Step(time.Second, &Packet{Kind: MsgJoin, From: g, To: Node{Addr: "a:7946"}, Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	out, _ = drain(a)
	require.NotEmpty(t, out)
	require.NoError(t, a.Step(2*time.Second, &Packet{Kind: MsgAck, From: g, To: node("a"), Ack: Ack{Seq: out[len(out)-1].Ping.Seq}}))
	assert.Equal(t, State(0), a.State("g"))
}

// Being heard from is no proof of an address: a forged gossip registers
// a fake member at the victim's address and a forged ping under its ID
// makes it heard (not verified: receipt.go), and its join is still
// challenged. A join the
// transport checked (StepSourceChecked) is answered at once, without
// verifying its sender (a stream proves the host, not the claimed port):
// it draws the usual challenge.
func TestJoinChallengeHeardIsNotReached(t *testing.T) {
	a := challengeTest(t, "a", "b", "c")
	f := Node{ID: "fake", Addr: "victim:7946"}
	alive := []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: alive}))
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgPing, From: f, To: node("a"), Ping: Ping{Seq: 7}}))
	require.False(t, a.peers["fake"].verified, "heard from, not verified")
	drain(a)
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgJoin, From: f, To: Node{Addr: "a:7946"}, Updates: alive}))
	out, _ := drain(a)
	require.Len(t, out, 1)
	assert.Equal(t, MsgPing, out[0].Kind, "the challenge, not the view")
	assert.Equal(t, 1, a.Stats().JoinChallenges)

	g := Node{ID: "g", Addr: "g:7946"}
	require.NoError(t, a.StepSourceChecked(3*time.Millisecond, &Packet{Kind: MsgJoin, From: g, To: Node{Addr: "a:7946"},
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	out, _ = drain(a)
	syncs := 0
	for _, p := range out {
		if p.Kind == MsgSync && p.To.Addr == g.Addr {
			syncs++
		}
	}
	assert.Positive(t, syncs, "a checked join gets the view at once")
	assert.Equal(t, StateAlive, a.State("g"))
	assert.False(t, a.peers["g"].verified, "a stream proves the host, not the port")
	challengeTo(t, a, out, "g")
	assert.Equal(t, 1, a.Stats().JoinChallenges, "no join challenge for it")
	h := Node{ID: "h", Addr: "h:7946"}
	require.NoError(t, a.Step(4*time.Millisecond, &Packet{Kind: MsgJoin, From: h, To: Node{Addr: "a:7946"},
		Updates: []Update{{Kind: UpdateAlive, Node: h, From: h.ID}}}))
	assert.Equal(t, 2, a.Stats().JoinChallenges, "the check ends with its step: the next join is challenged")
}

// A member challenged once, at the same address, is answered at once on
// its next pull (an anti-entropy exchange); at another address, or once
// held dead, it is challenged again.
func TestJoinChallengeOncePerAddress(t *testing.T) {
	a := challengeTest(t, "a", "b")
	j := Node{ID: "j", Addr: "j:7946"}
	join := func(now time.Duration, n Node) []Packet {
		require.NoError(t, a.Step(now, &Packet{Kind: MsgJoin, From: n, To: Node{Addr: "a:7946"},
			Updates: []Update{{Kind: UpdateAlive, Node: n, From: n.ID}}}))
		out, _ := drain(a)
		return out
	}
	out := join(0, j)
	require.Len(t, out, 1)
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgAck, From: j, To: node("a"), Ack: Ack{Seq: out[0].Ping.Seq}}))
	drain(a)
	require.Equal(t, StateAlive, a.State("j"))
	out = join(5*time.Second, j)
	require.NotEmpty(t, out)
	assert.Equal(t, MsgSync, out[len(out)-1].Kind, "reached: the view at once")
	assert.Equal(t, 1, a.Stats().JoinChallenges)
	a.peers["j"].reached = "k:7946" // as if it had answered elsewhere
	out = join(10*time.Second, j)
	require.Len(t, out, 1)
	assert.Equal(t, MsgPing, out[0].Kind)
	assert.Equal(t, 2, a.Stats().JoinChallenges)
}

// A join whose challenge would be over twice its size (a 1-byte ID
// joining a member with a 255-byte ID) is refused, not challenged: the
// forger picks the join's size. The same join checked by its transport
// is applied.
func TestJoinChallengeAtMostTwiceTheJoin(t *testing.T) {
	m := challengeTest(t, "a", "b")
	m.self.ID = ID(strings.Repeat("a", MaxIDLen))
	f := Node{ID: "f", Addr: "f:1"}
	join := Packet{Kind: MsgJoin, From: f, To: Node{Addr: m.Self().Addr}, Updates: []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}}
	ping := Packet{Kind: MsgPing, From: m.Self(), To: f}
	require.Greater(t, ping.Size(), 2*join.Size(), "the case under test")
	require.NoError(t, m.Step(0, &join))
	out, _ := drain(m)
	assert.Empty(t, out)
	assert.Equal(t, 1, m.Stats().PullsRefused)
	assert.Zero(t, m.Stats().JoinChallenges)
	require.NoError(t, m.StepSourceChecked(time.Millisecond, &join))
	assert.Equal(t, StateAlive, m.State("f"))
	drain(m)

	g := Node{ID: ID(strings.Repeat("g", 100)), Addr: "g:7946"}
	join = Packet{Kind: MsgJoin, From: g, To: Node{Addr: m.Self().Addr}, Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}
	require.NoError(t, m.Step(2*time.Millisecond, &join))
	out, _ = drain(m)
	require.Len(t, out, 1, "a join of its challenge's size or more is challenged")
	assert.LessOrEqual(t, out[0].Size(), 2*join.Size())
}
