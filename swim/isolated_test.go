package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tickJoins ticks m at every deadline up to until and returns the instants
// at which it sent a MsgJoin, and the pings it sent with their instants.
func tickJoins(m *Member, until time.Duration) (joins []time.Duration, pings []Packet) {
	tickUntil(m, until, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			switch p.Kind {
			case MsgJoin:
				joins = append(joins, at)
			case MsgPing:
				pings = append(pings, p)
			}
		}
	})
	return joins, pings
}

// An isolated member's view requests back off: one period after the
// first, then doubling up to ReconnectInterval (30 s by default), so 7 in
// the first 61 s instead of one every period; an acked probe starts them
// again from one period.
func TestIsolatedViewRequestsBackOff(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, nil, "b", "c")
	for _, id := range []string{"b", "c"} {
		a.apply(0, Update{Kind: UpdateDead, Node: node(id), Incarnation: 0, From: "a"}, false)
	}
	s := time.Second
	joins, _ := tickJoins(a, 61*s)
	assert.Equal(t, []time.Duration{0, 1 * s, 3 * s, 7 * s, 15 * s, 31 * s, 61 * s}, joins)
	assert.Equal(t, 7, a.Stats().ViewRequests)

	// b comes back (incarnation 1) and acks a's probe: a's paths work.
	a.apply(61*s+time.Millisecond, Update{Kind: UpdateAlive, Node: node("b"), Incarnation: 1, From: "b"}, false)
	_, pings := tickJoins(a, 62*s)
	var probe *Packet
	for i := range pings {
		if pings[i].To.ID == "b" {
			probe = &pings[i]
		}
	}
	require.NotNil(t, probe, "a probes b")
	require.NoError(t, a.Step(62*s+time.Millisecond, &Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: probe.Ping.Seq}}))
	a.apply(62*s+2*time.Millisecond, Update{Kind: UpdateDead, Node: node("b"), Incarnation: 1, From: "c"}, false)
	joins, _ = tickJoins(a, 70*s)
	assert.Equal(t, []time.Duration{63 * s, 64 * s, 66 * s, 70 * s}, joins, "from one period again")
}

// isolatedView runs a (plain SWIM, peers b and c) for 12 s with every
// packet to b lost, acking its probes of c when ackC, and returns a's
// answer to a join from d: its view.
func isolatedView(t *testing.T, ackC bool) []Packet {
	a := newTest(t, "a", ModeSWIM, nil, "b", "c")
	for at := time.Duration(0); at <= 12*time.Second; at += 10 * time.Millisecond {
		a.Tick(at)
		pk, _ := drain(a)
		for _, p := range pk {
			if p.Kind == MsgPing && p.To.ID == "c" && ackC {
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: node("c"), To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
			}
		}
	}
	require.Equal(t, StateDead, a.State("b"))
	d := node("d")
	require.NoError(t, a.Step(12*time.Second, &Packet{Kind: MsgJoin, From: d, To: node("a"),
		Updates: []Update{{Kind: UpdateAlive, Node: d, From: d.ID}}}))
	pk, _ := drain(a)
	return only(t, pk, MsgSync)
}

// A member that declared b dead with none of its probes acked since the
// suspicion started (every datagram of its own lost: b's death is as
// likely its own isolation) leaves that verdict out of the view it sends;
// the receiver would take it as a fresh accusation. With its probes of c
// acked meanwhile, the verdict rests on evidence and goes out.
func TestBlindVerdictLeftOutOfView(t *testing.T) {
	has := func(view []Packet, k UpdateKind, id string) bool {
		for _, p := range view {
			for _, u := range p.Updates {
				if u.Kind == k && u.Node.ID == ID(id) {
					return true
				}
			}
		}
		return false
	}
	blind := isolatedView(t, false)
	require.NotEmpty(t, blind)
	assert.False(t, has(blind, UpdateDead, "b"), "blind verdict sent")
	assert.False(t, has(blind, UpdateDead, "c"), "blind verdict sent")
	seen := isolatedView(t, true)
	assert.True(t, has(seen, UpdateDead, "b"), "verdict with evidence left out")
	assert.True(t, has(seen, UpdateAlive, "c"))
}
