package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncFrom is a view packet (MsgSync) from the member from naming ids
// alive in incarnation 0, and from itself.
func syncFrom(from string, to *Member, ids ...string) Packet {
	p := Packet{Kind: MsgSync, From: node(from), To: to.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: node(from), From: ID(from)}}}
	for _, id := range ids {
		p.Updates = append(p.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
	}
	return p
}

// announcedTo returns the members sent a MsgGossip whose first update is
// m's own Alive.
func announcedTo(m *Member, pk []Packet) []ID {
	var to []ID
	for _, p := range pk {
		if p.Kind == MsgGossip && len(p.Updates) > 0 && p.Updates[0].Kind == UpdateAlive && p.Updates[0].Node.ID == m.Self().ID {
			to = append(to, p.To.ID)
		}
	}
	return to
}

// A joiner sends its Alive, once, to every member of the view that
// answers its join but the seed that sent it, also when the view comes in
// two packets; a view that arrives later than a ProbeInterval after the
// answer (an anti-entropy exchange) announces nothing, and a joiner in
// ModeSWIM announces nothing.
func TestJoinAnnouncedToView(t *testing.T) {
	// joinedTo returns a joiner j in mode, after it joined through s and
	// s's view naming a and b arrived at 10 ms, and what it then sent.
	joinedTo := func(mode Mode) (*Member, []Packet) {
		j := newTest(t, "j", mode, nil)
		j.Tick(0)
		require.NoError(t, j.Join(0, []string{node("s").Addr}))
		drain(j)
		v := syncFrom("s", j, "a", "b")
		require.NoError(t, j.Step(10*time.Millisecond, &v))
		pk, _ := drain(j)
		return j, pk
	}
	j, pk := joinedTo(ModeDetector)
	assert.ElementsMatch(t, []ID{"a", "b"}, announcedTo(j, pk), "the first packet of the view")
	v2 := syncFrom("s", j, "b", "c")
	require.NoError(t, j.Step(11*time.Millisecond, &v2))
	pk, _ = drain(j)
	assert.Equal(t, []ID{"c"}, announcedTo(j, pk), "the second packet: only the member not yet told")
	assert.Equal(t, 3, j.Stats().JoinAnnouncements)

	late := syncFrom("b", j, "d")
	require.NoError(t, j.Step(2*time.Second, &late))
	pk, _ = drain(j)
	assert.Empty(t, announcedTo(j, pk), "a view long after the join is an exchange, not the join's answer")

	p, pk := joinedTo(ModeSWIM)
	assert.Empty(t, announcedTo(p, pk), "ModeSWIM")
}
