package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Joins and wire format 1, which has no field for a join token (usr28
// F2: such joins waited three periods for the fallback, fdswim's shorter
// first attempts warned that no member answered, and the joiner held
// the view's members unverified and suspected one at its first probes).

// A view from a seed's address whose entry for the seed states no
// version range (a format-1 writer's; every format-2 writer states one)
// answers the join at once and vouches for nothing; the seed's own view
// echoing the token, should it come within joinFallbackPeriods (a forger
// wrote the first), still vouches for what it lists; one after that
// does not.
func TestFormat1SeedViewAnswersAtOnce(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	out, _ := drain(a)
	joins := only(t, out, MsgJoin)
	require.Len(t, joins, 1)
	s := Update{Kind: UpdateAlive, Node: node("s"), From: "s"} // no range: format 1
	c := node("c")
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgSync, From: node("s"), To: a.Self(),
		Updates: []Update{s, {Kind: UpdateAlive, Node: c, From: c.ID}}}))
	assert.False(t, a.Joining(), "the format-1 seed's view answers at once")
	if p := a.peers["c"]; assert.NotNil(t, p) {
		assert.False(t, p.verified, "c: a view without the token vouches for nothing")
	}
	s.Versions = DefaultVersions
	r := node("r00")
	at := time.Millisecond + 3*a.cfg.ProbeInterval - 1
	require.NoError(t, a.Step(at, &Packet{Kind: MsgSync, From: node("s"), To: a.Self(), JoinToken: joins[0].JoinToken,
		Updates: []Update{s, {Kind: UpdateAlive, Node: r, From: r.ID}}}))
	if p := a.peers["r00"]; assert.NotNil(t, p) {
		assert.True(t, p.verified, "r00 in the seed's view echoing the token, within joinFallbackPeriods")
	}
	// A view from another address (not joined through) without the range
	// does not answer a new join at once.
	require.NoError(t, a.Join(10*time.Second, []string{node("s").Addr}))
	drain(a)
	x := Update{Kind: UpdateAlive, Node: node("x"), From: "x"}
	require.NoError(t, a.Step(10*time.Second+time.Millisecond, &Packet{Kind: MsgSync, From: node("x"), To: a.Self(), Updates: []Update{x}}))
	assert.True(t, a.Joining(), "a view from elsewhere waits for joinFallbackPeriods")
	// After joinFallbackPeriods from a tokenless answer, the token's echo
	// no longer names a seed.
	require.NoError(t, a.Step(10*time.Second+2*time.Millisecond, &Packet{Kind: MsgSync, From: node("s"), To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: node("s"), From: "s"}}}))
	require.False(t, a.Joining())
	q := node("q00")
	require.NoError(t, a.Step(10*time.Second+2*time.Millisecond+3*a.cfg.ProbeInterval, &Packet{Kind: MsgSync, From: node("s"), To: a.Self(),
		JoinToken: a.join.token, Updates: []Update{s, {Kind: UpdateAlive, Node: q, From: q.ID}}}))
	if p := a.peers["q00"]; assert.NotNil(t, p) {
		assert.False(t, p.verified, "q00: the token's echo after joinFallbackPeriods")
	}
}

// A member whose joins carry no token (Config.JoinTokenless: it writes
// format 1) takes a view without one from a seed's address as its seed's
// answer: it answers the join at once and vouches for what it lists, so
// that the joiner's first probes go to verified members. From another
// address, it waits as any joiner does.
func TestJoinTokenlessTakesSeedView(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.JoinTokenless = true })
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	drain(a)
	x := Update{Kind: UpdateAlive, Node: node("x"), From: "x", Versions: DefaultVersions}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgSync, From: node("x"), To: a.Self(), Updates: []Update{x}}))
	assert.True(t, a.Joining(), "a view from an address not joined through")
	s := Update{Kind: UpdateAlive, Node: node("s"), From: "s", Versions: DefaultVersions} // a format-2 seed, answering a join without token
	c := node("c")
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgSync, From: node("s"), To: a.Self(),
		Updates: []Update{s, {Kind: UpdateAlive, Node: c, From: c.ID}}}))
	assert.False(t, a.Joining(), "the seed's view answers at once")
	for _, id := range []ID{"s", "c"} {
		if p := a.peers[id]; assert.NotNil(t, p, "%s", id) {
			assert.True(t, p.verified, "%s in the seed's view", id)
		}
	}
	assert.False(t, a.peers["x"].verified, "x, from elsewhere")
}
