package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lifeguard raises the local health multiplier when a member must refute
// a suspicion about itself (§IV-A), and memberlist when it refutes a
// declaration too; fdkit counts at most one refuted suspicion or
// declaration per protocol period, the period the counted one began, and
// no later Alive. Hand-worked (ProbeInterval 1 s, no probe running, so
// nothing lowers the multiplier):
//
//	at      accusation     incarnation after  LHM  uncharged  why
//	1 s     Suspect 0      1                  1    0          counted; period 2 s, to 3 s
//	2.5 s   Suspect 1      2                  1    1          within [1 s, 3 s)
//	2.9 s   Dead 2         3                  1    2          within [1 s, 3 s)
//	3 s     Dead 3         4                  2    2          counted; period 3 s, to 6 s
//	5.999 s Suspect 4      5                  2    3          within [3 s, 6 s)
//	6 s     Alive 6        7                  2    4          a later Alive
//	6 s     Suspect 7      8                  3    4          counted
//
// Every accusation is refuted: only its count against the local health is
// limited.
func TestRefutationChargedOncePerPeriod(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	steps := []struct {
		at        time.Duration
		kind      UpdateKind
		accused   Incarnation
		inc       Incarnation
		lhm       int
		uncharged int
	}{
		{time.Second, UpdateSuspect, 0, 1, 1, 0},
		{2500 * time.Millisecond, UpdateSuspect, 1, 2, 1, 1},
		{2900 * time.Millisecond, UpdateDead, 2, 3, 1, 2},
		{3 * time.Second, UpdateDead, 3, 4, 2, 2},
		{5999 * time.Millisecond, UpdateSuspect, 4, 5, 2, 3},
		{6 * time.Second, UpdateAlive, 6, 7, 2, 4},
		{6 * time.Second, UpdateSuspect, 7, 8, 3, 4},
	}
	for i, s := range steps {
		from := ID("b")
		if s.kind == UpdateAlive {
			from = "a"
		}
		p := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: uint32(i + 1)},
			Updates: []Update{{Kind: s.kind, Node: node("a"), Incarnation: s.accused, From: from}}}
		require.NoError(t, a.Step(s.at, &p))
		drain(a)
		assert.Equal(t, s.inc, a.Incarnation(), "at %v", s.at)
		assert.Equal(t, s.lhm, a.LocalHealthMultiplier(), "at %v", s.at)
		assert.Equal(t, i+1, a.Stats().Refutations, "at %v", s.at)
		assert.Equal(t, s.uncharged, a.Stats().RefutationsUncharged, "at %v", s.at)
	}
	// Plain SWIM has no local health: nothing is charged or uncharged.
	p := newTest(t, "a", ModeSWIM, nil, "b")
	for i, s := range steps {
		q := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: uint32(i + 1)},
			Updates: []Update{{Kind: s.kind, Node: node("a"), Incarnation: s.accused, From: "b"}}}
		require.NoError(t, p.Step(s.at, &q))
	}
	assert.Equal(t, len(steps), p.Stats().Refutations)
	assert.Zero(t, p.Stats().RefutationsUncharged)
	assert.Zero(t, p.LocalHealthMultiplier())
}

// A flood of forged accusations (issue 27, F3): a member whose probes all
// succeed receives, every 10 ms for 30 s, a view from a member (as a
// hostile seed writes on a join's answer stream) that declares it dead,
// or suspects it, in its current incarnation. It must refute each one;
// its local health multiplier must stay at most 1 (one refutation counted
// per period, one successful probe lowering it per period). Before, each
// refutation counted and the multiplier sat at its maximum, 7 (periods of
// 8 s), from the flood's seventh packet on: 5 probes in the 30 s.
func TestForgedAccusationFloodDoesNotHoldLocalHealth(t *testing.T) {
	for _, c := range []struct {
		kind UpdateKind
		max  int
	}{{UpdateDead, 1}, {UpdateSuspect, 1}} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		const step, until = 10 * time.Millisecond, 30 * time.Second
		forged, maxLHM := 0, 0
		var lhmAt time.Duration
		for now := time.Duration(0); now <= until; now += step {
			a.Tick(now)
			pk, _ := drain(a)
			for _, p := range pk {
				if p.Kind != MsgPing {
					continue
				}
				ack := Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}
				require.NoError(t, a.Step(now+time.Millisecond, &ack))
			}
			v := Packet{Kind: MsgSync, From: node("b"), To: a.Self(), Updates: []Update{
				{Kind: UpdateAlive, Node: node("b"), From: "b"},
				{Kind: c.kind, Node: a.Self(), Incarnation: a.Incarnation(), From: "b"}}}
			require.NoError(t, a.Step(now+2*time.Millisecond, &v))
			drain(a)
			forged++
			if h := a.LocalHealthMultiplier(); h > maxLHM {
				maxLHM, lhmAt = h, now
			}
		}
		st := a.Stats()
		t.Logf("%v: %d forged, %d refutations (%d uncharged), %d probes started, %d failed; highest LHM %d at %v",
			c.kind, forged, st.Refutations, st.RefutationsUncharged, st.ProbesStarted, st.ProbesFailed, maxLHM, lhmAt)
		require.Equal(t, forged, st.Refutations, "%v: every accusation in the current incarnation is refuted", c.kind)
		assert.Zero(t, st.ProbesFailed, c.kind)
		assert.LessOrEqual(t, maxLHM, c.max, "%v: the local health multiplier held up by forged accusations", c.kind)
		// One counted per period at most: the periods are at least 1 s long.
		charged := st.Refutations - st.RefutationsUncharged
		assert.LessOrEqual(t, charged, int(until/time.Second)+1, c.kind)
	}
}
