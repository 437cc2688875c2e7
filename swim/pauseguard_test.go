package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ackRun ticks m every step from `from` to `until`, answers every ping
// except those to the members in silent with an ack, and returns the
// events.
func ackRun(t *testing.T, m *Member, from, until, step time.Duration, silent ...ID) []Event {
	t.Helper()
	var evs []Event
	for now := from; now <= until; now += step {
		m.Tick(now)
		pk, ev := drain(m)
		evs = append(evs, ev...)
		for _, p := range pk {
			if p.Kind != MsgPing || contains(silent, p.To.ID) {
				continue
			}
			ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
			require.NoError(t, m.Step(now+time.Millisecond, &ack))
			_, ev := drain(m)
			evs = append(evs, ev...)
		}
	}
	return evs
}

func contains(ids []ID, id ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// A member ticked every 50 ms is not paused, however late the confirmations
// of a suspicion arrive: Lifeguard's timeout is recomputed from the
// suspicion's start, so confirmations heard 10 s into a 24 s timeout put its
// deadline (start + Min) 7 s in the past. That is a suspicion due now, not
// a Tick that came late: the member declares the suspect, and neither
// raises its incarnation and local health multiplier nor holds its
// declarations for a grace period.
func TestPauseGuardIgnoresDeadlineShortenedIntoPast(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c", "d", "e", "f", "g", "h")
	step := 50 * time.Millisecond
	ackRun(t, a, 0, time.Second, step, "d")
	require.NoError(t, a.Step(time.Second+step/2, gossipFrom("c", Update{Kind: UpdateSuspect, Node: node("d"), From: "c"})))
	drain(a)
	s := a.peers["d"].susp
	require.NotNil(t, s)
	require.Equal(t, 2, s.k)
	require.Equal(t, 4*time.Second, s.min)
	require.Equal(t, 24*time.Second, s.max)
	inc, lhm := a.Incarnation(), a.LocalHealthMultiplier()

	ackRun(t, a, time.Second+step, 12*time.Second, step, "d")
	require.Equal(t, StateSuspect, a.State("d"), "Max not reached: not declared")
	at := 12*time.Second + step/2
	for _, c := range []string{"e", "f"} {
		require.NoError(t, a.Step(at, gossipFrom(c, Update{Kind: UpdateSuspect, Node: node("d"), From: ID(c)})))
	}
	drain(a)
	assert.Less(t, a.peers["d"].susp.deadline, at-a.cfg.PauseGuard, "the deadline is past by more than PauseGuard")
	ev := ackRun(t, a, 12*time.Second+step, 12*time.Second+2*step, step, "d")

	assert.Zero(t, a.Stats().LocalPauses, "not paused: ticked every 50 ms")
	assert.Equal(t, inc, a.Incarnation(), "no incarnation spent")
	assert.Equal(t, lhm, a.LocalHealthMultiplier(), "no local health penalty")
	assert.Equal(t, StateDead, a.State("d"), "declared on the first Tick after the confirmations")
	var dead bool
	for _, e := range ev {
		dead = dead || (e.Kind == EventDead && e.Node.ID == "d")
	}
	assert.True(t, dead)
}
