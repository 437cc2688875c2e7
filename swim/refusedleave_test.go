package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A restart refused within DeadReclaimTime refutes the declaration it is
// answered with (its incarnation is then above it) and, giving up, leaves:
// that leave must not turn the crashed member's Dead into Left at the
// restart's address.
func TestRefusedRestartLeaveKeepsDead(t *testing.T) {
	wait := func(c *Config) { c.DeadReclaimTime = new(20 * time.Second) }
	s := newTest(t, "s", ModeLifeguard, wait, "o", "c")
	o := newTest(t, "o", ModeLifeguard, wait, "s", "c")
	killC(t, time.Second, s, o)
	c2, err := New(Config{Self: Node{ID: "c", Addr: "c2:7946"}, Mode: ModeLifeguard}, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	require.NoError(t, c2.Join(2*time.Second, []string{"s:7946"}))
	runNet(t, 2*time.Second, 5*time.Second, s, o, c2)
	require.NoError(t, c2.Leave(5*time.Second))
	ev := runNet(t, 5*time.Second, 8*time.Second, s, o, c2)
	for _, m := range []*Member{s, o} {
		st, _ := m.Member("c", 8*time.Second)
		assert.Equal(t, StateDead, st.State, "%s: the crash stays a crash", m.Self().ID)
		assert.Equal(t, "c:7946", st.Node.Addr, "%s", m.Self().ID)
		assert.False(t, hasEvent(ev[m], EventLeave), "%s", m.Self().ID)
	}
}
