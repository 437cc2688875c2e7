package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settleRun ticks m at every deadline it announces from its current state
// up to and including until, acking every ping at once, and returns the
// anti-entropy exchanges it started (MsgJoin with a digest), with when.
func settleRun(t *testing.T, m *Member, until time.Duration) (at []time.Duration, to []ID) {
	t.Helper()
	tickUntil(m, until, func(now time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			switch {
			case p.Kind == MsgJoin && !p.Digest.IsZero():
				at, to = append(at, now), append(to, p.To.ID)
			case p.Kind == MsgPing:
				ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
				require.NoError(t, m.Step(now, &ack))
				drain(m)
			}
		}
	})
	return at, to
}

// hear gives m, at now, a gossip from b announcing the members ids
// (Alive, incarnation 0).
func hear(t *testing.T, m *Member, now time.Duration, kind MessageKind, ids ...string) {
	t.Helper()
	p := Packet{Kind: kind, From: node("b"), To: m.Self()}
	for _, id := range ids {
		p.Updates = append(p.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
	}
	require.NoError(t, m.Step(now, &p))
	drain(m)
}

// A member that learns of a new member by gossip runs one anti-entropy
// exchange (a digest to a random member) three protocol periods after the
// last new member it learnt of (settlePull), and its next periodic
// exchange comes at least a PushPullInterval after that. A member heard of
// again, or learnt from a view (MsgSync), schedules none; nor does anything
// with PushPullInterval 0. The periodic exchange is put 100 h away (its
// first at a random fraction of that), so that every exchange seen here is
// the settling one.
func TestSettlePullAfterNewMembers(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	hear(t, a, 0, MsgGossip, "f")
	hear(t, a, time.Second, MsgPing, "g") // postpones it to 1 s + 3 periods
	at, _ := settleRun(t, a, 4*time.Second-time.Millisecond)
	assert.Empty(t, at, "before three periods after the last new member")
	at, to := settleRun(t, a, 4*time.Second)
	require.Equal(t, []time.Duration{4 * time.Second}, at, "one exchange, three periods after the last new member")
	assert.Contains(t, []ID{"b", "c", "d", "f", "g"}, to[0])

	// Once settled: no exchange for at least a PushPullInterval, even when
	// known members are announced again.
	hear(t, a, 5*time.Second, MsgGossip, "f", "g", "c")
	at, _ = settleRun(t, a, 60*time.Second)
	assert.Empty(t, at, "members already known, and the periodic exchange an interval away")

	// Members learnt from a view (a join's answer, an exchange) are not
	// learnt by gossip: nothing to settle.
	v := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	v.Tick(0)
	drain(v)
	hear(t, v, 0, MsgSync, "f", "g")
	require.Equal(t, StateAlive, v.State("f"))
	at, _ = settleRun(t, v, 60*time.Second)
	assert.Empty(t, at, "members learnt from a view")

	// No anti-entropy at all: none.
	off := newTest(t, "a", ModeLifeguard, func(c *Config) { c.PushPullInterval = new(time.Duration(0)) }, "b", "c", "d")
	off.Tick(0)
	drain(off)
	hear(t, off, 0, MsgGossip, "f")
	require.Equal(t, StateAlive, off.State("f"))
	at, _ = settleRun(t, off, 60*time.Second)
	assert.Empty(t, at, "PushPullInterval 0")
}

// A flood of gossiped Alives naming unknown members (forged IDs) cannot
// make a member exchange views more often than the periodic anti-entropy
// would: each new member postpones the settling exchange rather than adding
// one, so a flood faster than settleDelay periods delays it until the flood
// stops, and a settling exchange comes no sooner than an interval after the
// previous one. One exchange per forged member would cost, in swim/sim
// (N = 64, one forged Alive every 3.1 s to one member), 1.06
// view-exchange packets per member per second instead of 0.06, 1523 bytes
// per member per second instead of 570.
func TestSettleFloodBounded(t *testing.T) {
	fresh := 0
	forge := func(m *Member, now time.Duration) {
		fresh++
		hear(t, m, now, MsgGossip, fmt.Sprintf("x%d", fresh))
	}
	// One forged member a period for a minute (60, within the unverified
	// quota, swim/verify.go): no exchange during the flood, one three
	// periods after its last.
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	var at []time.Duration
	for now := time.Duration(0); now < time.Minute; now += time.Second {
		forge(a, now)
		got, _ := settleRun(t, a, now+time.Second-time.Nanosecond)
		at = append(at, got...)
	}
	assert.Empty(t, at, "postponed while new members keep coming")
	got, _ := settleRun(t, a, 2*time.Minute)
	assert.Equal(t, []time.Duration{time.Minute - time.Second + 3*time.Second}, got)

	// One forged member every 3.1 s, twenty of them (the view stays within
	// 32 members: an interval of 30 s): an exchange three periods after the
	// first, then one an interval after the previous one, or three periods
	// after the last member heard of when that comes later (34 s: the
	// member at 31 s), and none between.
	b := newTest(t, "a", ModeLifeguard, func(c *Config) { c.PushPullInterval = new(30 * time.Second) }, "b", "c", "d")
	b.Tick(0)
	drain(b)
	// The first periodic exchange, at a random point of the first 30 s,
	// is left out: it is not a settling one.
	first, _ := settleRun(t, b, 0)
	require.Empty(t, first)
	b.sync.due, b.sync.from, b.sync.frac = false, 0, 10
	at = nil
	for k := 0; k < 20; k++ {
		now := time.Duration(k) * 3100 * time.Millisecond
		forge(b, now)
		got, _ := settleRun(t, b, now+3100*time.Millisecond-time.Nanosecond)
		at = append(at, got...)
	}
	got, _ = settleRun(t, b, 90*time.Second)
	at = append(at, got...)
	assert.Equal(t, []time.Duration{3 * time.Second, 34 * time.Second, 64 * time.Second}, at)
}
