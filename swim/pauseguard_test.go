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

// The local-pause guard (ModeDetector): a Tick far later than announced is
// taken for a pause of this member: preemptive refutation, the probe that
// ran out during the pause is dropped without suspicion, and no suspicion
// timer fires for one period.
func TestPauseGuard(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c", "d")
	a.apply(0, Update{Kind: UpdateSuspect, Node: node("d"), From: "c"}, false) // deadline 0 + 24 s
	a.Tick(0)
	drain(a)
	a.Tick(25 * time.Second) // announced deadline was 500 ms
	pk, ev := drain(a)
	assert.Equal(t, 1, a.Stats().LocalPauses)
	assert.Empty(t, ev, "no suspicion from the stale probe, no declaration during the grace period")
	assert.Equal(t, Incarnation(1), a.Incarnation())
	require.NotEmpty(t, pk)
	assert.True(t, hasUpdate(pk[0], UpdateAlive, "a", 1), "preemptive refutation piggybacked")
	assert.Equal(t, 1, a.LocalHealthMultiplier())
	assert.Equal(t, StateSuspect, a.State("d"))
	_, ev = advance(a, 26*time.Second)
	require.Len(t, ev, 1, "the grace period is over")
	assert.Equal(t, EventDead, ev[0].Kind)
	assert.Equal(t, ID("d"), ev[0].Node.ID)

	// Punctual ticks never trigger it; ModeLifeguard has no guard.
	b := newTest(t, "b", ModeDetector, nil, "a", "c")
	advance(b, time.Minute)
	assert.Zero(t, b.Stats().LocalPauses)
	l := newTest(t, "a", ModeLifeguard, nil, "b")
	l.Tick(0)
	l.Tick(10 * time.Second)
	_, ev = drain(l)
	assert.Len(t, ev, 1, "Lifeguard mode suspects on the stale probe")
	assert.Zero(t, l.Stats().LocalPauses)
}

// The local-pause guard sees a pause that overran a suspicion timer, not
// only the probe timer: with the local health multiplier at 5, the period
// is 6 s, and a pause of 4.8 s that began just after a probe started ends
// before the next probe is due, yet after a suspicion's deadline. The
// member must not declare the suspect dead on the late Tick before reading
// the refutation that waited in its socket during the pause: it takes the
// Tick for a pause, and no suspicion timer fires for a period. (bench/
// memberlist's pauses below the suspicion timeout, N = 32, 4 members paused
// 4.8 s every 9.6 s: one paused member declared another, which had
// resumed and refuted meanwhile, 10 ms after its own pause ended.)
func TestPauseGuardSeesOverdueSuspicion(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	for range 5 {
		a.adjustHealth(1)
	}
	require.Equal(t, 5, a.LocalHealthMultiplier())
	// A probe started at 1 s and was answered; with LHM 5 the next one is
	// due a period of 6 s later.
	start := 1010 * time.Millisecond
	a.pr.active = false
	a.probing.next = time.Second + a.period()
	require.Equal(t, 7*time.Second, a.probing.next)
	// d is suspected, its deadline 200 ms ahead (confirmed: the timeout
	// is Min, and the suspicion started earlier).
	a.apply(start, Update{Kind: UpdateSuspect, Node: node("d"), From: "c"}, false)
	drain(a)
	a.peers["d"].susp.deadline = start + 200*time.Millisecond
	next, _ := a.NextDeadline()
	require.Equal(t, start+200*time.Millisecond, next)
	// This member pauses from start for 4.8 s: its next probe, due at 7 s,
	// is not overdue when it resumes.
	late := start + 4800*time.Millisecond
	a.Tick(late)
	_, ev := drain(a)
	assert.Equal(t, 1, a.Stats().LocalPauses, "a suspicion timer 4.6 s overdue is a pause")
	assert.Empty(t, ev, "no declaration before the backlog is read")
	// The refutation from d, held in the socket during the pause.
	ref := Packet{Kind: MsgGossip, From: node("d"), To: node("a"), Updates: []Update{{Kind: UpdateAlive, Node: node("d"), Incarnation: 1}}}
	require.NoError(t, a.Step(late+time.Millisecond, &ref))
	_, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventAlive, ev[0].Kind)
	assert.Equal(t, StateAlive, a.State("d"))
}
