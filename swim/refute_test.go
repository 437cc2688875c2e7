package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that refutes a suspicion sends its new Alive at once to the
// suspecter (and to a few random members), not only piggybacked on later
// probes: a resumed member's refutation reached suspecters after their
// timers. Once per accuser and incarnation; plain SWIM keeps piggybacking
// only.
func TestRefutationSentToSuspecter(t *testing.T) {
	for _, mode := range []Mode{ModeLifeguard, ModeDetector, ModeSWIM} {
		a := newTest(t, "a", mode, nil, "b", "c", "d", "e", "f", "g", "h")
		drain(a)
		gossip := Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: 99},
			Updates: []Update{{Kind: UpdateSuspect, Node: node("a"), Incarnation: 0, From: "c"}}}
		require.NoError(t, a.Step(time.Second, &gossip))
		pk, _ := drain(a)
		pk0 := pk
		require.Equal(t, Incarnation(1), a.Incarnation(), mode)
		toC := 0
		alive := 0
		for _, p := range pk {
			if hasUpdate(p, UpdateAlive, "a", 1) && p.Kind == MsgPing {
				alive++
				if p.To.ID == "c" {
					toC++
				}
			}
		}
		if mode == ModeSWIM {
			assert.Zero(t, alive, "plain SWIM refutes by piggybacking only")
			continue
		}
		assert.Equal(t, 1, toC, "%v: the suspecter gets the Alive at once", mode)
		assert.GreaterOrEqual(t, alive, 1+DefaultIndirectChecks-1, "%v: and a few random members", mode)
		assert.LessOrEqual(t, alive, 1+DefaultIndirectChecks, mode)
		// The same (stale) suspicion again: no second direct Alive to c.
		again := gossip
		require.NoError(t, a.Step(2*time.Second, &again))
		pk, _ = drain(a)
		for _, p := range pk {
			assert.False(t, p.To.ID == "c" && p.Kind == MsgPing, "%v: c told twice", mode)
		}
		// A stale suspicion from a member not told yet: it is told.
		told := map[ID]bool{}
		for _, p := range pk0 {
			told[p.To.ID] = true
		}
		d := ""
		for _, id := range []string{"d", "e", "f", "g", "h"} {
			if !told[ID(id)] {
				d = id
				break
			}
		}
		stale := Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: 98},
			Updates: []Update{{Kind: UpdateSuspect, Node: node("a"), Incarnation: 0, From: ID(d)}}}
		require.NoError(t, a.Step(3*time.Second, &stale))
		pk, _ = drain(a)
		toD := 0
		for _, p := range pk {
			if p.To.ID == ID(d) && p.Kind == MsgPing && hasUpdate(p, UpdateAlive, "a", 1) {
				toD++
			}
		}
		assert.Equal(t, 1, toD, "%v: a member holding a stale suspicion is told", mode)
	}
}

// A member that keeps this member dead in an older incarnation (it missed
// the refutation of a restart) answers its probes with the Dead notice,
// naming the original declarer: the notice's sender is told the current
// Alive at once too, not only the declarer.
func TestStaleDeadSenderTold(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.inc = 1
	drain(a)
	ack := Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: 7},
		Updates: []Update{{Kind: UpdateDead, Node: node("a"), Incarnation: 0, From: "d"}}}
	require.NoError(t, a.Step(time.Second, &ack))
	pk, _ := drain(a)
	toB := false
	for _, p := range pk {
		if p.To.ID == "b" && p.Kind == MsgPing && hasUpdate(p, UpdateAlive, "a", 1) {
			toB = true
		}
	}
	assert.True(t, toB, "the sender of the stale Dead notice is told: %v", pk)
	assert.Equal(t, Incarnation(1), a.Incarnation(), "a stale notice raises nothing")
}
