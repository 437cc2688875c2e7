package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A join refused for a dead holder of the joiner's ID (within
// DeadReclaimTime) is reported to the joiner (JoinRefusal): who refused,
// the entry kept, its incarnation; it is forgotten once a member admits
// the joiner, and by a new Join. Before, the joiner had nothing to tell
// this from silence (agent.Join: "no member answered").
func TestJoinRefusalReported(t *testing.T) {
	wait := func(c *Config) { c.DeadReclaimTime = new(20 * time.Second) }
	s := newTest(t, "s", ModeLifeguard, wait, "o", "c")
	o := newTest(t, "o", ModeLifeguard, wait, "s", "c")
	killC(t, time.Second, s, o)
	c2 := restartC(t, ModeLifeguard, "c2:7946", 3, "s:7946")
	_, ok := c2.JoinRefusal()
	require.False(t, ok, "nothing heard yet")
	runNet(t, 2*time.Second, 10*time.Second, s, o, c2)
	r, ok := c2.JoinRefusal()
	require.True(t, ok)
	assert.Equal(t, node("s"), r.By)
	assert.Equal(t, node("c"), r.Held)
	assert.False(t, r.Left)
	assert.Equal(t, Incarnation(0), r.Incarnation)
	assert.Greater(t, r.At, 9*time.Second, "refused again at every retry")
	assert.Equal(t, 1, c2.NumAlive(), "not admitted")

	require.NoError(t, c2.Join(10*time.Second, []string{"s:7946"}))
	_, ok = c2.JoinRefusal()
	assert.False(t, ok, "a new Join forgets the previous one's refusal")

	runNet(t, 10*time.Second, 24*time.Second, s, o, c2)
	require.Equal(t, 3, c2.NumAlive(), "admitted past DeadReclaimTime")
	_, ok = c2.JoinRefusal()
	assert.False(t, ok, "admitted: no refusal to report")
}

// A join refused for a holder that left names the leave (Left), and one
// refused for a live holder is a conflict (EventConflict), not a
// JoinRefusal.
func TestJoinRefusalLeftAndLive(t *testing.T) {
	wait := func(c *Config) { c.DeadReclaimTime = new(time.Minute) }
	s := newTest(t, "s", ModeLifeguard, wait, "c")
	require.NoError(t, s.Step(time.Second, gossipFrom("c", Update{Kind: UpdateDead, Node: node("c"), Incarnation: 2, From: "c"})))
	require.Equal(t, StateLeft, s.State("c"))
	c2 := restartC(t, ModeLifeguard, "c2:7946", 3, "s:7946")
	runNet(t, 2*time.Second, 3*time.Second, s, c2)
	r, ok := c2.JoinRefusal()
	require.True(t, ok)
	assert.True(t, r.Left)
	assert.Equal(t, Incarnation(2), r.Incarnation)

	live := newTest(t, "s", ModeLifeguard, nil, "c")
	c3 := restartC(t, ModeLifeguard, "c3:7946", 4, "s:7946")
	ev := runNet(t, 2*time.Second, 3*time.Second, live, c3)
	_, ok = c3.JoinRefusal()
	assert.False(t, ok)
	assert.True(t, hasEvent(ev[c3], EventConflict))
}

// With signed self-updates, a join under another key than the one bound
// to a dead entry is refused as long as the entry is kept, and reported
// the same way.
func TestJoinRefusalSignedForeignKey(t *testing.T) {
	newSigned := func(id, addr string, seed uint64) *Member {
		m, err := New(Config{Self: Node{ID: ID(id), Addr: addr}, Mode: ModeLifeguard, SigningKey: testKey(addr)},
			rand.New(rand.NewPCG(seed, 6)))
		require.NoError(t, err)
		return m
	}
	s := newSigned("s", "s:7946", 1)
	c := newSigned("c", "c:7946", 2)
	require.NoError(t, c.Join(0, []string{"s:7946"}))
	runNet(t, 0, time.Second, s, c)
	killC(t, 2*time.Second, s)
	other := newSigned("c", "c2:7946", 3) // another key: testKey("c2:7946")
	require.NoError(t, other.Join(3*time.Second, []string{"s:7946"}))
	runNet(t, 3*time.Second, 6*time.Second, s, other)
	r, ok := other.JoinRefusal()
	require.True(t, ok)
	assert.Equal(t, "c:7946", r.Held.Addr)
	assert.Equal(t, node("s"), r.By)
	assert.Equal(t, 1, other.NumAlive())
}
