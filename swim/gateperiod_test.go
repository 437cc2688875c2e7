package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gate's retry of a peer with no round trip of its own yet (a member
// that joined a moment ago) ends with the failed probe's period when it
// starts early enough for its own direct timeout, the group-wide one,
// to run out before then: it does not wait the peer's least direct wait
// (ProbeTimeout, 500 ms, without a sample) past the period's end, where
// ModeLifeguard and memberlist suspect. Here the intermediates nack the
// first probe 600 ms after its ping, as intermediates with no round trip
// of the target either do: the retry starts then and suspects at 1 s, not
// 1.1 s.
func TestGateRetryEndsWithPeriod(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.PeerDetector = FixedPeerDetector(5 * time.Second) }, "b", "c", "d")
	for _, id := range []string{"b", "c", "d"} {
		p := Packet{Kind: MsgAck, From: node(id), To: a.Self(), Ack: Ack{Seq: 999}}
		require.NoError(t, a.Step(0, &p))
	}
	drain(a)
	// Probe until c is the target, b and d acking at once (1 ms): the
	// group-wide round-trip estimate is then at its floor (100 ms).
	var s0 time.Duration = -1
	for now := time.Duration(0); s0 < 0 && now < time.Minute; {
		at, ok := a.NextDeadline()
		require.True(t, ok)
		now = at
		a.Tick(now)
		pk, _ := drain(a)
		for _, p := range pk {
			if p.Kind != MsgPing {
				continue
			}
			if p.To.ID == "c" {
				s0 = now
				break
			}
			ack := Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}
			require.NoError(t, a.Step(now+time.Millisecond, &ack))
			drain(a)
		}
	}
	require.GreaterOrEqual(t, s0, time.Duration(0), "c never probed")
	pt, _ := a.ProbeTimeout("c")
	require.Equal(t, 100*time.Millisecond, pt, "the group-wide estimate at its floor")

	// The first probe's ping-reqs at s0 + 100 ms, their nacks at s0 +
	// 600 ms; the retry's nacks 100 ms after its ping-reqs.
	var suspectAt time.Duration = -1
	nackAt := map[uint32]time.Duration{}
	for now := s0; suspectAt < 0 && now < s0+3*time.Second; {
		next, ok := a.NextDeadline()
		require.True(t, ok)
		for seq, at := range nackAt {
			if at <= next {
				next = at
				for _, id := range []string{"b", "d"} {
					n := Packet{Kind: MsgNack, From: node(id), To: a.Self(), Nack: Nack{Seq: seq}}
					require.NoError(t, a.Step(at, &n))
				}
				delete(nackAt, seq)
			}
		}
		now = next
		a.Tick(now)
		pk, ev := drain(a)
		for _, e := range ev {
			if e.Kind == EventSuspect && e.Node.ID == "c" && suspectAt < 0 {
				suspectAt = now
			}
		}
		for _, p := range pk {
			if p.Kind == MsgPingReq && p.PingReq.Target.ID == "c" {
				if _, ok := nackAt[p.PingReq.Seq]; !ok {
					wait := 100 * time.Millisecond
					if now-s0 < 200*time.Millisecond {
						wait = 500 * time.Millisecond
					}
					nackAt[p.PingReq.Seq] = now + wait
				}
			}
		}
	}
	require.GreaterOrEqual(t, suspectAt, time.Duration(0), "c never suspected")
	assert.Equal(t, 1, a.Stats().GateDeferrals)
	assert.Equal(t, s0+time.Second, suspectAt, "suspected at the end of the failed probe's period")
}
