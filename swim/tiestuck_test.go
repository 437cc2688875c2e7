package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member that heard the losing revival of a tie declared dead (Dead(c,
// z9, 1)) before it heard the winner's Alive at the same incarnation holds
// c dead while the rest hold it alive at b1: the winner, speaking to it,
// gets the declaration back, refutes it above, and every member ends on
// b1 alive (not held dead until the entry is reaped).
func TestTieLoserDeclaredDeadConverges(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
	killC(t, time.Second, s, o)
	z := Node{ID: "c", Addr: "z9:7946"}
	b := Node{ID: "c", Addr: "b1:7946"}
	for _, m := range []*Member{s, o} {
		require.NoError(t, m.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: z, Incarnation: 1, From: "c"})))
	}
	require.NoError(t, s.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: b, Incarnation: 1, From: "c"})))
	require.NoError(t, o.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateDead, Node: z, Incarnation: 1, From: "x"})))
	require.NoError(t, o.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: b, Incarnation: 1, From: "c"})))
	drain(s)
	drain(o)
	cb, err := New(Config{Self: b, Mode: ModeLifeguard, Incarnation: 1}, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	cb.Bootstrap([]Node{node("s"), node("o")})
	runNet(t, 2*time.Second, 90*time.Second, s, o, cb)
	for _, m := range []*Member{s, o} {
		st, _ := m.Member("c", 90*time.Second)
		assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
		assert.Equal(t, "b1:7946", st.Node.Addr, "%s", m.Self().ID)
	}
}
