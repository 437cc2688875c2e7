package swim

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHearsayRaisesLeaveNoRefutationStale (issue 27, rv27): a stranger x
// makes a suspect b (hearsay: a's own timer, told to b), then sends a, every
// 100 ms, Suspect(b) MaxIncarnationJump above its previous one. b is live
// and refutes every accusation it hears, its refutations reaching a 100 ms
// later. A suspicion made from hearsay is a's own timer: a stranger's word
// must not keep it from ending with the suspect's refutation. Since
// cb58d0b a raise keeps the running timer (the fix for atk27 F1), and a
// raise from hearsay made each of b's refutations stale at a (its
// incarnation below the raised one): a told b again (accuseBack), b
// refuted again, one raise behind, and a declared the live b dead at its
// first deadline, 24.001 s; before cb58d0b each raise restarted the timer
// and b stayed suspect at a for as long as x sent.
func TestHearsayRaisesLeaveNoRefutationStale(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
	b := newTest(t, "b", ModeLifeguard, nil, "a", "c", "d", "e", "f")
	x := Node{ID: "x", Addr: "x:1"}
	var toA []Packet
	inc := Incarnation(0)
	var dead time.Duration
	for now := time.Millisecond; now < 30*time.Second && dead == 0; now += 100 * time.Millisecond {
		require.NoError(t, a.Step(now, gossipNode(x, Update{Kind: UpdateSuspect, Node: node("b"), Incarnation: inc, From: "x"})))
		inc += MaxIncarnationJump
		for i := range toA {
			require.NoError(t, a.Step(now, &toA[i]))
		}
		toA = nil
		a.Tick(now)
		pk, evs := drain(a)
		if slices.Contains(eventsAbout(evs, "b"), EventDead) {
			dead = now
		}
		for i := range pk {
			if pk[i].To.ID == "b" {
				require.NoError(t, b.Step(now, &pk[i]))
			}
		}
		b.Tick(now)
		out, _ := drain(b)
		for _, p := range out {
			if p.To.ID == "a" {
				toA = append(toA, p)
			}
		}
	}
	assert.Zero(t, dead, "a declared the live b dead")
	assert.Positive(t, b.Incarnation(), "b refuted")
}
