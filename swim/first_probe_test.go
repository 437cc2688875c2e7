package swim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstPing returns when m, started at 0, sends its first ping.
func firstPing(t *testing.T, m *Member) time.Duration {
	t.Helper()
	m.Tick(0)
	for now := time.Duration(0); now <= 2*time.Second; {
		pk, _ := drain(m)
		if len(only(t, pk, MsgPing)) > 0 {
			return now
		}
		at, ok := m.NextDeadline()
		require.True(t, ok)
		now = max(at, now+time.Millisecond)
		m.Tick(now)
	}
	t.Fatal("no ping within two periods")
	return 0
}

// By default a member's first probe comes at a random point of its first
// period, drawn from its own random source, so that members started
// together do not probe in step; SyncProbes probes at the first Tick.
func TestFirstProbeStaggered(t *testing.T) {
	seen := map[time.Duration]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		m, err := New(Config{Self: node("a")}, rand.New(rand.NewPCG(seed, 9)))
		require.NoError(t, err)
		m.Bootstrap([]Node{node("b"), node("c")})
		at := firstPing(t, m)
		assert.GreaterOrEqual(t, at, time.Duration(0))
		assert.Less(t, at, time.Second, "seed %d: within the first period", seed)
		seen[at] = true
	}
	assert.Greater(t, len(seen), 15, "20 members draw different phases: %v", seen)

	m, err := New(Config{Self: node("a"), SyncProbes: true}, rand.New(rand.NewPCG(1, 9)))
	require.NoError(t, err)
	m.Bootstrap([]Node{node("b")})
	assert.Zero(t, firstPing(t, m), "SyncProbes: the first probe at the first Tick")
}
