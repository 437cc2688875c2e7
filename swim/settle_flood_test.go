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

// A flood of gossiped Alives naming unknown members (forged IDs) cannot
// make a member exchange views more often than settleBurst (2) times the
// periodic anti-entropy would: each new member postpones the settling
// exchange rather than adding one, so a flood faster than settleDelay
// periods delays it until the flood stops, and a settling exchange comes
// no sooner than an interval after the one before the previous one. One exchange per forged member would cost, in swim/sim
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
	// first and one three periods after the second, then each an interval
	// after the one before the previous one, or three periods after the
	// last member heard of when that comes later (34 s: the member at
	// 31 s), and none between: five in 90 s, where the periodic exchange
	// alone makes three.
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
	assert.Equal(t, []time.Duration{3 * time.Second, 6100 * time.Millisecond, 34 * time.Second, 37100 * time.Millisecond, 64 * time.Second}, at)
}

// A join that follows another within an anti-entropy interval gets its
// own settling exchange three periods after it; a third one waits until
// an interval after the first exchange.
func TestSecondJoinSettles(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(30 * time.Second) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	first, _ := settleRun(t, a, 0)
	require.Empty(t, first)
	a.sync.due, a.sync.from, a.sync.frac = false, 0, 10 // no periodic exchange in the way
	var at []time.Duration
	for _, j := range []struct {
		id  string
		now time.Duration
	}{{"j1", 0}, {"j2", 10 * time.Second}, {"j3", 20 * time.Second}} {
		hear(t, a, j.now, MsgGossip, j.id)
		got, _ := settleRun(t, a, j.now+10*time.Second-time.Nanosecond)
		at = append(at, got...)
	}
	got, _ := settleRun(t, a, 40*time.Second)
	at = append(at, got...)
	assert.Equal(t, []time.Duration{3 * time.Second, 13 * time.Second, 33 * time.Second}, at)
}

// A member held dead that comes back by gossip (a healed partition's
// refutations, a rejoin) is a rumour like a join's and leaves the same
// residue of members that missed it: three periods after the last
// revival the member settles, with a member of the view. An Alive that
// revives no one (the member held alive, or older than the Dead) does not.
func TestRevivalSettles(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d", "e")
	a.Tick(0)
	drain(a)
	say := func(now time.Duration, us ...Update) {
		p := Packet{Kind: MsgGossip, From: node("b"), To: a.Self(), Updates: us}
		require.NoError(t, a.Step(now, &p))
		drain(a)
	}
	dead := func(id string, inc Incarnation) Update {
		return Update{Kind: UpdateDead, Node: node(id), Incarnation: inc, From: "b"}
	}
	alive := func(id string, inc Incarnation) Update {
		return Update{Kind: UpdateAlive, Node: node(id), Incarnation: inc, From: ID(id)}
	}
	say(0, dead("d", 0), dead("e", 3))
	require.Equal(t, StateDead, a.State("d"))
	require.Equal(t, StateDead, a.State("e"))
	say(time.Second, alive("c", 1), alive("e", 2)) // c was alive, e's Alive is older than its Dead
	got, _ := settleRun(t, a, 10*time.Second)
	assert.Empty(t, got, "no member came back")
	require.Equal(t, StateDead, a.State("e"))

	say(20*time.Second, alive("d", 1))
	require.Equal(t, StateAlive, a.State("d"))
	got, to := settleRun(t, a, 30*time.Second)
	assert.Equal(t, []time.Duration{23 * time.Second}, got)
	require.Len(t, to, 1)
	assert.Contains(t, []ID{"b", "c", "d"}, to[0])
}
