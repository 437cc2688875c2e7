package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestForgedConflictRefusesNoJoin (issue 27, atk27 F5): while j's join
// through s waits for s's answer, views naming j's ID at another address
// that do not answer the join (a stranger's, one under j's own ID from
// elsewhere, one claiming s's address without the join's token) are an
// EventConflict and nothing more: JoinConflict says no member refused
// the join, the join stays pending, and s's answer then joins j. Before,
// any of them refused the join (JoinConflict true: the agent's Join
// returned a *ConflictError naming a holder that did not exist, and its
// resends stopped). A seed's real refusal, which echoes the token, still
// refuses (TestIDConflictAtJoin).
func TestForgedConflictRefusesNoJoin(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "b", "c")
	j, err := New(Config{Self: node("j"), Mode: ModeLifeguard}, newTestRand())
	require.NoError(t, err)
	require.NoError(t, j.Join(0, []string{"s:7946"}))
	join, _ := drain(j)
	require.Len(t, join, 1)
	elsewhere := Node{ID: "j", Addr: "127.0.0.1:9"}
	claim := []Update{{Kind: UpdateAlive, Node: elsewhere, From: "j"}}
	var conflicts int
	for i, forged := range []Packet{
		{Kind: MsgSync, From: Node{ID: "x", Addr: "x:1"}, To: node("j"), Updates: claim},
		{Kind: MsgSync, From: elsewhere, To: node("j"), Updates: claim},
		{Kind: MsgSync, From: node("s"), To: node("j"), Updates: claim},
		{Kind: MsgSync, From: node("s"), To: node("j"), Updates: claim, JoinToken: join[0].JoinToken + 1},
	} {
		require.NoError(t, j.Step(time.Duration(150+i)*time.Millisecond, &forged))
		_, ev := drain(j)
		for _, e := range ev {
			if e.Kind == EventConflict {
				conflicts++
				assert.Equal(t, elsewhere, e.Node, "view %d", i)
			}
		}
		_, refused := j.JoinConflict()
		assert.False(t, refused, "view %d: no member refused the join", i)
		assert.True(t, j.Joining(), "view %d: the join goes on", i)
	}
	assert.Positive(t, conflicts, "reported (a repeat of the same claim is not)")
	require.NoError(t, s.Step(200*time.Millisecond, &join[0]))
	answer, _ := drain(s)
	for i := range answer {
		if answer[i].To.ID == "j" {
			require.NoError(t, j.Step(210*time.Millisecond, &answer[i]))
		}
	}
	assert.False(t, j.Joining(), "s's answer joins j")
	assert.Equal(t, StateAlive, j.State("s"))
}

// TestNATSeedRefusesAfterFallback (rv27): a seed that advertises an
// address other than the one dialled (behind a NAT or a load balancer)
// refuses a join for an ID conflict from its advertised address, echoing
// the token. The first such refusal starts joinFallbackPeriods periods;
// one that comes after them refuses the join (JoinConflict names the
// holder), as a view from elsewhere answers it after the same wait
// (TestJoinAnsweredFromAnotherAddress). Before, only a refusal from a
// dialled address counted, so the joiner never learnt of the conflict and
// retried until its caller gave up.
func TestNATSeedRefusesAfterFallback(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "b", "c")
	imp := Node{ID: "b", Addr: "impostor:7946"}
	j, err := New(Config{Self: imp, Mode: ModeLifeguard}, newTestRand())
	require.NoError(t, err)
	require.NoError(t, j.Join(0, []string{"10.0.0.1:7946"})) // s's public address
	pk, _ := drain(j)
	require.Len(t, pk, 1)
	require.NoError(t, s.Step(time.Second, &pk[0]))
	out, _ := drain(s)
	require.Len(t, out, 1, "s refuses")
	refusal := out[0]
	require.Equal(t, node("s"), refusal.From, "from its advertised address")
	require.Equal(t, pk[0].JoinToken, refusal.JoinToken)
	for _, at := range []time.Duration{time.Second, 4*time.Second - 1} {
		require.NoError(t, j.Step(at, &refusal))
		drain(j)
		_, refused := j.JoinConflict()
		assert.False(t, refused, "at %v: within joinFallbackPeriods", at)
		assert.True(t, j.Joining(), "at %v", at)
	}
	require.NoError(t, j.Step(4*time.Second, &refusal))
	holder, refused := j.JoinConflict()
	assert.True(t, refused, "after joinFallbackPeriods")
	assert.Equal(t, node("b"), holder)
	assert.Equal(t, 1, j.NumAlive(), "not joined")

	// A later Join starts its own wait: the old refusal echoes the old
	// token and refuses nothing.
	require.NoError(t, j.Join(5*time.Second, []string{"10.0.0.1:7946"}))
	drain(j)
	require.NoError(t, j.Step(9*time.Second, &refusal))
	_, refused = j.JoinConflict()
	assert.False(t, refused, "the old token")
}
