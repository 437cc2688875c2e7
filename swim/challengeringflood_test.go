package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk30 F1: the challenges' ring (challengesKept, 2 × PullsPerPeriod) is
// not bounded by the period's budget of join challenges: that budget
// counts challenges outstanding at once, and one that is answered frees
// its slot at once. A sender at its own host that answers the challenges
// of its own joins (fresh IDs, fresh ports: each join applied, or refused
// by a quota after, spends one entry either way) draws challenges as fast
// as its round trip, and 2 × PullsPerPeriod + 1 of them within a real
// joiner's round trip push the joiner's challenge out of the ring. The
// joiner's ack, without its ID as the challenge asks, then matches no
// ping (AcksUnmatched) and its join waits for a resend over a stream a
// period later, however often the flood repeats. Before 6cb9b34 the ack
// named the joiner and matched its challenge by number and ID alone.
func TestChallengeRingFloodedByAnsweredJoins(t *testing.T) {
	a, j, challenge := challengedJoin(t)
	ch := []Packet{challenge}

	// The attacker's host: joins under fresh IDs from fresh ports, each
	// challenge answered as it comes (the attacker receives them there).
	now := time.Millisecond
	for i := range 2*DefaultPullsPerPeriod + 1 {
		f := Node{ID: ID(fmt.Sprintf("f%04d", i)), Addr: fmt.Sprintf("10.9.9.9:%d", 10000+i)}
		now += 10 * time.Microsecond
		require.NoError(t, a.Step(now, &Packet{Kind: MsgJoin, From: f, To: Node{Addr: "a:7946"},
			Updates: []Update{{Kind: UpdateAlive, Node: f, From: f.ID}}}))
		pings := only(t, mustDrain(a), MsgPing)
		require.NotEmpty(t, pings, "join %d challenged", i)
		ack := Packet{Kind: MsgAck, From: f, To: node("a"), Ack: Ack{Seq: pings[0].Ping.Seq, NoSenderID: pings[0].Ping.MatchBySeq}}
		if ack.Ack.NoSenderID {
			ack = idless(ack, false)
			ack.From.Addr = f.Addr
		}
		_ = a.Step(now, &ack)
		mustDrain(a)
	}
	assert.Greater(t, a.Stats().JoinChallenges, 2*DefaultPullsPerPeriod, "challenges drawn within one round trip of the joiner's")

	// The joiner answers its challenge as it asks, 50 ms after it came.
	require.NoError(t, j.Step(50*time.Millisecond, &ch[0]))
	acks := only(t, mustDrain(j), MsgAck)
	require.Len(t, acks, 1)
	ack := acks[0]
	if ack.Ack.NoSenderID {
		ack = idless(ack, false)
		ack.From.Addr = "j:7946"
	}
	unmatched := a.Stats().AcksUnmatched
	_ = a.Step(51*time.Millisecond, &ack)
	assert.Equal(t, StateAlive, a.State("j"), "the real joiner, answering within its challenge's period, is admitted")
	assert.Equal(t, unmatched, a.Stats().AcksUnmatched, "its ack matched its challenge")
}
