package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gate's retry ends as soon as every intermediate asked has nacked;
// nacks from anybody else, or one asked intermediate's nack repeated, do
// not end it early, and the target's direct ack then keeps it alive.
func TestRetryNotEndedByForgedNacks(t *testing.T) {
	a, target, _ := gatedProbe(t)
	a.Tick(time.Second) // the gate defers: a retry next period
	drain(a)
	require.Equal(t, 1, a.Stats().GateDeferrals)
	_, ev := advance(a, 2*time.Second)
	require.Empty(t, ev)
	drain(a)
	require.True(t, a.pr.active && a.pr.retry, "the retry probe runs")
	require.Equal(t, target, a.pr.target.node.ID)
	require.Len(t, a.asked, 2)
	seq := a.pr.seq
	forged := []Packet{
		{Kind: MsgNack, From: node(string(target)), To: node("a"), Nack: Nack{Seq: seq}},
		{Kind: MsgNack, From: node("zz"), To: node("a"), Nack: Nack{Seq: seq}},
		{Kind: MsgNack, From: node(string(a.asked[0].id)), To: node("a"), Nack: Nack{Seq: seq}},
		{Kind: MsgNack, From: node(string(a.asked[0].id)), To: node("a"), Nack: Nack{Seq: seq}},
	}
	now := a.pr.sent + time.Millisecond
	for i := range forged {
		require.NoError(t, a.Step(now, &forged[i]))
	}
	_, ev = drain(a)
	assert.Empty(t, ev, "one of two asked nacked: the retry goes on")
	assert.True(t, a.pr.active)
	ack := Packet{Kind: MsgAck, From: node(string(target)), To: node("a"), Ack: Ack{Seq: seq}}
	require.NoError(t, a.Step(now+time.Millisecond, &ack))
	_, ev = advance(a, 3*time.Second)
	for _, e := range ev {
		assert.NotEqual(t, EventSuspect, e.Kind)
	}
	assert.Equal(t, StateAlive, a.State(target))
	assert.Zero(t, a.Stats().Suspicions)
}
