package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedProbe returns a ModeDetector member a of {a, b, c, d} whose
// detectors (a 5 s fixed timeout) trust every peer, having heard each at 0,
// with its first probe's direct ping unanswered at 500 ms: the probe's
// target and the two ping-reqs sent then.
func gatedProbe(t *testing.T) (*Member, ID, []Packet) {
	t.Helper()
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.PeerDetector = FixedPeerDetector(5 * time.Second) }, "b", "c", "d")
	for _, from := range []string{"b", "c", "d"} {
		p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
		require.NoError(t, a.Step(0, &p))
	}
	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To.ID
	a.Tick(500 * time.Millisecond)
	pk, _ = drain(a)
	reqs := only(t, pk, MsgPingReq)
	require.Len(t, reqs, 2)
	return a, target, reqs
}

// The detector gate re-checks a first failure even when every intermediate
// asked nacked: without evidence of death (no stream ping) the retry
// starts as soon as every intermediate has nacked, within the first
// probe's period, over both paths, and suspects at the end of that period
// or, later, once the retry's own direct wait (500 ms) has passed.
func TestGateRetriesCorroboratedFailure(t *testing.T) {
	a, _, reqs := gatedProbe(t)
	nackAll(t, a, reqs, 300*time.Millisecond)
	pk, ev := drain(a)
	assert.Empty(t, pk, "before the direct timeout nothing is decided")
	assert.Empty(t, ev)
	a.Tick(500 * time.Millisecond)
	drain(a)

	a, target, reqs := gatedProbe(t)
	nackAll(t, a, reqs, 550*time.Millisecond)
	pk, ev = drain(a)
	assert.Empty(t, ev, "a failure every intermediate saw too is still re-checked once")
	assert.Equal(t, 1, a.Stats().GateDeferrals)
	require.Len(t, only(t, pk, MsgPing), 1, "the retry starts at once, not at the end of the period")
	assert.Equal(t, target, only(t, pk, MsgPing)[0].To.ID, "the retry probes the same peer")
	retry := only(t, pk, MsgPingReq)
	require.Len(t, retry, 2, "the retry sends its ping-reqs with the ping")

	nackAll(t, a, retry, 700*time.Millisecond)
	_, ev = drain(a)
	assert.Empty(t, ev, "no evidence of death: the verdict waits")
	at, _ := a.NextDeadline()
	require.Equal(t, 1050*time.Millisecond, at, "the retry's own direct wait, past the first period's end")
	a.Tick(at)
	_, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Equal(t, 1050*time.Millisecond, ev[0].At, "1.5 s when the retry took a period of its own")
	assert.Equal(t, 0, a.LocalHealthMultiplier(), "every nack of both probes arrived")
}

// When the first probe's stream ping failed (refused or reset: evidence of
// death), past the direct timeout, the first probe ends at once, without
// waiting for its intermediates' nacks, and the gate's retry starts then,
// a new period; the retry suspects once its own paths have failed the
// same way and its direct timeout has passed. With the nacks in before
// the refusal, the retry starts within the first period without evidence,
// and its own refused stream ping then lets it suspect without waiting
// for that period's end.
func TestGateRetryStartsWhenStreamRefused(t *testing.T) {
	a := streamGateMember(t)
	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To
	a.Tick(500 * time.Millisecond)
	pk, _, sp := drainStreams(a)
	reqs := only(t, pk, MsgPingReq)
	require.Len(t, reqs, 2)
	require.Len(t, sp, 1)
	a.StreamFailed(550*time.Millisecond, target.ID, sp[0].Seq)
	pk, ev, sp := drainStreams(a)
	assert.Empty(t, ev)
	assert.Equal(t, 1, a.Stats().GateDeferrals)
	ping := only(t, pk, MsgPing)
	require.Len(t, ping, 1)
	assert.Equal(t, target.ID, ping[0].To.ID, "the retry starts at once, the intermediates' nacks not waited for")
	retry := only(t, pk, MsgPingReq)
	require.Len(t, retry, 2)
	require.Len(t, sp, 1, "with its own stream ping")
	at, _ := a.NextDeadline()
	assert.Equal(t, 1550*time.Millisecond, at, "the retry is a new period")
	nackAll(t, a, reqs, 600*time.Millisecond) // the first probe's, late: ignored
	assert.Zero(t, a.LocalHealthMultiplier(), "nacks not waited for are not missed")

	nackAll(t, a, retry, 900*time.Millisecond)
	a.StreamFailed(910*time.Millisecond, target.ID, sp[0].Seq)
	_, ev = drain(a)
	assert.Empty(t, ev, "the retry's direct timeout has not passed")
	at, _ = a.NextDeadline()
	require.Equal(t, 1050*time.Millisecond, at, "the retry's direct timeout")
	a.Tick(at)
	_, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, 1050*time.Millisecond, ev[0].At, "0.6 s earlier than with the retry at the end of the first period")

	// The nacks first: the retry within the period, its own refusal the evidence.
	b := streamGateMember(t)
	b.Tick(0)
	pk, _ = drain(b)
	target = pk[0].To
	b.Tick(500 * time.Millisecond)
	pk, _, _ = drainStreams(b)
	nackAll(t, b, only(t, pk, MsgPingReq), 520*time.Millisecond)
	pk, _, sp = drainStreams(b)
	require.Len(t, only(t, pk, MsgPing), 1, "no evidence yet: the retry within the period")
	require.Len(t, sp, 1)
	at, _ = b.NextDeadline()
	assert.Equal(t, time.Second+20*time.Millisecond, at, "the retry's direct wait, past the period's end")
	nackAll(t, b, only(t, pk, MsgPingReq), 600*time.Millisecond)
	b.StreamFailed(610*time.Millisecond, target.ID, sp[0].Seq)
	_, ev = drain(b)
	assert.Empty(t, ev)
	at, _ = b.NextDeadline()
	assert.Equal(t, time.Second+20*time.Millisecond, at)
}

// Without a detector gate (ModeLifeguard), a probe whose every path failed
// still ends with its period: the suspicion comes at 1 s, not when the
// last nack arrives.
func TestLifeguardFailureWaitsForPeriod(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To.ID
	a.Tick(500 * time.Millisecond)
	pk, _ = drain(a)
	nackAll(t, a, only(t, pk, MsgPingReq), 700*time.Millisecond)
	pk, ev := drain(a)
	assert.Empty(t, pk)
	assert.Empty(t, ev)
	a.Tick(time.Second)
	_, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Equal(t, time.Second, ev[0].At)
}

// A detector still warming up has no say in the gate, even while its level
// is above its threshold: the default per-peer φ on its bootstrap (μ = 1 s,
// σ = 250 ms, pause 3 s) suspects a peer last heard 6 s ago, yet that
// peer's failed probe is retried; and PeerStatus reports it WarmingUp and
// not Suspected.
func TestGateIgnoresWarmingUpDetector(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c", "d")
	for _, from := range []string{"b", "c", "d"} {
		p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
		require.NoError(t, a.Step(0, &p))
	}
	now := 6 * time.Second
	a.Tick(now)
	pk, _ := drain(a)
	target := pk[0].To.ID
	st, ok := a.Member(target, now)
	require.True(t, ok)
	assert.True(t, st.WarmingUp)
	assert.False(t, st.Suspected, "a warming-up detector's opinion is not reported")
	assert.Greater(t, st.Level, 8.0, "the bootstrap's φ is past Θ = 8")

	a.Tick(now + time.Second)
	_, ev := drain(a)
	assert.Empty(t, ev, "the failure is re-checked, not suspected")
	assert.Equal(t, 1, a.Stats().GateDeferrals)
}

// Once warm, a detector that suspects the peer lets the first failure
// suspect at the end of its period, without a retry.
func TestGateWarmDetectorSuspects(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c", "d")
	// DefaultPeerMinSamples+1 heartbeats 1 s apart from each peer: warm,
	// μ = 1 s, σ at its floor (100 ms): τ = 8 s + 1 + 3 + 0.5612 s.
	for k := 0; k <= DefaultPeerMinSamples; k++ {
		for _, from := range []string{"b", "c", "d"} {
			p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
			require.NoError(t, a.Step(time.Duration(k)*time.Second, &p))
		}
	}
	now := 13 * time.Second
	a.Tick(now)
	pk, _ := drain(a)
	target := pk[0].To.ID
	st, _ := a.Member(target, now)
	assert.False(t, st.WarmingUp)
	assert.True(t, st.Suspected)

	a.Tick(now + time.Second)
	_, ev := drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Zero(t, a.Stats().GateDeferrals)
}

// In ModeDetector a peer with no RTT sample of its own gets the group-wide
// estimator's timeout (every direct ack of every peer), clamped to
// [MinProbeTimeout, MaxProbeTimeout], rather than ProbeTimeout; ModeLifeguard
// keeps ProbeTimeout.
func TestGroupRTTPrior(t *testing.T) {
	for _, mode := range []Mode{ModeDetector, ModeLifeguard} {
		a := newTest(t, "a", mode, nil, "b", "c", "d")
		a.Tick(0)
		pk, _ := drain(a)
		target := pk[0].To
		var other ID
		for _, id := range []ID{"b", "c", "d"} {
			if id != target.ID {
				other = id
				break
			}
		}
		before, _ := a.ProbeTimeout(other)
		assert.Equal(t, 500*time.Millisecond, before, "%v: no sample at all", mode)
		ack := Packet{Kind: MsgAck, From: target, To: node("a"), Ack: Ack{Seq: pk[0].Ping.Seq}}
		require.NoError(t, a.Step(2*time.Millisecond, &ack))
		own, _ := a.ProbeTimeout(target.ID)
		after, _ := a.ProbeTimeout(other)
		if mode == ModeDetector {
			// One 2 ms sample: SRTT 2 ms, RTTVAR 1 ms, 6 ms, clamped to 100 ms.
			assert.Equal(t, 100*time.Millisecond, own)
			assert.Equal(t, 100*time.Millisecond, after, "the group's prior")
		} else {
			assert.Equal(t, 500*time.Millisecond, own)
			assert.Equal(t, 500*time.Millisecond, after)
		}
	}
}

// A first probe whose every datagram path failed before its least direct
// wait (nacks at 300 ms, ProbeTimeout 500 ms for a peer never measured,
// the stream ping unanswered) waits; when the target is meanwhile heard
// suspected from another member, the wait ends without an early retry
// and the probe ends with its period, and no Tick leaves a deadline at or
// before its own instant (the member must not spin). With the stream
// ping refused (evidence of death), the retry starts at once instead,
// before the least direct wait: the retry's own verdict waits for it.
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
	_, _, sp = drainStreams(b)
	require.Len(t, sp, 1)
	b.StreamFailed(start+110*time.Millisecond, "f", sp[0].Seq)
	pk, ev = drain(b)
	assert.Empty(t, ev)
	ping := only(t, pk, MsgPing)
	require.Len(t, ping, 1, "refused: the retry at once")
	assert.Equal(t, ID("f"), ping[0].To.ID)
	assert.Equal(t, 1, b.Stats().GateDeferrals)
}

// A member that refuses stream pings while it lives (started without a
// stream listener, or behind a firewall that rejects them) loses no grace
// to it: once it has been heard from after a refused stream ping, its
// refusals no longer end a first probe early, and a probe whose every
// intermediate nacked waits for its period as without the stream path.
// A stream ack from it makes its refusals count again.
func TestGateRefusalFromMemberWithoutStreams(t *testing.T) {
	a := streamGateMember(t)

	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To
	failFirstProbe(t, a, 0, target)
	pk, ev := drain(a)
	assert.Empty(t, ev)
	retry := only(t, pk, MsgPing)
	require.Len(t, retry, 1, "nothing known against the refusal: the retry starts at once")
	// The target answers the retry: it lives, and refused the stream.
	ack := Packet{Kind: MsgAck, From: target, To: node("a"), Ack: Ack{Seq: retry[0].Ping.Seq}}
	require.NoError(t, a.Step(700*time.Millisecond, &ack))
	drain(a)

	// The next probe of target: run periods (from the retry's, at 650 ms)
	// until a probes it again, every other peer answering.
	now := 1650 * time.Millisecond
	for ; ; now += time.Second {
		a.Tick(now)
		pk, _ := drain(a)
		ping := only(t, pk, MsgPing)
		require.Len(t, ping, 1)
		if ping[0].To.ID == target.ID {
			break
		}
		ack := Packet{Kind: MsgAck, From: ping[0].To, To: node("a"), Ack: Ack{Seq: ping[0].Ping.Seq}}
		require.NoError(t, a.Step(now+2*time.Millisecond, &ack))
		drain(a)
	}
	reqs := failFirstProbe(t, a, now, target)
	pk, ev = drain(a)
	assert.Empty(t, ev)
	assert.Empty(t, only(t, pk, MsgPing), "a refusal from a member known to live without streams is no evidence: the nacks are waited for")
	nackAll(t, a, reqs, now+660*time.Millisecond)
	pk, ev = drain(a)
	assert.Empty(t, ev, "the gate defers the failure")
	ping := only(t, pk, MsgPing)
	require.Len(t, ping, 1)
	assert.Equal(t, target.ID, ping[0].To.ID, "the retry, within the period")
	at, _ := a.NextDeadline()
	assert.Equal(t, now+time.Second, at,
		"a refusal from a member known to live without streams is no evidence: no verdict before the period's end")
	a.Tick(at)
	_, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
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

// nackAll has every intermediate of reqs (a's ping-reqs) nack it at now.
func nackAll(t *testing.T, a *Member, reqs []Packet, now time.Duration) {
	t.Helper()
	for _, r := range reqs {
		n := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
		require.NoError(t, a.Step(now, &n))
	}
}
