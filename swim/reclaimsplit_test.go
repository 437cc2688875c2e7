package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two restarts of one crashed member at two new addresses at once
// (flapping pods) both refute the declaration Dead(c, 0) with Alive at 1.
// The group must converge on one of them, and the other must hear a
// conflict. Before, the first Alive(c, 1) each member heard won there and
// the other, at the same incarnation, was ignored silently as stale: the
// group split for good (s held c at c2, o at c3), each claimant probed by
// half of it.
func TestTwoReclaimsAtOnceConverge(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
	killC(t, time.Second, s, o)
	mk := func(addr string, seed uint64) *Member {
		c, err := New(Config{Self: Node{ID: "c", Addr: addr}, Mode: ModeLifeguard}, rand.New(rand.NewPCG(seed, 4)))
		require.NoError(t, err)
		return c
	}
	c2, c3 := mk("c2:7946", 3), mk("c3:7946", 5)
	require.NoError(t, c2.Join(2*time.Second, []string{"s:7946"}))
	require.NoError(t, c3.Join(2*time.Second, []string{"o:7946"}))
	ev := runNet(t, 2*time.Second, 30*time.Second, s, o, c2, c3)

	ss, _ := s.Member("c", 30*time.Second)
	os, _ := o.Member("c", 30*time.Second)
	assert.Equal(t, StateAlive, ss.State)
	assert.Equal(t, StateAlive, os.State)
	assert.Equal(t, ss.Node.Addr, os.Node.Addr, "s and o hold c at the same address")
	loser := c3
	if ss.Node.Addr == "c3:7946" {
		loser = c2
	}
	assert.True(t, hasEvent(ev[loser], EventConflict), "the claimant not kept hears the conflict")
}

// A member wrongly declared dead (paused) resumes at its old address while
// a restart of it reclaims the ID from a new one: both refute Dead(c, 0)
// with Alive(c, 1). The group converges on one address whatever the
// order of addresses (the lower), and the other node hears a conflict.
func TestPausedMemberResumesWhileReclaimed(t *testing.T) {
	for _, newAddr := range []string{"c2:7946", "b9:7946"} { // above and below c:7946
		t.Run(newAddr, func(t *testing.T) {
			s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
			o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
			c := newTest(t, "c", ModeLifeguard, nil, "s", "o") // paused from the start
			killC(t, time.Second, s, o)
			c2, err := New(Config{Self: Node{ID: "c", Addr: newAddr}, Mode: ModeLifeguard}, rand.New(rand.NewPCG(3, 4)))
			require.NoError(t, err)
			require.NoError(t, c2.Join(2*time.Second, []string{"o:7946"}))
			ev := runNet(t, 2*time.Second, 30*time.Second, s, o, c, c2)

			want := min("c:7946", newAddr)
			for _, m := range []*Member{s, o} {
				st, _ := m.Member("c", 30*time.Second)
				assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
				assert.Equal(t, want, st.Node.Addr, "%s", m.Self().ID)
			}
			loser := c2
			if want == newAddr {
				loser = c
			}
			assert.True(t, hasEvent(ev[loser], EventConflict), "the node not kept hears the conflict")
		})
	}
}

// DeadReclaimTime protects a member wrongly declared dead that resumes at
// its old address within the window: a restart elsewhere, even at a lower
// address and at the same incarnation, does not displace it (the tie rule
// applies only to a revival that was itself past DeadReclaimTime).
func TestTieKeepsDeadReclaimTime(t *testing.T) {
	wait := func(c *Config) { c.DeadReclaimTime = new(20 * time.Second) }
	s := newTest(t, "s", ModeLifeguard, wait, "o", "c")
	o := newTest(t, "o", ModeLifeguard, wait, "s", "c")
	c := newTest(t, "c", ModeLifeguard, wait, "s", "o")
	killC(t, time.Second, s, o)
	runNet(t, time.Second, 3*time.Second, s, o, c) // c resumes at c:7946 and refutes
	require.Equal(t, StateAlive, s.State("c"))
	b := Node{ID: "c", Addr: "b9:7946"}
	for _, m := range []*Member{s, o} {
		require.NoError(t, m.Step(4*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: b, Incarnation: 1, From: "c"})))
		st, _ := m.Member("c", 4*time.Second)
		assert.Equal(t, "c:7946", st.Node.Addr, "%s: 3 s after the declaration, within DeadReclaimTime", m.Self().ID)
	}
}
