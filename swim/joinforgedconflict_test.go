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
