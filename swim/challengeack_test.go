package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idless returns the ack as swim/wire delivers an ack that leaves its
// sender's ID out (Ack.NoSenderID): without the ID, and with the
// datagram's source as the address when the receiver does not know the
// sender (swim/agent fills it in), else without one.
func idless(ack Packet, known bool) Packet {
	ack.From.ID = ""
	if known {
		ack.From.Addr = ""
	}
	return ack
}

// A join challenge asks for an ack without IDs (Ping.MatchBySeq), as a
// probe's ping does: the joiner answers without naming itself, and the
// seed matches the ack to the joiner by the challenge's random number
// (AckSender) and admits it; the challenge still names the joiner in full
// (Ping.Verifies). An ID-less ack with another number admits no one and counts as
// unmatched; one with the number from another address admits no one.
func TestJoinChallengeAnsweredWithoutIDs(t *testing.T) {
	a, j, ch := challengedJoin(t)
	require.Equal(t, MsgPing, ch.Kind)
	assert.True(t, ch.Ping.MatchBySeq, "the challenge asks for an ack without IDs")
	assert.True(t, ch.Ping.Verifies, "and names the joiner")
	id, ok := a.AckSender(ch.Ping.Seq)
	require.True(t, ok)
	assert.Equal(t, ID("j"), id)

	require.NoError(t, j.Step(2*time.Millisecond, &ch))
	answers, _ := drain(j)
	acks := only(t, answers, MsgAck)
	require.Len(t, acks, 1)
	assert.True(t, acks[0].Ack.NoSenderID, "the joiner answers without its ID")

	wrong := idless(acks[0], false)
	wrong.Ack.Seq++
	assert.ErrorIs(t, a.Step(3*time.Millisecond, &wrong), ErrPacket)
	assert.Equal(t, 1, a.Stats().AcksUnmatched)
	elsewhere := idless(acks[0], false)
	elsewhere.From.Addr = "x:7946"
	require.NoError(t, a.Step(3*time.Millisecond, &elsewhere))
	assert.Equal(t, State(0), a.State("j"), "not from the joiner's address")

	ack := idless(acks[0], false)
	ack.From.Addr = "j:7946"
	require.NoError(t, a.Step(4*time.Millisecond, &ack))
	assert.Equal(t, StateAlive, a.State("j"))
	assert.True(t, a.peers["j"].verified)
	views := only(t, mustDrain(a), MsgSync)
	require.NotEmpty(t, views, "the view goes to the joiner")
	assert.Equal(t, "j:7946", views[0].To.Addr)
}

// challengedJoin returns a seed a (holding b and c, join challenges on),
// a joiner j that sent it its join at 1 ms, and the challenge a sent j.
func challengedJoin(t *testing.T) (a, j *Member, ch Packet) {
	t.Helper()
	a = challengeTest(t, "a", "b", "c")
	j = newTest(t, "j", ModeSWIM, nil)
	require.NoError(t, j.Join(0, []string{"a:7946"}))
	pk, _ := drain(j)
	require.Len(t, pk, 1)
	require.NoError(t, a.Step(time.Millisecond, &pk[0]))
	out, _ := drain(a)
	require.Len(t, out, 1, "the challenge")
	return a, j, out[0]
}

func mustDrain(m *Member) []Packet {
	pk, _ := drain(m)
	return pk
}

// The challenge of a member heard of and then heard from (receipt.go)
// asks for an ack without IDs too; the ack, without its sender's ID or
// address (wire format 2 leaves both out for a member the receiver holds),
// verifies the member.
func TestVerifyChallengeAnsweredWithoutIDs(t *testing.T) {
	a := floodTest(t, ModeSWIM, 4)
	g0 := node("g0000")
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgPing, From: g0, To: node("a"), Ping: Ping{Seq: 9, MatchBySeq: true}}))
	out, _ := drain(a)
	ch := challengeTo(t, a, out, "g0000")
	assert.True(t, ch.Ping.MatchBySeq)
	ack := idless(Packet{Kind: MsgAck, From: g0, To: node("a"), Ack: Ack{Seq: ch.Ping.Seq, NoSenderID: true}}, true)
	require.NoError(t, a.Step(2*time.Millisecond, &ack))
	assert.True(t, a.peers["g0000"].verified)
	assert.Equal(t, 3, a.unverified)
	assert.Zero(t, a.Stats().AcksUnmatched)
}

// Challenges are remembered apart from probe pings: a flood of forged
// joins, a period's budget of challenges (PullsPerPeriod), does not push
// the probe's ping out of the ring its ID-less ack is matched by (8
// pings), so the probe's target still answers, and the first challenge is
// still matched too (join challenges are matched among those waiting).
func TestChallengesKeepProbePings(t *testing.T) {
	a := challengeTest(t, "a", "b")
	a.Tick(0)
	pk, _ := drain(a)
	ping := only(t, pk, MsgPing)[0]
	require.Equal(t, ID("b"), ping.To.ID)
	var first uint32
	for i := range DefaultPullsPerPeriod {
		f := Node{ID: ID(fmt.Sprintf("f%03d", i)), Addr: fmt.Sprintf("10.0.%d.%d:7946", i/200, i%200)}
		require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgJoin, From: f, To: Node{Addr: "a:7946"},
			Updates: []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}}))
		out, _ := drain(a)
		if i == 0 {
			first = only(t, out, MsgPing)[0].Ping.Seq
		}
	}
	require.Equal(t, DefaultPullsPerPeriod, a.Stats().JoinChallenges)
	id, ok := a.AckSender(ping.Ping.Seq)
	require.True(t, ok, "the probe's ping is still matched")
	assert.Equal(t, ID("b"), id)
	id, ok = a.AckSender(first)
	require.True(t, ok, "the first challenge is still matched")
	assert.Equal(t, ID("f000"), id)

	ack := idless(Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: ping.Ping.Seq, NoSenderID: true}}, true)
	require.NoError(t, a.Step(20*time.Millisecond, &ack))
	pk, _ = advance(a, 900*time.Millisecond)
	assert.Empty(t, only(t, pk, MsgPingReq), "the probe of b was answered")
	assert.Zero(t, a.Stats().AcksUnmatched)
}

// Gossip and views that check their receiver instead of naming it
// (Packet.ToCheck, which swim/wire sends for a long ID) are dropped as
// misdirected by a member whose ID's check differs, as ones naming
// another ID are, and applied by the member whose check it is.
func TestToCheckMisdirectedGossip(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	x := node("x")
	for _, kind := range []MessageKind{MsgGossip, MsgSync} {
		other := Packet{Kind: kind, From: node("b"), ToCheck: IDCheck("zz"), Updates: []Update{{Kind: UpdateAlive, Node: x, From: x.ID}}}
		require.NoError(t, a.Step(0, &other))
		assert.Equal(t, State(0), a.State("x"), "%v not for a", kind)
	}
	assert.Equal(t, 2, a.Stats().Misdirected)
	own := Packet{Kind: MsgGossip, From: node("b"), ToCheck: IDCheck("a"), Updates: []Update{{Kind: UpdateAlive, Node: x, From: x.ID}}}
	require.NoError(t, a.Step(0, &own))
	assert.Equal(t, StateAlive, a.State("x"))
	assert.Equal(t, 2, a.Stats().Misdirected)
}

// The challenges of unverified members are kept for two periods' budget
// (challengesKept: 2 × PullsPerPeriod, counted as sent): the first of a
// period's challenges is still matched after the next period's budget is
// spent too, and forgotten after a third's.
func TestVerifyChallengesKeptTwoPeriods(t *testing.T) {
	const pulls = 4
	a := newTest(t, "a", ModeSWIM, func(c *Config) { c.PullsPerPeriod = pulls }, "b", "c", "d")
	var ups []Update
	for i := range 3 * pulls {
		g := node(fmt.Sprintf("g%04d", i))
		ups = append(ups, Update{Kind: UpdateAlive, Node: g, From: g.ID})
	}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: ups}))
	drain(a)
	var first uint32
	for period := range 3 {
		for i := range pulls {
			g := node(fmt.Sprintf("g%04d", period*pulls+i))
			now := time.Duration(period)*time.Second + time.Duration(1+i)*time.Millisecond
			require.NoError(t, a.Step(now, &Packet{Kind: MsgPing, From: g, To: node("a"), Ping: Ping{Seq: 9, MatchBySeq: true}}))
			ch := challengeTo(t, a, mustDrain(a), g.ID)
			assert.True(t, ch.Ping.Verifies)
			if first == 0 {
				first = ch.Ping.Seq
			}
		}
		id, ok := a.AckSender(first)
		if period < 2 {
			require.True(t, ok, "period %d: the first challenge is still matched", period)
			assert.Equal(t, ID("g0000"), id)
		} else {
			assert.False(t, ok, "period %d: forgotten", period)
		}
	}
	assert.Equal(t, 3*pulls, a.Stats().VerifyChallenges)
}
