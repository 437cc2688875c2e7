package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An ack in a probed member's name from another host than the one it is
// held at (StepFromOtherSource) answers no probe: probe numbers are the
// round (predictable), and an insider's acks sent so kept a crashed member
// alive at every member for as long as it sent them (issue 27, user38
// F1). The same ack from the member's host answers the probe.
func TestAckFromOtherHostAnswersNoProbe(t *testing.T) {
	for _, other := range []bool{true, false} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		a.Tick(0)
		pk, _ := drain(a)
		ping := only(t, pk, MsgPing)
		require.Len(t, ping, 1)
		require.True(t, a.pr.active)
		target := a.pr.target.node
		ack := Packet{Kind: MsgAck, From: target, To: a.Self(), Ack: Ack{Seq: ping[0].Ping.Seq}}
		step := a.Step
		if other {
			step = a.StepFromOtherSource
		}
		require.NoError(t, step(time.Millisecond, &ack))
		drain(a)
		out, _ := advance(a, a.cfg.ProbeInterval-time.Millisecond)
		reqs := only(t, out, MsgPingReq)
		if other {
			assert.True(t, a.pr.active || a.Stats().ProbesFailed == 1, "the probe still waits or failed")
			assert.NotEmpty(t, reqs, "the probe goes on to ping-reqs")
			assert.Equal(t, 1, a.Stats().AcksFromOtherHost)
		} else {
			assert.False(t, a.pr.active, "answered")
			assert.Empty(t, reqs)
			assert.Zero(t, a.Stats().AcksFromOtherHost)
		}
	}
}

// Nor does such an ack complete a relay: an intermediate asked to ping c
// forwards no ack to the origin for an ack in c's name from another host.
func TestAckFromOtherHostCompletesNoRelay(t *testing.T) {
	for _, other := range []bool{true, false} {
		a := relayMember(t)
		req := pingReq(node("b"), node("c"), false)
		require.NoError(t, a.Step(10*time.Millisecond, &req))
		pk, _ := drain(a)
		var relayed []Packet
		for _, p := range only(t, pk, MsgPing) {
			if p.To.ID == "c" {
				relayed = append(relayed, p)
			}
		}
		require.Len(t, relayed, 1)
		ack := Packet{Kind: MsgAck, From: node("c"), To: a.Self(), Ack: Ack{Seq: relayed[0].Ping.Seq}}
		step := a.Step
		if other {
			step = a.StepFromOtherSource
		}
		require.NoError(t, step(20*time.Millisecond, &ack))
		out, _ := drain(a)
		toB := 0
		for _, p := range only(t, out, MsgAck) {
			if p.To.ID == "b" && p.Ack.Seq == req.PingReq.Seq {
				toB++
			}
		}
		if other {
			assert.Zero(t, toB, "no ack forwarded to b")
		} else {
			assert.Equal(t, 1, toB, "the ack forwarded to b")
		}
	}
}
