package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The group-wide RTT prior is a mean over whichever peers acked lately: in
// a group with near peers (2 ms) and a far one (150 ms) it sits at the
// 100 ms floor while the far peer's round trip is 150 ms. It may set when a
// first probe's ping-reqs go out, but it must not decide a failure: the
// gate's retry of a far peer this member never measured waits
// ProbeTimeout for the direct ack, even once every intermediate has nacked.

// nearGroup returns a ModeDetector member a of {a, b, c, d, f} whose
// detectors (a 5 s fixed timeout) have heard every peer at 0, and that has
// measured 2 ms round trips to b, c and d by probing each of them once,
// at 0, 1 and 2 s (its first probes are shuffled: the peers are acked in
// whatever order a probes them; f, if probed among the first, is skipped by
// acking it through a relay asked, which measures nothing).
func nearGroup(t *testing.T) (a *Member, now time.Duration) {
	t.Helper()
	return nearGroupWith(t, nil)
}

// untilProbeOf ticks a one period at a time from now, acking every ping
// 2 ms later, until a pings target; it returns that period's start, with
// the ping to target drained and unanswered.
func untilProbeOf(t *testing.T, a *Member, now time.Duration, target ID) time.Duration {
	t.Helper()
	for ; ; now += time.Second {
		a.Tick(now)
		pk, _ := drain(a)
		ping := only(t, pk, MsgPing)
		require.Len(t, ping, 1)
		if ping[0].To.ID == target {
			return now
		}
		ack := Packet{Kind: MsgAck, From: ping[0].To, To: node("a"), Ack: Ack{Seq: ping[0].Ping.Seq}}
		require.NoError(t, a.Step(now+2*time.Millisecond, &ack))
		drain(a)
	}
}

// nearGroupWith is nearGroup with mut applied to the configuration too.
func nearGroupWith(t *testing.T, mut func(*Config)) (a *Member, now time.Duration) {
	t.Helper()
	a = newTest(t, "a", ModeDetector, func(c *Config) {
		c.PeerDetector = FixedPeerDetector(5 * time.Second)
		if mut != nil {
			mut(c)
		}
	}, "b", "c", "d", "f")
	for _, from := range []string{"b", "c", "d", "f"} {
		p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
		require.NoError(t, a.Step(0, &p))
	}
	measured := 0
	for now = 0; measured < 3; now += time.Second {
		a.Tick(now)
		pk, _ := drain(a)
		ping := only(t, pk, MsgPing)
		require.Len(t, ping, 1)
		from, at := ping[0].To, now+2*time.Millisecond
		if from.ID == "f" {
			// Acked through a relay asked (ping-req), which measures
			// nothing: the ack comes from the first intermediate.
			for at = now; ; {
				at += 10 * time.Millisecond
				pk, _ := advance(a, at)
				if reqs := only(t, pk, MsgPingReq); len(reqs) > 0 {
					from = reqs[0].To
					break
				}
				require.Less(t, at, now+time.Second, "no ping-req for f")
			}
		} else {
			measured++
		}
		ack := Packet{Kind: MsgAck, From: from, To: node("a"), Ack: Ack{Seq: ping[0].Ping.Seq}}
		require.NoError(t, a.Step(at, &ack))
		drain(a)
	}
	pt, _ := a.ProbeTimeout("f")
	require.Equal(t, 100*time.Millisecond, pt, "the prior, from 2 ms samples, at its floor")
	return a, now
}

// The retry of a peer with no RTT sample of its own ends as failed only
// once ProbeTimeout (500 ms) has passed, not at the prior's 100 ms: f's ack,
// 150 ms after the retry's ping, arrives after every intermediate nacked
// (at 101 ms) and still counts. The retry starts when the first probe's
// intermediates have all nacked, within its period (no stream ping: no
// evidence of death).
func TestRetryOfUnmeasuredPeerWaitsProbeTimeout(t *testing.T) {
	a, now := nearGroup(t)
	// Run periods until a probes f; that probe gets no answer at all.
	start := untilProbeOf(t, a, now, "f")
	// Its ping-reqs go out at the prior's 100 ms; every intermediate nacks
	// (this member's local health stays 0).
	pk, ev := advance(a, start+100*time.Millisecond)
	require.Empty(t, ev)
	first := only(t, pk, MsgPingReq)
	require.Len(t, first, 3)
	nackAll(t, a, first, start+600*time.Millisecond)
	pk, ev = drain(a)
	require.Empty(t, ev, "the first failure is re-checked, at once, within its period")
	require.Equal(t, 1, a.Stats().GateDeferrals)
	require.Zero(t, a.LocalHealthMultiplier())
	ping := only(t, pk, MsgPing)
	require.Len(t, ping, 1)
	require.Equal(t, ID("f"), ping[0].To.ID)
	reqs := only(t, pk, MsgPingReq)
	require.Len(t, reqs, 3)

	retry := start + 600*time.Millisecond
	nackAll(t, a, reqs, retry+101*time.Millisecond)
	_, ev = drain(a)
	assert.Empty(t, ev, "every intermediate nacked, but ProbeTimeout has not passed")
	_, ev = advance(a, retry+150*time.Millisecond)
	assert.Empty(t, ev)
	ack := Packet{Kind: MsgAck, From: node("f"), To: node("a"), Ack: Ack{Seq: ping[0].Ping.Seq}}
	require.NoError(t, a.Step(retry+150*time.Millisecond, &ack))
	_, ev = advance(a, retry+time.Second-time.Nanosecond)
	assert.Empty(t, ev, "f acked within ProbeTimeout")
	assert.Equal(t, StateAlive, a.State("f"))
	assert.Zero(t, a.Stats().Suspicions)
	own, _ := a.ProbeTimeout("f")
	// f's own sample, 150 ms: SRTT 150 ms, RTTVAR 75 ms, 450 ms.
	assert.Equal(t, 450*time.Millisecond, own)
}

// A relay waits ProbeTimeout for a target whose RTT it never measured,
// not the prior: f's ack 150 ms after the relay's ping is passed on to the
// requester, and no nack goes out. For a target it measured, its own
// estimate holds (here the 100 ms floor): the nack goes out then.
func TestRelayOfUnmeasuredTargetWaitsProbeTimeout(t *testing.T) {
	a, now := nearGroup(t)
	// a relays a ping-req from b for f.
	req := Packet{Kind: MsgPingReq, From: node("b"), To: node("a"), PingReq: PingReq{Seq: 77, Target: node("f"), Nack: true}}
	now += 300 * time.Millisecond // between a's own probes (acked at 2 ms)
	require.NoError(t, a.Step(now, &req))
	pk, _ := drain(a)
	var relayed *Packet
	for i := range pk {
		if pk[i].Kind == MsgPing && pk[i].To.ID == "f" {
			relayed = &pk[i]
		}
	}
	require.NotNil(t, relayed)
	pk, _ = advance(a, now+150*time.Millisecond)
	assert.Empty(t, only(t, pk, MsgNack), "no nack before ProbeTimeout for an unmeasured target")
	ack := Packet{Kind: MsgAck, From: node("f"), To: node("a"), Ack: Ack{Seq: relayed.Ping.Seq}}
	require.NoError(t, a.Step(now+150*time.Millisecond, &ack))
	pk, _ = drain(a)
	acks := only(t, pk, MsgAck)
	require.Len(t, acks, 1, "f's ack is passed on")
	assert.Equal(t, ID("b"), acks[0].To.ID)
	assert.Equal(t, uint32(77), acks[0].Ack.Seq)

	// Measured now (150 ms; 450 ms): a second relay for f nacks at 450 ms.
	now += 200 * time.Millisecond
	req.PingReq.Seq = 78
	require.NoError(t, a.Step(now, &req))
	drain(a)
	pk, _ = advance(a, now+450*time.Millisecond-time.Nanosecond)
	assert.Empty(t, only(t, pk, MsgNack))
	pk, _ = advance(a, now+450*time.Millisecond)
	nacks := only(t, pk, MsgNack)
	require.Len(t, nacks, 1)
	assert.Equal(t, uint32(78), nacks[0].Nack.Seq)
}

// One hostile member can feed the group-wide estimator as many samples as
// it likes (ping-reqs naming itself as the target, acked at once or as late
// as the relay waits): the prior stays within [MinProbeTimeout,
// MaxProbeTimeout], and what decides a failure for a peer this member never
// measured (a relay's wait before its nack) stays ProbeTimeout whatever the
// prior.
func TestRTTPriorPoisonBounded(t *testing.T) {
	// Samples of 0, or alternating 0 and 499 ms (the relay waits 500 ms):
	// a mean of 250 ms, a deviation of 250 ms.
	for _, rtt := range []time.Duration{0, 499 * time.Millisecond} {
		a := newTest(t, "a", ModeDetector, nil, "b", "c", "h")
		now := time.Second
		for k := 0; k < 50; k++ {
			req := Packet{Kind: MsgPingReq, From: node("h"), To: node("a"), PingReq: PingReq{Seq: uint32(k), Target: node("h"), Nack: true}}
			require.NoError(t, a.Step(now, &req))
			pk, _ := drain(a)
			ping := only(t, pk, MsgPing)
			require.Len(t, ping, 1)
			ack := Packet{Kind: MsgAck, From: node("h"), To: node("a"), Ack: Ack{Seq: ping[0].Ping.Seq}}
			require.NoError(t, a.Step(now+rtt*time.Duration(k%2), &ack))
			drain(a)
			now += time.Second
		}
		prior, _ := a.ProbeTimeout("b")
		if rtt == 0 {
			assert.Equal(t, 100*time.Millisecond, prior, "floored at MinProbeTimeout")
		} else {
			assert.Equal(t, 500*time.Millisecond, prior, "capped at MaxProbeTimeout")
		}
		assert.Equal(t, 500*time.Millisecond, a.failTimeout(a.peers["b"]), "rtt %v: a relay waits ProbeTimeout for b", rtt)

		// A relay for b: its nack after ProbeTimeout, not the prior.
		req := Packet{Kind: MsgPingReq, From: node("c"), To: node("a"), PingReq: PingReq{Seq: 900, Target: node("b"), Nack: true}}
		require.NoError(t, a.Step(now, &req))
		drain(a)
		pk, _ := advance(a, now+500*time.Millisecond-time.Nanosecond)
		assert.Empty(t, only(t, pk, MsgNack), "rtt %v", rtt)
		pk, _ = advance(a, now+500*time.Millisecond)
		assert.Len(t, only(t, pk, MsgNack), 1, "rtt %v", rtt)
	}
}

// nackAll has every intermediate of reqs (a's ping-reqs) nack it at now.
func nackAll(t *testing.T, a *Member, reqs []Packet, now time.Duration) {
	t.Helper()
	for _, r := range reqs {
		n := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
		require.NoError(t, a.Step(now, &n))
	}
}

// A first probe whose every datagram path failed before its least direct
// wait (nacks at 300 ms, ProbeTimeout 500 ms for a peer never measured,
// the stream ping unanswered) waits; when the target is meanwhile heard
// suspected from another member, the wait ends without an early retry
// and the probe ends with its period, and no Tick leaves a deadline at or
// before its own instant (the member must not spin). With the stream
// ping refused (evidence of death), no retry follows: the probe suspects
// once every intermediate has nacked and the least direct wait has passed
// (before the change, the retry started at once at the refusal and sent
// the ping, the ping-reqs and the stream ping again).
func TestFirstProbeWaitEndsWhenTargetSuspected(t *testing.T) {
	a, now := nearGroupWith(t, func(c *Config) { c.StreamProbe = true })
	start := untilProbeOf(t, a, now, "f")
	a.Tick(start + 100*time.Millisecond)
	pk, _, sp := drainStreams(a)
	require.Len(t, sp, 1)
	nackAll(t, a, only(t, pk, MsgPingReq), start+300*time.Millisecond)
	pk, ev := drain(a)
	assert.Empty(t, only(t, pk, MsgPing), "before ProbeTimeout the retry does not start")
	assert.Empty(t, ev)
	at, _ := a.NextDeadline()
	require.Equal(t, start+500*time.Millisecond, at, "the least direct wait")
	sus := Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateSuspect, Node: node("f"), From: "b"}}}
	require.NoError(t, a.Step(start+400*time.Millisecond, &sus))
	drain(a)
	a.Tick(start + 500*time.Millisecond)
	drain(a)
	at, _ = a.NextDeadline()
	require.Greater(t, at, start+500*time.Millisecond, "a deadline at the Tick's own instant: the member would spin")
	assert.Equal(t, start+time.Second, at, "the probe ends with its period")
	assert.Zero(t, a.Stats().GateDeferrals)

	b, now := nearGroupWith(t, func(c *Config) { c.StreamProbe = true })
	start = untilProbeOf(t, b, now, "f")
	b.Tick(start + 100*time.Millisecond)
	pk, _, sp = drainStreams(b)
	require.Len(t, sp, 1)
	reqs := only(t, pk, MsgPingReq)
	require.Len(t, reqs, 3)
	b.StreamFailed(start+110*time.Millisecond, "f", sp[0].Seq)
	pk, ev = drain(b)
	assert.Empty(t, ev)
	assert.Empty(t, pk, "refused: no retry")
	nackAll(t, b, reqs, start+300*time.Millisecond)
	pk, ev = drain(b)
	assert.Empty(t, pk)
	assert.Empty(t, ev, "before the least direct wait")
	at, _ = b.NextDeadline()
	require.Equal(t, start+500*time.Millisecond, at, "the least direct wait")
	b.Tick(start + 500*time.Millisecond)
	pk, ev = drain(b)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, ID("f"), ev[0].Node.ID)
	assert.Empty(t, only(t, pk, MsgPingReq), "no retry")
	assert.Zero(t, b.Stats().GateDeferrals)
	assert.Equal(t, 1, b.Stats().Suspicions)
	assert.Zero(t, b.LocalHealthMultiplier(), "every intermediate nacked")
}
