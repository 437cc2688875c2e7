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
// declaration per protocol period, the period the counted one began, no
// later Alive, and none until a probe of the member's own has ended, in a
// success or a failure that raised the multiplier, since the last counted
// one (so charges never outnumber the decrements of its successful
// probes; issue 27, user46 H1). The first refutation counts before any
// probe. Hand-worked (ProbeInterval 1 s; a's probes of b start only where
// the table says, as from a late loop, and are acked 1 ms later):
//
//	at      event                incarnation after  LHM  uncharged  why
//	1 s     Suspect 0            1                  1    0          counted (none before); period 2 s, to 3 s
//	1.5 s   probe of b acked     1                  0    0          a success: −1, the next may count
//	2.5 s   Suspect 1            2                  0    1          within [1 s, 3 s)
//	3 s     Dead 2               3                  1    1          counted; period 2 s, to 5 s
//	5 s     Suspect 3            4                  1    2          no probe has ended since 3 s
//	5 s     Alive 5              6                  1    3          a later Alive
//	5.5 s   probe of b acked     6                  0    3
//	5.999 s Suspect 6            7                  1    3          counted; period 2 s, to 7.999 s
//	6.5 s   Dead 7               8                  1    4          within the period
//
// Before (the period alone), 5 s counted too: LHM 2, and with every probe
// acked a late loop let charges outnumber decrements (LHM 4-5 with a
// forged accusation every 5 ms and ticks every 90 ms). Every accusation
// is refuted: only its count against the local health is limited.
func TestRefutationChargedOncePerPeriod(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	steps := []struct {
		at        time.Duration
		kind      UpdateKind // 0: a's own probe of b, acked
		accused   Incarnation
		inc       Incarnation
		lhm       int
		uncharged int
	}{
		{time.Second, UpdateSuspect, 0, 1, 1, 0},
		{1500 * time.Millisecond, 0, 0, 1, 0, 0},
		{2500 * time.Millisecond, UpdateSuspect, 1, 2, 0, 1},
		{3 * time.Second, UpdateDead, 2, 3, 1, 1},
		{5 * time.Second, UpdateSuspect, 3, 4, 1, 2},
		{5 * time.Second, UpdateAlive, 5, 6, 1, 3},
		{5500 * time.Millisecond, 0, 0, 6, 0, 3},
		{5999 * time.Millisecond, UpdateSuspect, 6, 7, 1, 3},
		{6500 * time.Millisecond, UpdateDead, 7, 8, 1, 4},
	}
	refutations := 0
	for i, s := range steps {
		if s.kind == 0 {
			ackOwnProbe(t, a, s.at)
		} else {
			from := ID("b")
			if s.kind == UpdateAlive {
				from = "a"
			}
			p := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: uint32(i + 1)},
				Updates: []Update{{Kind: s.kind, Node: node("a"), Incarnation: s.accused, From: from}}}
			require.NoError(t, a.Step(s.at, &p))
			drain(a)
			refutations++
		}
		assert.Equal(t, s.inc, a.Incarnation(), "at %v", s.at)
		assert.Equal(t, s.lhm, a.LocalHealthMultiplier(), "at %v", s.at)
		assert.Equal(t, refutations, a.Stats().Refutations, "at %v", s.at)
		assert.Equal(t, s.uncharged, a.Stats().RefutationsUncharged, "at %v", s.at)
	}
	// Plain SWIM has no local health: nothing is charged or uncharged.
	p := newTest(t, "a", ModeSWIM, nil, "b")
	for i, s := range steps {
		if s.kind == 0 {
			continue
		}
		q := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: uint32(i + 1)},
			Updates: []Update{{Kind: s.kind, Node: node("a"), Incarnation: s.accused, From: "b"}}}
		require.NoError(t, p.Step(s.at, &q))
	}
	assert.Equal(t, refutations, p.Stats().Refutations)
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
