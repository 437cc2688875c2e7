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

// The detector gate forgives a failed probe only when the failure may be a
// loss on this member's own path: when every intermediate asked nacked
// (they too failed to reach the target), the probe suspects at the end of
// its period as in ModeLifeguard, without a retry.
func TestGateSkippedWhenCorroborated(t *testing.T) {
	a, target, reqs := gatedProbe(t)
	for _, r := range reqs {
		n := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
		require.NoError(t, a.Step(700*time.Millisecond, &n))
	}
	_, ev := drain(a)
	assert.Empty(t, ev, "the first probe waits for the end of its period")

	a.Tick(time.Second)
	_, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Equal(t, time.Second, ev[0].At)
	assert.Zero(t, a.Stats().GateDeferrals)
	assert.Equal(t, 0, a.HealthScore(), "every nack arrived")
}
