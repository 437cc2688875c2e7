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
				if len(m.asked) > 0 && r == 3 {
					from = node(string(m.asked[rng.IntN(len(m.asked))].id))
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
