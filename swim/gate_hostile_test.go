package swim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A hostile mix of answers cannot stall a ModeDetector member or its gate's
// retry: nacks from anybody (asked or not, repeated, for this probe's seq
// or a neighbour's), acks for nearby seqs from anybody, stream answers and
// failures for the wrong member or seq or after the retry started waiting,
// interleaved with ticks at the member's own deadlines. After every Tick at
// now, NextDeadline is later than now (the member never spins on a
// deadline it cannot clear), a probe still active ends within its period
// (endAt) and a retry waiting for its direct timeout waits for a later
// instant; and every PeerStatus is consistent: not Suspected while
// WarmingUp, a level that is a finite number, never negative.
func TestGateRetryHostileAnswersProgress(t *testing.T) {
	peers := []string{"b", "c", "d", "e", "f", "g"}
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		m := newTest(t, "a", ModeDetector, func(c *Config) { c.StreamProbe = true }, peers...)
		ids := append([]string{"a", "zz"}, peers...)
		now := time.Duration(0)
		m.Tick(now)
		drain(m)
		deadlinesHit := 0
		ticked := func(what string) {
			at, ok := m.NextDeadline()
			require.True(t, ok, what)
			require.Greater(t, at, now, "%s: a deadline at or before the Tick's instant", what)
			if m.pr.active {
				require.Greater(t, m.pr.endAt, now, "%s: a probe past its period", what)
				if m.pr.failWait {
					require.Greater(t, m.pr.failAt, now, "%s: a probe waiting for a timeout that passed", what)
				}
			}
		}
		for step := 0; step < 3000; step++ {
			seq := m.pr.seq + uint32(rng.IntN(3)) - 1
			from := node(ids[rng.IntN(len(ids))])
			if rng.IntN(2) == 0 && m.pr.target != nil {
				from = m.pr.target.node
			}
			switch r := rng.IntN(12); {
			case r < 3:
				at, ok := m.NextDeadline()
				require.True(t, ok)
				if at > now {
					now = at
				}
				m.Tick(now)
				deadlinesHit++
				ticked(fmt.Sprintf("seed %d step %d at %v", seed, step, now))
			case r < 5:
				// A nack from an intermediate asked (again, maybe), or
				// from anybody, for this probe's seq or a neighbour's.
				if len(m.probing.asked) > 0 && r == 3 {
					from = node(string(m.probing.asked[rng.IntN(len(m.probing.asked))].id))
				}
				n := Packet{Kind: MsgNack, From: from, To: node("a"), Nack: Nack{Seq: seq}}
				_ = m.Step(now, &n)
			case r < 6:
				a := Packet{Kind: MsgAck, From: from, To: node("a"), Ack: Ack{Seq: seq}}
				_ = m.Step(now, &a)
			case r < 7:
				m.StreamAck(now, from.ID, seq)
			case r < 8:
				m.StreamFailed(now, from.ID, seq)
			case r < 10:
				// The peer refutes whatever it is accused of.
				id := ID(peers[rng.IntN(len(peers))])
				inc := Incarnation(0)
				if p := m.peers[id]; p != nil {
					inc = p.inc + 1
				}
				g := Packet{Kind: MsgGossip, From: node(string(id)), To: node("a"),
					Updates: []Update{{Kind: UpdateAlive, Node: node(string(id)), Incarnation: inc, From: id}}}
				_ = m.Step(now, &g)
			default:
				now += time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
				m.Tick(now)
				ticked(fmt.Sprintf("seed %d step %d at %v", seed, step, now))
			}
			drain(m)
			what := fmt.Sprintf("seed %d step %d at %v", seed, step, now)
			for _, st := range m.Members(now) {
				require.False(t, st.Suspected && st.WarmingUp, "%s: %s suspected while warming up", what, st.Node.ID)
				require.False(t, math.IsNaN(st.Level) || math.IsInf(st.Level, 0) || st.Level < 0, "%s: %s level %v", what, st.Node.ID, st.Level)
			}
		}
		require.Greater(t, deadlinesHit, 500)
		require.Positive(t, m.Stats().GateDeferrals, "seed %d: the retry was exercised", seed)
	}
}

// The detector gate under hostile news about the probed member itself, in
// several configurations (IndirectChecks 1; probe timeouts equal to the
// period; PauseGuard off): besides the answers of
// TestGateRetryHostileAnswersProgress (nacks from anybody, acks for nearby
// seqs, stream answers and failures for any member or seq), gossip that
// the target, or another member, is suspect, dead, or alive again, at its
// incarnation or the next. After every Tick, NextDeadline is later than
// now; a probe waiting for its least direct wait (failWait) waits for a
// later instant, after a Tick or a Step; and a suspicion this member
// raises from its own probe comes no sooner than that probe's direct
// timeout (the early end of a first probe whose every path failed, and its
// retry, cannot make a member suspect sooner than its ping could have been
// answered). 10 seeds x 2000 steps per configuration; all hold.
func TestGateHostileNewsAboutTarget(t *testing.T) {
	peers := []string{"b", "c", "d"}
	variants := []func(*Config){
		func(c *Config) { c.StreamProbe = true },
		func(c *Config) { c.StreamProbe = true; c.IndirectChecks = new(1) },
		func(c *Config) {
			c.StreamProbe = true
			c.ProbeTimeout, c.MaxProbeTimeout = time.Second, time.Second
		},
		func(c *Config) { c.StreamProbe = true; c.PauseGuard = new(time.Duration(0)) },
	}
	for vi, mut := range variants {
		deferrals, early := 0, 0
		for seed := uint64(1); seed <= 10; seed++ {
			rng := rand.New(rand.NewPCG(seed, 9))
			m := newTest(t, "a", ModeDetector, mut, peers...)
			ids := append([]string{"a", "zz"}, peers...)
			now := time.Duration(0)
			m.Tick(now)
			drain(m)
			check := func(what string, afterTick bool) {
				at, ok := m.NextDeadline()
				require.True(t, ok, what)
				if afterTick {
					require.Greater(t, at, now, "%s: a deadline at or before the Tick's instant", what)
				}
				if m.pr.active && m.pr.failWait {
					require.Greater(t, m.pr.failAt, now, "%s: waiting for an instant that passed", what)
				}
			}
			for step := 0; step < 2000; step++ {
				what := fmt.Sprintf("variant %d seed %d step %d at %v", vi, seed, step, now)
				seq := m.pr.seq + uint32(rng.IntN(3)) - 1
				from := node(ids[rng.IntN(len(ids))])
				if rng.IntN(2) == 0 && m.pr.target != nil {
					from = m.pr.target.node
				}
				susp, started, prev := m.stats.Suspicions, m.stats.ProbesStarted, m.pr
				tick := false
				switch r := rng.IntN(16); {
				case r < 4:
					at, _ := m.NextDeadline()
					now = max(now, at)
					m.Tick(now)
					tick = true
				case r < 6:
					if len(m.probing.asked) > 0 && r == 4 {
						from = node(string(m.probing.asked[rng.IntN(len(m.probing.asked))].id))
					}
					n := Packet{Kind: MsgNack, From: from, To: node("a"), Nack: Nack{Seq: seq}}
					_ = m.Step(now, &n)
				case r < 7:
					a := Packet{Kind: MsgAck, From: from, To: node("a"), Ack: Ack{Seq: seq}}
					_ = m.Step(now, &a)
				case r < 8:
					m.StreamAck(now, from.ID, seq)
				case r < 10:
					m.StreamFailed(now, from.ID, seq)
				case r < 12:
					// News about the target (or another member): suspect,
					// dead, or alive again, at its incarnation or the next.
					id := ID(peers[rng.IntN(len(peers))])
					if m.pr.target != nil && rng.IntN(2) == 0 {
						id = m.pr.target.node.ID
					}
					inc := Incarnation(0)
					if p := m.peers[id]; p != nil {
						inc = p.inc + Incarnation(rng.IntN(2))
					}
					u := Update{Kind: []UpdateKind{UpdateAlive, UpdateSuspect, UpdateDead}[rng.IntN(3)],
						Node: node(string(id)), Incarnation: inc, From: ID(ids[2+rng.IntN(len(peers))])}
					if u.Kind == UpdateAlive {
						u.Incarnation, u.From = u.Incarnation+1, id
					}
					g := Packet{Kind: MsgGossip, From: node(string(u.From)), To: node("a"), Updates: []Update{u}}
					_ = m.Step(now, &g)
				default:
					now += time.Duration(rng.Int64N(int64(700 * time.Millisecond)))
					m.Tick(now)
					tick = true
				}
				check(what, tick)
				if m.stats.Suspicions > susp {
					// The probe that failed was the one active before the
					// step (a Tick may start the next one at once).
					require.True(t, prev.active, "%s: a suspicion without a probe", what)
					require.GreaterOrEqual(t, now, prev.timeoutAt, "%s: suspected before its probe's direct timeout", what)
				}
				if !tick && m.stats.ProbesStarted > started {
					early++ // a first probe ended early and its retry started (pathsDone)
				}
				drain(m)
				for _, st := range m.Members(now) {
					require.False(t, math.IsNaN(st.Level) || st.Level < 0, "%s: %s level %v", what, st.Node.ID, st.Level)
				}
			}
			deferrals += m.Stats().GateDeferrals
		}
		require.Positive(t, deferrals, "variant %d: the gate deferred", vi)
		if vi != 2 { // a direct wait as long as the period leaves no room to end early
			require.Positive(t, early, "variant %d: a first probe ended early", vi)
		}
	}
}
