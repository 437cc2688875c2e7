package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that refused a stream ping while it was down (a restart: its
// process, stream listener included, gone for seconds) and is heard from
// again only seconds later has not shown that it lives without accepting
// streams: nothing answered during the probe its listener refused. Its
// later refusals still count as evidence of death (no gate's retry), unlike
// those of a member that answers while refusing (testdata/scenarios/gate.txt),
// so that a rolling restart does not cost every member that probed a
// restarting one during its downtime a retry for good.
func TestGateRefusalBeforeRestartStillCounts(t *testing.T) {
	a := streamGateMember(t)

	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To
	failFirstProbe(t, a, 0, target)
	pk, _ = drain(a)
	require.Empty(t, only(t, pk, MsgPing), "refused: no retry")
	// The target is down: nothing answers the retry or anything else
	// until it is back, 3 s later, and its Alive arrives.
	now := 650 * time.Millisecond
	for ; now < 3*time.Second; now += 50 * time.Millisecond {
		a.Tick(now)
		pk, _ := drain(a)
		for _, p := range only(t, pk, MsgPing) {
			if p.To.ID != target.ID {
				ack := Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}
				require.NoError(t, a.Step(now+2*time.Millisecond, &ack))
				drain(a)
			}
		}
	}
	back := Packet{Kind: MsgGossip, From: target, To: node("a"),
		Updates: []Update{{Kind: UpdateAlive, Node: target, Incarnation: a.peers[target.ID].inc + 1, From: target.ID}}}
	require.NoError(t, a.Step(now, &back))
	drain(a)
	require.Equal(t, StateAlive, a.State(target.ID))
	assert.False(t, a.peers[target.ID].noStream, "heard 2.35 s after the refusal, nothing answered meanwhile")

	// The next probe of target, every other peer answering, and the target
	// pinging a now and then (so that a's detector trusts it).
	for ; ; now += 50 * time.Millisecond {
		if now%time.Second == 0 {
			ping := Packet{Kind: MsgPing, From: target, To: node("a"), Ping: Ping{Seq: 1}}
			require.NoError(t, a.Step(now, &ping))
			drain(a)
		}
		a.Tick(now)
		pk, _ := drain(a)
		ping := only(t, pk, MsgPing)
		if len(ping) == 1 && ping[0].To.ID == target.ID {
			break
		}
		for _, p := range ping {
			ack := Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}
			require.NoError(t, a.Step(now+2*time.Millisecond, &ack))
			drain(a)
		}
	}
	deferrals := a.Stats().GateDeferrals
	reqs := failFirstProbe(t, a, now, target)
	nackAll(t, a, reqs, now+660*time.Millisecond)
	pk, ev := drain(a)
	assert.Empty(t, only(t, pk, MsgPing), "the refusal counts: no retry")
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind, "suspected once every intermediate nacked")
	assert.Equal(t, deferrals, a.Stats().GateDeferrals)
}

// A stream ack that arrives after its probe ended (an intermediate's
// relayed ack came first) still shows that the target accepts streams:
// its refusals count again, without waiting for a probe whose only
// answer is the stream ack.
func TestLateStreamAckClearsNoStream(t *testing.T) {
	a := streamGateMember(t)
	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To
	tp := a.peers[target.ID]
	tp.noStream = true
	a.Tick(500 * time.Millisecond)
	pk, _, sp := drainStreams(a)
	reqs := only(t, pk, MsgPingReq)
	require.NotEmpty(t, reqs)
	require.Len(t, sp, 1)
	// An intermediate relays the target's ack: the probe ends.
	ack := Packet{Kind: MsgAck, From: reqs[0].To, To: node("a"), Ack: Ack{Seq: reqs[0].PingReq.Seq}}
	require.NoError(t, a.Step(600*time.Millisecond, &ack))
	drain(a)
	require.False(t, a.pr.active)
	a.StreamAck(650*time.Millisecond, target.ID, sp[0].Seq)
	assert.False(t, tp.noStream, "the target answered over a stream")
	_, ev := drain(a)
	assert.Empty(t, ev, "nothing else changes: no stream-only event")
	// An ack for another seq, or from another member, changes nothing.
	tp.noStream = true
	a.StreamAck(700*time.Millisecond, target.ID, sp[0].Seq+1)
	a.StreamAck(700*time.Millisecond, "zz", sp[0].Seq)
	assert.True(t, tp.noStream)
}

// streamGateMember is a ModeDetector member a with the stream fallback on,
// fixed per-peer detectors, and b, c and d each heard from once at 0 (so
// that the gate applies to them).
func streamGateMember(t *testing.T) *Member {
	t.Helper()
	a := newTest(t, "a", ModeDetector, func(c *Config) {
		c.StreamProbe = true
		c.PeerDetector = FixedPeerDetector(5 * time.Second)
	}, "b", "c", "d")
	for _, from := range []string{"b", "c", "d"} {
		p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
		require.NoError(t, a.Step(0, &p))
	}
	return a
}

// failFirstProbe fails a's probe of target started at now (a member from
// streamGateMember): the direct timeout at 500 ms, the stream ping
// refused at 650 ms, no intermediate nacking yet; it returns the probe's
// ping-reqs.
func failFirstProbe(t *testing.T, a *Member, now time.Duration, target Node) []Packet {
	t.Helper()
	a.Tick(now + 500*time.Millisecond)
	pk, _, sp := drainStreams(a)
	reqs := only(t, pk, MsgPingReq)
	require.Len(t, reqs, 2)
	require.Len(t, sp, 1)
	a.StreamFailed(now+650*time.Millisecond, target.ID, sp[0].Seq)
	return reqs
}
