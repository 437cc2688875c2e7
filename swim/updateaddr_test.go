package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// An update names its member's address (only packet headers leave
// addresses out in wire format 2). One without is refused, and changes
// nothing: a new member learnt without an address was probed at an empty
// address, against Step's contract, and declared dead.
func TestUpdateWithoutAddressRefused(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	for _, u := range []Update{
		{Kind: UpdateAlive, Node: Node{ID: "q"}, From: "q"},
		{Kind: UpdateSuspect, Node: Node{ID: "b"}, Incarnation: 1, From: "b"},
		{Kind: UpdateDead, Node: Node{ID: "b"}, Incarnation: 1, From: "b"},
	} {
		for _, k := range []MessageKind{MsgGossip, MsgSync} {
			err := a.Step(time.Second, &Packet{Kind: k, From: node("b"), To: Node{ID: "a"}, Updates: []Update{u}})
			assert.ErrorIs(t, err, ErrPacket, "%v in %v", u.Kind, k)
			assert.ErrorContains(t, err, "without an address")
		}
	}
	assert.Equal(t, State(0), a.State("q"))
	assert.Equal(t, StateAlive, a.State("b"))
	pk, _ := advance(a, 10*time.Second)
	for _, p := range pk {
		assert.NotEmpty(t, p.To.Addr, "%v sent to an empty address", p.Kind)
	}

	_, err := New(Config{Self: Node{ID: "x"}}, rand.New(rand.NewPCG(1, 2)))
	assert.ErrorIs(t, err, ErrConfig)
	assert.ErrorContains(t, err, "Self.Addr is empty")
}
