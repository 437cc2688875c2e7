package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk29b: a format-2 member that holds a group of its own (a with b)
// joins another group through its seed s (merging: Join's doc, “sends its
// own view, once, to the seed whose view answered”). A forger spoofs, from
// s's address, one view without a token and without a version range
// (format1View), naming its sender "zz" rather than s. Since e795385 that
// view answers the join at once, and the merging push goes to "zz" at
// s's address, which s drops as misdirected; the
// genuine answer, echoing the token, comes after the join is no longer
// pending and sends no push. s's group then learns of b only from later
// exchanges: with two groups of 10 members at a 1 s period, s's group held
// all 20 after 0.6 s without the forger and after 21 to 50 s with one
// spoofed view (atk29b's report).
// Pushing to the address alone (no ID) does not mend it: the push then
// reaches s before s has admitted a (a's ack to s's join challenge), and
// s drops it; the push has to wait for the answer that echoes the token. At 2451311 the spoofed view answered nothing until
// joinFallbackPeriods, so the push followed the seed's genuine answer.
func TestSpoofedRangelessViewMisdirectsMergePush(t *testing.T) {
	cfg := func(c *Config) { c.ProbeInterval = time.Second }
	a := newTest(t, "a", ModeLifeguard, cfg, "b")
	b := newTest(t, "b", ModeLifeguard, cfg, "a")
	s := newTest(t, "s", ModeLifeguard, cfg, "r00")
	r := newTest(t, "r00", ModeLifeguard, cfg, "s")
	ms := []*Member{a, b, s, r}
	for _, m := range ms {
		m.join.noChallenge = false // as in a real group: the seed challenges a's join
		m.Tick(0)
	}
	pumpAll(ms, 0, nil)
	require.NoError(t, a.Join(0, []string{s.Self().Addr}))
	zz := Node{ID: "zz", Addr: s.Self().Addr}
	spoofed := &Packet{Kind: MsgSync, From: zz, To: a.Self(), Updates: []Update{
		{Kind: UpdateAlive, Node: zz, From: zz.ID},
		{Kind: UpdateAlive, Node: node("g00"), From: "g00"},
	}}
	require.NoError(t, a.Step(time.Millisecond, spoofed))
	pushedTo := map[ID]int{}
	for _, p := range pumpAll(ms, 2*time.Millisecond, nil) {
		if p.Kind == MsgSync && p.From.ID == a.Self().ID {
			pushedTo[p.To.ID]++
		}
	}
	assert.Equal(t, StateAlive, s.State("b"), "s learns a's group from a's push after its answer")
	assert.Zero(t, pushedTo["zz"], "a's push went to the ID the spoofed view named")
}
