package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A refuted accusation is counted against the local health only when the
// packet that carried it came from a member held alive or suspect at the
// address it claims (issue 27, user43 F2: a forger's datagrams held the
// multiplier between 0 and 1). Every accusation is refuted all the same.
// Hand-worked (ProbeInterval 1 s, no probe running, so nothing lowers the
// multiplier; d held dead):
//
//	at    packet's sender                   accusation        incarnation after  LHM  uncharged
//	1 s   mallory, no member                Suspect 0 by m.   1                  0    1
//	1 s   b's name, from another source     Suspect 1 by b    2                  0    2
//	1 s   d, held dead                      Dead 2 by d       3                  0    3
//	1 s   b (a ping: the buddy system)      Suspect 3 by b    4                  1    3   period 2 s, to 3 s
//	2 s   (a's own probe, acked at 2.001 s)                   4                  0    3   lets the next count
//	3 s   c, relaying b's gossip            Dead 4 by b       5                  1    3   period 2 s
//
// Before, the first three counted: LHM 1 at the first packet. The probe
// at 2 s is needed since a refutation counts only after a probe of a's
// own has ended since the last counted one (chargeRefutation).
func TestRefutationChargedOnlyFromLiveSender(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.apply(0, Update{Kind: UpdateDead, Node: node("d"), Incarnation: 0, From: "a"}, false)
	require.Equal(t, StateDead, a.State("d"))
	steps := []struct {
		at      time.Duration
		from    string
		other   bool // StepFromOtherSource
		kind    UpdateKind
		accuser ID
		inc     Incarnation
		lhm     int
		unch    int
	}{
		{time.Second, "mallory", false, UpdateSuspect, "mallory", 1, 0, 1},
		{time.Second, "b", true, UpdateSuspect, "b", 2, 0, 2},
		{time.Second, "d", false, UpdateDead, "d", 3, 0, 3},
		{time.Second, "b", false, UpdateSuspect, "b", 4, 1, 3},
		{3 * time.Second, "c", false, UpdateDead, "b", 5, 1, 3},
	}
	for i, s := range steps {
		if s.at == 3*time.Second {
			ackOwnProbe(t, a, 2*time.Second)
			require.Equal(t, 0, a.LocalHealthMultiplier())
		}
		p := Packet{Kind: MsgPing, From: node(s.from), To: node("a"), Ping: Ping{Seq: uint32(i + 1)},
			Updates: []Update{{Kind: s.kind, Node: node("a"), Incarnation: a.Incarnation(), From: s.accuser}}}
		step := a.Step
		if s.other {
			step = a.StepFromOtherSource
		}
		require.NoError(t, step(s.at, &p))
		drain(a)
		assert.Equal(t, s.inc, a.Incarnation(), "step %d: refuted", i)
		assert.Equal(t, i+1, a.Stats().Refutations, "step %d", i)
		assert.Equal(t, s.lhm, a.LocalHealthMultiplier(), "step %d", i)
		assert.Equal(t, s.unch, a.Stats().RefutationsUncharged, "step %d", i)
	}
}

// A restarted member whose previous life the join seed's view declares
// dead pays one raise of the local health (the seed, not yet held when its
// view comes, is the member the join dialled: seedView); the same view
// without the join's token, from a sender not held, is refuted uncharged.
func TestRefutationChargedFromSeedView(t *testing.T) {
	for _, c := range []struct {
		token bool
		lhm   int
		unch  int
	}{{true, 1, 0}, {false, 0, 1}} {
		a := newTest(t, "a", ModeLifeguard, nil)
		require.NoError(t, a.Join(0, []string{node("s").Addr}))
		out, _ := drain(a)
		joins := only(t, out, MsgJoin)
		require.Len(t, joins, 1)
		v := Packet{Kind: MsgSync, From: node("s"), To: a.Self(), Updates: []Update{
			{Kind: UpdateAlive, Node: node("s"), From: "s"},
			{Kind: UpdateDead, Node: a.Self(), Incarnation: 0, From: "r"}}}
		if c.token {
			v.JoinToken = joins[0].JoinToken
		}
		require.NoError(t, a.Step(time.Millisecond, &v))
		assert.Equal(t, Incarnation(1), a.Incarnation(), "token %v: refuted", c.token)
		assert.Equal(t, c.lhm, a.LocalHealthMultiplier(), "token %v", c.token)
		assert.Equal(t, c.unch, a.Stats().RefutationsUncharged, "token %v", c.token)
	}
}

// user43 F2 (issue 27): a forger's datagrams every 10 ms for 30 s, each
// carrying a Suspect or Dead of a member in its current incarnation, from
// a stranger under each kind of packet, or under a real member's name sent
// from another source, while the member's own probes all succeed. Every
// accusation is refuted, none is counted: the local health multiplier
// stays 0 (it was held between 0 and 1, slowing the group's detection of
// a real crash up to 2.5×).
func TestForgedDatagramAccusationsUncharged(t *testing.T) {
	for _, c := range []struct {
		name  string
		kind  MessageKind
		acc   UpdateKind
		from  string
		other bool
	}{
		{"suspect on ping", MsgPing, UpdateSuspect, "mallory", false},
		{"suspect on ping-req", MsgPingReq, UpdateSuspect, "mallory", false},
		{"suspect on ack", MsgAck, UpdateSuspect, "mallory", false},
		{"dead on sync", MsgSync, UpdateDead, "mallory", false},
		{"dead on ping", MsgPing, UpdateDead, "mallory", false},
		{"suspect on ping as b from elsewhere", MsgPing, UpdateSuspect, "b", true},
	} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		const step, until = 10 * time.Millisecond, 30 * time.Second
		forged, maxLHM := 0, 0
		for now := time.Duration(0); now <= until; now += step {
			a.Tick(now)
			pk, _ := drain(a)
			for _, p := range pk {
				if p.Kind == MsgPing && p.To.ID != "mallory" {
					ack := Packet{Kind: MsgAck, From: p.To, To: a.Self(), Ack: Ack{Seq: p.Ping.Seq}}
					require.NoError(t, a.Step(now+time.Millisecond, &ack))
				}
			}
			f := Packet{Kind: c.kind, From: node(c.from), To: a.Self(), Updates: []Update{
				{Kind: c.acc, Node: a.Self(), Incarnation: a.Incarnation(), From: ID(c.from)}}}
			switch c.kind {
			case MsgPing:
				f.Ping = Ping{Seq: uint32(forged + 1)}
			case MsgPingReq:
				f.PingReq = PingReq{Seq: uint32(forged + 1), Target: node("c")}
			case MsgAck:
				f.Ack = Ack{Seq: uint32(forged + 1)}
			}
			stepf := a.Step
			if c.other {
				stepf = a.StepFromOtherSource
			}
			require.NoError(t, stepf(now+2*time.Millisecond, &f), c.name)
			drain(a)
			forged++
			maxLHM = max(maxLHM, a.LocalHealthMultiplier())
		}
		st := a.Stats()
		assert.Equal(t, forged, st.Refutations, "%s: every accusation refuted", c.name)
		assert.Equal(t, forged, st.RefutationsUncharged, "%s: none counted", c.name)
		assert.Zero(t, st.ProbesFailed, c.name)
		assert.Zero(t, maxLHM, c.name)
	}
}

// ackOwnProbe starts m's probe at at (its Tick, m's loop late or on time)
// and acks it from the target 1 ms later.
func ackOwnProbe(t *testing.T, m *Member, at time.Duration) {
	t.Helper()
	m.Tick(at)
	drain(m)
	require.True(t, m.pr.active, "a probe started at %v", at)
	ack := Packet{Kind: MsgAck, From: m.pr.target.node, To: m.Self(), Ack: Ack{Seq: m.pr.seq}}
	require.NoError(t, m.Step(at+time.Millisecond, &ack))
	drain(m)
	require.False(t, m.pr.active, "the probe at %v acked", at)
}
