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
// asked nacked: no suspicion at the end of the first period, a retry at
// once over both paths, and the suspicion as soon as every intermediate of
// the retry has nacked and the retry's direct timeout has passed.
func TestGateRetriesCorroboratedFailure(t *testing.T) {
	a, target, reqs := gatedProbe(t)
	for _, r := range reqs {
		n := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
		require.NoError(t, a.Step(700*time.Millisecond, &n))
	}
	_, ev := drain(a)
	assert.Empty(t, ev, "the first probe waits for the end of its period")

	a.Tick(time.Second)
	pk, ev := drain(a)
	assert.Empty(t, ev, "a failure every intermediate saw too is still re-checked once")
	assert.Equal(t, 1, a.Stats().GateDeferrals)
	require.Len(t, only(t, pk, MsgPing), 1)
	assert.Equal(t, target, only(t, pk, MsgPing)[0].To.ID, "the retry probes the same peer")
	retry := only(t, pk, MsgPingReq)
	require.Len(t, retry, 2, "the retry sends its ping-reqs with the ping")

	for _, r := range retry {
		n := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
		require.NoError(t, a.Step(1200*time.Millisecond, &n))
	}
	_, ev = drain(a)
	assert.Empty(t, ev, "the retry's own direct timeout (500 ms) has not passed")
	at, _ := a.NextDeadline()
	require.Equal(t, 1500*time.Millisecond, at)
	a.Tick(at)
	_, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Equal(t, 1500*time.Millisecond, ev[0].At)
	assert.Equal(t, 0, a.HealthScore(), "every nack of both probes arrived")
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
