package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The drain loop has nobody to send to while no other member is alive or
// suspect (a seed alone, the last survivor of a group): its queue cannot
// drain, so it must not ask for a tick every GossipInterval (an agent
// woke 5 times a second forever, for nothing).
func TestDrainLoopIdleWithoutLiveMembers(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	a.Tick(0)
	drain(a)
	require.NoError(t, a.SetMeta([]byte("v2")))
	require.Positive(t, a.Queued(), "the new metadata's Alive is queued")
	for now := time.Duration(0); now < 3*time.Second; {
		at, ok := a.NextDeadline()
		require.True(t, ok)
		assert.GreaterOrEqual(t, at-now, 900*time.Millisecond, "at %v: a deadline %v later, with nobody to gossip to", now, at-now)
		now = max(at, now+time.Millisecond)
		a.Tick(now)
		pk, _ := drain(a)
		assert.Empty(t, only(t, pk, MsgGossip))
	}
}
