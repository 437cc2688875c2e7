package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRisingSuspicionKeepsTimer (issue 27, atk27 F1): a Suspect one
// incarnation above the held one, about a member already suspect, keeps
// the running suspicion (its start, deadline and confirmers), on every
// path: a stranger's hearsay, a live member's gossip, a view transfer. A
// live member's raises the held incarnation; a stranger's changes nothing
// (rv27: its raises made the suspect's refutations stale,
// TestHearsayRaisesLeaveNoRefutationStale). Before, each restarted the suspicion
// at the maximum Lifeguard timeout: a Suspect(b, held+1) every 100 ms
// kept a crashed b suspect for ever (b at incarnation 961 and still
// suspect at 96.1 s, its first deadline 24.001 s).
//
// A twin member ticked alike but not flooded (for the live sender, told
// d's suspicion once at the held incarnation) holds the same suspicion at
// every step and declares b at the same instant: the flood changes
// nothing but the incarnation.
func TestRisingSuspicionKeepsTimer(t *testing.T) {
	x := Node{ID: "x", Addr: "x:1"}
	for _, tc := range []struct {
		name   string
		packet func(u Update) *Packet
		twin   bool // the twin hears the first packet at the held incarnation
		raises bool // the held incarnation follows the accusation
	}{
		{"stranger's hearsay", func(u Update) *Packet { u.From = "x"; return gossipNode(x, u) }, false, false},
		{"live member's gossip", func(u Update) *Packet { u.From = "d"; return gossipFrom("d", u) }, true, true},
		{"stranger's view", func(u Update) *Packet {
			u.From = "y"
			return &Packet{Kind: MsgSync, From: x, Updates: []Update{u}}
		}, false, false},
		{"announced stranger's view", func(u Update) *Packet {
			// From the second on, x is a member held alive at its address
			// (its Alive in the first): its word raises the incarnation.
			u.From = "y"
			return &Packet{Kind: MsgSync, From: x, Updates: []Update{{Kind: UpdateAlive, Node: x, From: "x"}, u}}
		}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
			twin := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
			first := Update{Kind: UpdateSuspect, Node: node("b"), From: "c"}
			for _, m := range []*Member{a, twin} {
				m.Tick(0)
				require.NoError(t, m.Step(time.Millisecond, gossipFrom("c", first)))
				drain(m)
			}
			p, q := a.peers["b"], twin.peers["b"]
			require.Equal(t, StateSuspect, p.state)
			now, inc, start, held := time.Millisecond, Incarnation(0), p.susp.start, Incarnation(0)
			for a.State("b") == StateSuspect && now < 40*time.Second {
				now += 100 * time.Millisecond
				inc = p.inc + 1
				if tc.raises && (tc.name != "announced stranger's view" || now > 101*time.Millisecond) {
					held = inc
				}
				require.NoError(t, a.Step(now, tc.packet(Update{Kind: UpdateSuspect, Node: node("b"), Incarnation: inc})))
				if tc.twin && now == 101*time.Millisecond {
					require.NoError(t, twin.Step(now, tc.packet(Update{Kind: UpdateSuspect, Node: node("b")})))
				}
				if a.State("b") == StateSuspect {
					require.Equal(t, held, p.inc, "the held incarnation")
					require.Equal(t, start, p.susp.start)
					require.Equal(t, q.susp.deadline, p.susp.deadline, "at %v", now)
					require.Equal(t, ID("c"), p.susp.from)
					require.Equal(t, q.susp.confirmers, p.susp.confirmers)
				}
				a.Tick(now)
				twin.Tick(now)
				drain(a)
				drain(twin)
			}
			assert.Equal(t, StateDead, a.State("b"))
			assert.Equal(t, StateDead, twin.State("b"), "declared at the same instant (%v)", now)
			assert.Equal(t, held, p.inc, "declared at the held incarnation")
			assert.Less(t, now, 24001*time.Millisecond+100*time.Millisecond, "by the first suspicion's deadline")
		})
	}
}
