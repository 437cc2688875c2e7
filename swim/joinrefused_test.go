package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every Join refused for an ID conflict is reported to its caller
// (EventConflict), however soon after the previous one: swim/agent's Join
// waits for that event, and cmd/fdswim retries a refused join with a
// backoff starting at 0.5 s. Before, the joiner reported one conflicting
// pair once per conflictEvery periods, so the second and third attempts
// of a member restarted on a new port while its crashed process was still
// held alive (seen with fdswim agents on loopback) were answered, read and
// not reported: the agent's Join ran to its deadline, and fdswim logged a
// join nobody answered ("context deadline exceeded") instead of a refusal.
func TestEveryJoinRefusalReported(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "c") // holds c alive at c:7946
	c2, err := New(Config{Self: Node{ID: "c", Addr: "c2:7946"}, SyncProbes: true}, newTestRand())
	require.NoError(t, err)

	for attempt, at := range []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond} {
		require.NoError(t, c2.Join(at, []string{"a:7946"}))
		pk, _ := drain(c2)
		require.Len(t, pk, 1)
		pk[0].To = a.Self()
		require.NoError(t, a.Step(at, &pk[0]))
		ans, _ := drain(a)
		require.Len(t, ans, 1, "attempt %d: a refuses with the entry it keeps", attempt)
		require.Equal(t, MsgSync, ans[0].Kind)
		require.NoError(t, c2.Step(at, &ans[0]))
		_, ev := drain(c2)
		n := 0
		for _, e := range ev {
			if e.Kind == EventConflict {
				n++
				assert.Equal(t, Node{ID: "c", Addr: "c:7946"}, e.Node, "the claim read: c at its old address")
			}
		}
		assert.Equal(t, 1, n, "attempt %d: the refusal is reported", attempt)
	}
	assert.Equal(t, StateAlive, a.State("c"), "the holder keeps its ID")
}
