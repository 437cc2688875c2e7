package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lifeguard §IV-A: a failed probe raises the LHM by the number of missed
// nacks, so a failed probe whose intermediates all nacked leaves it
// unchanged. A nack counts once per intermediate that was asked: a
// duplicated nack, a nack from a member that was not asked, or one that
// arrives before the ping-reqs went out must not make a failed probe look
// like a success (lower the LHM).
func TestNackCountedOncePerIntermediate(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
	a.adjustHealth(3)
	a.Tick(0)
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	target := pk[0].To
	// A nack before any ping-req was sent, and one from the target itself.
	early := Packet{Kind: MsgNack, From: node("zz"), To: node("a"), Nack: Nack{Seq: pk[0].Ping.Seq}}
	require.NoError(t, a.Step(100*time.Millisecond, &early))
	a.Tick(2 * time.Second) // probe timeout 500 ms · 4
	pk, _ = drain(a)
	reqs := only(t, pk, MsgPingReq)
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		nack := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
		for range 2 { // duplicated
			require.NoError(t, a.Step(2500*time.Millisecond, &nack))
		}
	}
	for _, from := range []Node{target, node("zz")} {
		nack := Packet{Kind: MsgNack, From: from, To: node("a"), Nack: Nack{Seq: reqs[0].PingReq.Seq}}
		require.NoError(t, a.Step(2500*time.Millisecond, &nack))
	}
	a.Tick(4 * time.Second) // end of the period 1 s · 4
	_, ev := drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, 3, a.LocalHealthMultiplier(), "all three intermediates nacked: no missed nack, no change")

	// Only one of three intermediates nacks, twice: two nacks missed.
	b := newTest(t, "b", ModeLifeguard, nil, "a", "c", "d", "e", "f")
	b.Tick(0)
	drain(b)
	b.Tick(500 * time.Millisecond)
	pk, _ = drain(b)
	reqs = only(t, pk, MsgPingReq)
	require.Len(t, reqs, 3)
	nack := Packet{Kind: MsgNack, From: reqs[0].To, To: node("b"), Nack: Nack{Seq: reqs[0].PingReq.Seq}}
	for range 3 {
		require.NoError(t, b.Step(700*time.Millisecond, &nack))
	}
	b.Tick(time.Second)
	assert.Equal(t, 2, b.LocalHealthMultiplier(), "two missed nacks")
}

// A ping-req relay nacks after its base probe timeout, not scaled by its
// own local health multiplier: an unhealthy relay's late nack would reach
// the requester after its period and count against the requester's health.
func TestRelayNackNotScaledByOwnLHM(t *testing.T) {
	for _, mode := range []Mode{ModeLifeguard, ModeDetector} {
		b := newTest(t, "b", mode, nil, "a", "c")
		b.adjustHealth(3)
		req := Packet{Kind: MsgPingReq, From: node("a"), To: node("b"), PingReq: PingReq{Seq: 7, Target: node("c"), Nack: true}}
		require.NoError(t, b.Step(10*time.Second, &req))
		drain(b)
		b.Tick(10*time.Second + 500*time.Millisecond)
		pk, _ := drain(b)
		nacks := only(t, pk, MsgNack)
		require.Len(t, nacks, 1, "%v: nack after ProbeTimeout (500 ms), not 500 ms · 4", mode)
		assert.Equal(t, uint32(7), nacks[0].Nack.Seq)
	}
}
