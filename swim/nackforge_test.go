package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Forged and replayed nacks cannot make a failed probe look corroborated
// and so skip the detector gate's retry: only a nack from an intermediate
// asked for this probe, once each, with this probe's seq, counts. A nack
// from the target, from a member not asked, a duplicate from one of the
// two asked, and a nack for another seq leave the gate to defer the
// suspicion as for a probe with no nack at all.
func TestForgedNacksDoNotSkipGate(t *testing.T) {
	a, target, reqs := gatedProbe(t)
	seq := reqs[0].PingReq.Seq
	forged := []Packet{
		{Kind: MsgNack, From: node(string(target)), To: node("a"), Nack: Nack{Seq: seq}},
		{Kind: MsgNack, From: node("zz"), To: node("a"), Nack: Nack{Seq: seq}},
		{Kind: MsgNack, From: reqs[0].To, To: node("a"), Nack: Nack{Seq: seq}},
		{Kind: MsgNack, From: reqs[0].To, To: node("a"), Nack: Nack{Seq: seq}},
		{Kind: MsgNack, From: reqs[1].To, To: node("a"), Nack: Nack{Seq: seq + 1}},
		{Kind: MsgNack, From: reqs[1].To, To: node("a"), Nack: Nack{Seq: seq - 1}},
	}
	for i := range forged {
		require.NoError(t, a.Step(700*time.Millisecond, &forged[i]))
	}
	a.Tick(time.Second)
	_, ev := drain(a)
	assert.Empty(t, ev, "one of two asked nacked: the gate retries")
	assert.Equal(t, 1, a.Stats().GateDeferrals)
	assert.Equal(t, StateAlive, a.State(target))
	assert.Equal(t, 1, a.LocalHealthMultiplier(), "one missed nack")
}

// A nack that arrives after the probe was acked (relayed by the other
// intermediate) counts for nothing: no suspicion, no failed probe.
func TestNackAfterAckIgnored(t *testing.T) {
	a, target, reqs := gatedProbe(t)
	ack := Packet{Kind: MsgAck, From: reqs[0].To, To: node("a"), Ack: Ack{Seq: reqs[0].PingReq.Seq}}
	require.NoError(t, a.Step(600*time.Millisecond, &ack))
	nackAll(t, a, reqs, 700*time.Millisecond)
	a.Tick(time.Second)
	_, ev := drain(a)
	assert.Empty(t, ev)
	assert.Equal(t, StateAlive, a.State(target))
	assert.Zero(t, a.Stats().ProbesFailed)
	assert.Zero(t, a.Stats().GateDeferrals)
}
