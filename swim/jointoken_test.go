package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A view spoofed from the seed's address while a join is pending (issue
// 27, user39 F3: in the join challenge's round trip) answered the join and
// vouched for every member it listed, ghosts at victims' addresses that
// the joiner then sent its queue. A join carries a token drawn from the
// member's random source, and only a view that echoes it answers the join
// and vouches: the forged view, from the seed's address and under the
// seed's ID, answers nothing and verifies nothing; the seed's own answer,
// which echoes the token, does both.
func TestForgedSeedViewWithoutTokenVouchesForNothing(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	out, _ := drain(a)
	joins := only(t, out, MsgJoin)
	require.Len(t, joins, 1)
	token := joins[0].JoinToken
	require.NotZero(t, token, "the join carries a token")

	view := func(prefix string, n int, token uint64) *Packet {
		// The seed's entry states its range, as a format-2 writer's does:
		// one without reads as a format-1 seed's view (format1View).
		ups := []Update{{Kind: UpdateAlive, Node: node("s"), From: "s", Versions: DefaultVersions}}
		for i := range n {
			g := Node{ID: ID(fmt.Sprintf("%s%02d", prefix, i)), Addr: fmt.Sprintf("victim:%d", i+1)}
			ups = append(ups, Update{Kind: UpdateAlive, Node: g, From: g.ID})
		}
		return &Packet{Kind: MsgSync, From: node("s"), To: a.Self(), Updates: ups, JoinToken: token}
	}
	for _, forged := range []uint64{0, token ^ 1} {
		require.NoError(t, a.Step(time.Millisecond, view("g", 20, forged)))
		drain(a)
		assert.True(t, a.Joining(), "token %x: the forged view answers no join", forged)
		for i := range 20 {
			p := a.peers[ID(fmt.Sprintf("g%02d", i))]
			require.NotNil(t, p, "token %x: held, as gossip", forged)
			assert.False(t, p.verified, "token %x: g%02d vouched for", forged, i)
		}
	}

	// The seed's answer echoes the token (sendSync, through answerPull).
	s := newTest(t, "s", ModeLifeguard, func(c *Config) { c.Self.Addr = node("s").Addr }, "r00", "r01")
	s.join.noChallenge = true
	j := joins[0]
	j.To = s.Self()
	require.NoError(t, s.Step(time.Millisecond, &j))
	answer, _ := drain(s)
	syncs := only(t, answer, MsgSync)
	require.NotEmpty(t, syncs)
	for i := range syncs {
		assert.Equal(t, token, syncs[i].JoinToken, "the seed's view %d echoes the token", i)
		require.NoError(t, a.Step(2*time.Millisecond, &syncs[i]))
	}
	assert.False(t, a.Joining(), "the seed's view answers the join")
	for _, id := range []ID{"r00", "r01"} {
		if p := a.peers[id]; assert.NotNil(t, p) {
			assert.True(t, p.verified, "%s in the seed's view", id)
		}
	}
	// Within the seed's period, a forged view under the seed's ID still
	// vouches for nothing.
	require.NoError(t, a.Step(3*time.Millisecond, view("h", 5, 0)))
	for i := range 5 {
		assert.False(t, a.peers[ID(fmt.Sprintf("h%02d", i))].verified, "h%02d", i)
	}
}

// A view without the token from a seed's address whose entry for the
// seed states a version range (a format-2 writer's: a forger's, or a
// seed's push-pull) answers the join as a view from elsewhere does,
// after joinFallbackPeriods, and vouches for nothing; a later Join draws
// another token, and the old one's echo answers it no more.
func TestViewWithoutTokenAnswersLater(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	drain(a)
	first := a.join.token
	c := node("c")
	view := &Packet{Kind: MsgSync, From: node("s"), To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: node("s"), From: "s", Versions: DefaultVersions}, {Kind: UpdateAlive, Node: c, From: c.ID}}}
	require.NoError(t, a.Step(time.Millisecond, view))
	assert.True(t, a.Joining(), "at once")
	require.NoError(t, a.Step(time.Millisecond+3*a.cfg.ProbeInterval-1, view))
	assert.True(t, a.Joining(), "within joinFallbackPeriods")
	require.NoError(t, a.Step(time.Millisecond+3*a.cfg.ProbeInterval, view))
	assert.False(t, a.Joining(), "after joinFallbackPeriods")
	assert.False(t, a.peers["c"].verified, "no view with the token vouched")

	require.NoError(t, a.Join(10*time.Second, []string{node("s").Addr}))
	drain(a)
	require.NotEqual(t, first, a.join.token, "a token per Join")
	view.JoinToken = first
	require.NoError(t, a.Step(10*time.Second+time.Millisecond, view))
	assert.True(t, a.Joining(), "the previous join's token")
	view.JoinToken = a.join.token
	require.NoError(t, a.Step(10*time.Second+2*time.Millisecond, view))
	assert.False(t, a.Joining(), "this join's token")
}

// A view without the token from the seed's address, before the seed's
// own, does not start the seed's period (noteJoinSeed): the seed's view
// that echoes the token, coming 1.5 protocol periods later, still vouches
// for the members it lists. Had the token-less view noted the seed, the
// period would have ended before the seed's view came, and r00 would be
// held unverified.
func TestTokenlessSeedViewStartsNoSeedPeriod(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	out, _ := drain(a)
	joins := only(t, out, MsgJoin)
	require.Len(t, joins, 1)
	s := Update{Kind: UpdateAlive, Node: node("s"), From: "s", Versions: DefaultVersions}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgSync, From: node("s"), To: a.Self(), Updates: []Update{s}}))
	require.True(t, a.Joining())
	r := node("r00")
	at := time.Millisecond + 3*a.cfg.ProbeInterval/2
	require.NoError(t, a.Step(at, &Packet{Kind: MsgSync, From: node("s"), To: a.Self(), JoinToken: joins[0].JoinToken,
		Updates: []Update{s, {Kind: UpdateAlive, Node: r, From: r.ID}}}))
	assert.False(t, a.Joining(), "the seed's view answers the join")
	if p := a.peers["r00"]; assert.NotNil(t, p) {
		assert.True(t, p.verified, "r00 in the seed's view")
	}
}

// Only the seeds are told the join's token (joinTokenFor): a view request
// that a member joining another group (running, with a view of its own)
// sends an unknown sender, at an address anyone may claim, carries none,
// so a forger at that address cannot echo it; the joins to the seed do.
func TestJoinTokenOnlyToSeeds(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	a.Tick(0)
	drain(a)
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	drain(a)
	x := node("x")
	// large enough on the wire to pay for the request (viewretry.go)
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: x, To: a.Self(), WireLen: 1000}))
	out, _ := drain(a)
	var asked int
	for _, p := range only(t, out, MsgJoin) {
		if p.To.Addr == x.Addr {
			asked++
			assert.Zero(t, p.JoinToken, "the view request to x")
		}
	}
	require.Equal(t, 1, asked, "a asks x for its view")
	tickUntil(a, time.Second, func(_ time.Duration, pk []Packet, _ []Event) {
		for _, p := range only(t, pk, MsgJoin) {
			if p.To.Addr == node("s").Addr {
				assert.Equal(t, a.join.token, p.JoinToken, "a join resent to s")
			} else {
				assert.Zero(t, p.JoinToken, "a join to %s", p.To.Addr)
			}
		}
	})
}
