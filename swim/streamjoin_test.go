package swim

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A join over a stream (AnswerStreamJoin) from a sender not verified at
// the address it claims is answered on the stream: the view comes back
// to the caller, and the claimed address gets only the challenge ping,
// within twice the join's bytes. Once the sender has acked the challenge
// there, its next stream join is answered at that address, as Step
// answers it (an older joiner closes its join stream unread), and
// nothing comes back for the stream.
func TestStreamJoinAnsweredOnTheStream(t *testing.T) {
	a := challengeTest(t, "a", "b", "c")
	g := Node{ID: "g", Addr: "g:7946"}
	join := Packet{Kind: MsgJoin, From: g, To: Node{Addr: a.Self().Addr}, Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}
	reply, err := a.AnswerStreamJoin(time.Millisecond, &join)
	require.NoError(t, err)
	held := map[ID]bool{}
	for _, p := range reply {
		require.Equal(t, MsgSync, p.Kind)
		require.Equal(t, g, p.To)
		for _, u := range p.Updates {
			held[u.Node.ID] = true
		}
	}
	assert.Equal(t, map[ID]bool{"a": true, "b": true, "c": true, "g": true}, held, "the view, on the stream")
	out, _ := drain(a)
	toG := 0
	for _, p := range out {
		assert.False(t, p.Kind == MsgSync || p.Kind == MsgJoin, "%v to %s: the answer went to the claimed address", p.Kind, p.To.ID)
		if p.To.Addr == g.Addr {
			toG += a.sentBytes(&p)
		}
	}
	ch := challengeTo(t, a, out, "g")
	assert.LessOrEqual(t, toG, 2*a.recvBytes(&join), "the claimed address's bytes against the join's")
	assert.Equal(t, StateAlive, a.State("g"))
	assert.False(t, a.peers["g"].verified)
	assert.Zero(t, a.Stats().JoinChallenges, "no join challenge")

	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgAck, From: g, To: a.Self(), Ack: Ack{Seq: ch.Ping.Seq}}))
	require.True(t, a.peers["g"].verified)
	drain(a)
	reply, err = a.AnswerStreamJoin(2*time.Second, &join)
	require.NoError(t, err)
	assert.Empty(t, reply, "verified there: nothing on the stream")
	out, _ = drain(a)
	assert.NotEmpty(t, only(t, out, MsgSync), "the view at the address it acked from")

	_, err = a.AnswerStreamJoin(3*time.Second, &Packet{Kind: MsgPing, From: g, To: a.Self()})
	assert.True(t, errors.Is(err, ErrPacket), "a ping is no join: %v", err)
	_, err = a.AnswerStreamJoin(3*time.Second, &Packet{Kind: MsgJoin, From: Node{ID: "h"}, To: a.Self(), Updates: join.Updates})
	assert.True(t, errors.Is(err, ErrPacket), "no address to answer at: %v", err)
}
