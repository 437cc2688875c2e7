package swim

import (
	"crypto/ed25519"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runNet runs the members from `from` to `until` in steps of 10 ms: each
// member is ticked at its deadlines and every packet is delivered to the
// member whose address it is sent to (packets to other addresses, such as
// a crashed member's, are lost). It returns the events of each member.
func runNet(t *testing.T, from, until time.Duration, ms ...*Member) map[*Member][]Event {
	t.Helper()
	byAddr := map[string]*Member{}
	for _, m := range ms {
		byAddr[m.Self().Addr] = m
	}
	ev := map[*Member][]Event{}
	for now := from; now <= until; now += 10 * time.Millisecond {
		for _, m := range ms {
			if at, ok := m.NextDeadline(); ok && at <= now {
				m.Tick(now)
			}
		}
		for range 20 { // deliver until quiet
			quiet := true
			for _, m := range ms {
				pk, e := drain(m)
				ev[m] = append(ev[m], e...)
				for i := range pk {
					if to := byAddr[pk[i].To.Addr]; to != nil {
						quiet = false
						require.NoError(t, to.Step(now, &pk[i]))
					}
				}
			}
			if quiet {
				break
			}
		}
	}
	return ev
}

func hasEvent(ev []Event, k EventKind) bool {
	for _, e := range ev {
		if e.Kind == k {
			return true
		}
	}
	return false
}

// killC declares c (at c:7946, incarnation 0) dead at every member given.
func killC(t *testing.T, at time.Duration, ms ...*Member) {
	t.Helper()
	for _, m := range ms {
		require.NoError(t, m.Step(at, gossipFrom("x", Update{Kind: UpdateDead, Node: node("c"), Incarnation: 0, From: "x"})))
		require.Equal(t, StateDead, m.State("c"))
	}
}

// restartC is member c restarted at addr (a new process at incarnation 0,
// its random source seeded with seed) that joins through the member at via
// at 2 s.
func restartC(t *testing.T, mode Mode, addr string, seed uint64, via string) *Member {
	t.Helper()
	m, err := New(Config{Self: Node{ID: "c", Addr: addr}, Mode: mode}, rand.New(rand.NewPCG(seed, 4)))
	require.NoError(t, err)
	require.NoError(t, m.Join(2*time.Second, []string{via}))
	return m
}

// A member that crashed and restarts on a new address (a pod, a container
// on another port) rejoins under its ID: it hears its old entry's
// declaration (Dead at 0) in the seed's answer, refutes it from its new
// address at 1, and its Alive(c, 1) replaces the entry everywhere
// (DeadReclaimTime 0, the default). Before, the restarted member read its
// ID at the old address as a conflicting claim and gave up, and the
// others refused it until the dead entry was reaped (15 min).
func TestDeadMemberReclaimsIDFromNewAddress(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
	killC(t, time.Second, s, o)
	c2 := restartC(t, ModeLifeguard, "c2:7946", 3, "s:7946")
	ev := runNet(t, 2*time.Second, 8*time.Second, s, o, c2)

	for _, m := range []*Member{s, o} {
		st, ok := m.Member("c", 8*time.Second)
		require.True(t, ok)
		assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
		assert.Equal(t, "c2:7946", st.Node.Addr, "%s", m.Self().ID)
		assert.Equal(t, Incarnation(1), st.Incarnation, "%s: one above the declaration", m.Self().ID)
		assert.Equal(t, 1, m.Stats().Reclaims, "%s", m.Self().ID)
		assert.True(t, hasEvent(ev[m], EventJoin), "%s reports the rejoin", m.Self().ID)
		assert.False(t, hasEvent(ev[m], EventConflict), "%s", m.Self().ID)
	}
	assert.False(t, hasEvent(ev[c2], EventConflict), "the restarted member is not refused")
	assert.Equal(t, 3, c2.NumAlive())
	assert.Equal(t, Incarnation(1), c2.Incarnation())
}

// With DeadReclaimTime, the ID stays with the dead entry for that long
// after the declaration: the restarted member's join is refused (an answer
// with the declaration only, no view) and retried, and is admitted at the
// first retry after the time has passed.
func TestReclaimWaitsForDeadReclaimTime(t *testing.T) {
	wait := func(c *Config) { c.DeadReclaimTime = new(20 * time.Second) }
	s := newTest(t, "s", ModeLifeguard, wait, "o", "c")
	o := newTest(t, "o", ModeLifeguard, wait, "s", "c")
	killC(t, time.Second, s, o)
	c2 := restartC(t, ModeLifeguard, "c2:7946", 3, "s:7946")
	ev := runNet(t, 2*time.Second, 20*time.Second, s, o, c2)
	st, _ := s.Member("c", 20*time.Second)
	assert.Equal(t, StateDead, st.State, "19 s after the declaration")
	assert.Equal(t, "c:7946", st.Node.Addr)
	assert.Positive(t, s.Stats().Conflicts)
	assert.Equal(t, 1, c2.NumAlive(), "not admitted, not given the view")
	assert.False(t, hasEvent(ev[c2], EventConflict), "a dead holder is no conflict for the claimant")

	runNet(t, 20*time.Second+10*time.Millisecond, 24*time.Second, s, o, c2)
	for _, m := range []*Member{s, o} {
		st, _ := m.Member("c", 24*time.Second)
		assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
		assert.Equal(t, "c2:7946", st.Node.Addr, "%s", m.Self().ID)
	}
	assert.Equal(t, 3, c2.NumAlive())
}

// A live or suspect holder is never displaced, whatever the incarnation
// and however long DeadReclaimTime: the claim is a conflict.
func TestReclaimNeverDisplacesLiveHolder(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	require.NoError(t, s.Step(time.Second, gossipFrom("o", Update{Kind: UpdateSuspect, Node: node("d"), From: "o"})))
	require.NoError(t, s.Step(time.Second, gossipFrom("o", Update{Kind: UpdateSuspect, Node: node("o"), From: "x"})))
	imp := Node{ID: "c", Addr: "c2:7946"}
	for _, id := range []string{"c", "o"} {
		imp.ID = ID(id)
		for _, u := range []Update{
			{Kind: UpdateAlive, Node: imp, Incarnation: 7, From: imp.ID},
			{Kind: UpdateDead, Node: imp, Incarnation: 7, From: imp.ID},
		} {
			require.NoError(t, s.Step(2*time.Second, gossipFrom("x", u)))
		}
		st, _ := s.Member(ID(id), 2*time.Second)
		assert.Equal(t, id+":7946", st.Node.Addr)
		assert.Equal(t, Incarnation(0), st.Incarnation)
	}
	assert.Equal(t, StateAlive, s.State("c"))
	assert.Equal(t, StateSuspect, s.State("o"))
	assert.Equal(t, 0, s.Stats().Reclaims)
	assert.Equal(t, 4, s.Stats().Conflicts)
}

// An update naming a dead member's ID at another address, not above the
// declared incarnation, is about a life this member does not hold and
// changes nothing. Before, the leave of a restarted member whose join had
// been refused (it left at 0, from its new address) turned the crashed
// member from Dead to Left at every member: a crash reported as a
// graceful leave.
func TestLeaveFromAnotherAddressKeepsDead(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	killC(t, time.Second, s)
	drain(s)
	c2 := Node{ID: "c", Addr: "c2:7946"}
	require.NoError(t, s.Step(2*time.Second, gossipFrom("o", Update{Kind: UpdateDead, Node: c2, Incarnation: 0, From: "c"})))
	st, _ := s.Member("c", 2*time.Second)
	assert.Equal(t, StateDead, st.State, "the crash stays a crash")
	assert.Equal(t, "c:7946", st.Node.Addr)
	_, ev := drain(s)
	assert.False(t, hasEvent(ev, EventLeave))

	// Neither does a suspicion above it: the entry stays at c's address.
	require.NoError(t, s.Step(2*time.Second, gossipFrom("o", Update{Kind: UpdateSuspect, Node: c2, Incarnation: 4, From: "o"})))
	st, _ = s.Member("c", 2*time.Second)
	assert.Equal(t, StateDead, st.State)
	assert.Equal(t, "c:7946", st.Node.Addr)

	// A leave from c's own address is still its leave.
	require.NoError(t, s.Step(3*time.Second, gossipFrom("o", Update{Kind: UpdateDead, Node: node("c"), Incarnation: 0, From: "c"})))
	assert.Equal(t, StateLeft, s.State("c"))
}

// Signed groups: the key bound to the ID outlives the death and only goes
// with the entry (reaping). A node on a new address reclaims the dead
// entry only with the same key (the member restarted with its identity);
// a forger's claim, unsigned or under its own key, is refused however long
// the member has been dead, until the entry is reaped. After that the ID
// is free and the first key seen is bound again (trust on first use,
// docs/algorithms.md, “SWIM: hostile and stale updates”).
func TestSignedReclaimNeedsTheBoundKey(t *testing.T) {
	retain := 10 * time.Minute
	newSigned := func(id, addr string, key ed25519.PrivateKey) *Member {
		m, err := New(Config{Self: Node{ID: ID(id), Addr: addr}, Mode: ModeLifeguard, SigningKey: key,
			DeadRetention: new(retain)}, rand.New(rand.NewPCG(5, 6)))
		require.NoError(t, err)
		return m
	}
	s := newSigned("s", "s:7946", testKey("s"))
	c := newSigned("c", "c:7946", testKey("c"))
	require.NoError(t, c.Join(0, []string{"s:7946"}))
	runNet(t, 0, time.Second, s, c)
	require.Equal(t, StateAlive, s.State("c"))
	killC(t, 2*time.Second, s)

	forger := newSigned("c", "f:7946", testKey("forger"))
	require.NoError(t, forger.Join(3*time.Second, []string{"s:7946"}))
	runNet(t, 3*time.Second, 9*time.Minute, s, forger)
	st, _ := s.Member("c", 9*time.Minute)
	assert.Equal(t, StateDead, st.State, "a forger does not take a dead member's ID")
	assert.Equal(t, "c:7946", st.Node.Addr)
	assert.Positive(t, s.Stats().Conflicts, "a valid proof under another key")
	assert.Equal(t, 0, s.Stats().Reclaims)
	assert.Equal(t, 1, forger.NumAlive(), "its joins are refused, never answered with the view")
	// An unsigned Alive above the declaration is refused too.
	require.NoError(t, s.Step(9*time.Minute, gossipFrom("x", Update{Kind: UpdateAlive, Node: Node{ID: "c", Addr: "f:7946"}, Incarnation: 3, From: "c"})))
	assert.Equal(t, StateDead, s.State("c"))

	// The member itself, restarted on a new port with its key, reclaims.
	c2 := newSigned("c", "c2:7946", testKey("c"))
	require.NoError(t, c2.Join(9*time.Minute, []string{"s:7946"}))
	runNet(t, 9*time.Minute, 9*time.Minute+5*time.Second, s, c2)
	st, _ = s.Member("c", 9*time.Minute+5*time.Second)
	assert.Equal(t, StateAlive, st.State, "the same identity reclaims its ID")
	assert.Equal(t, "c2:7946", st.Node.Addr)
	assert.Equal(t, 1, s.Stats().Reclaims)

	// Two revivals at one incarnation settle on the lower address
	// (reviveTie), but only under the bound key: a forger's Alive at c's
	// incarnation from a lower address, under its own key, moves nothing.
	at := 9*time.Minute + 5*time.Second
	low := Update{Kind: UpdateAlive, Node: Node{ID: "c", Addr: "a:7946"}, Incarnation: st.Incarnation, From: "c"}
	forged := low
	forged.Proof = Sign(testKey("forger"), forged)
	require.NoError(t, s.Step(at, gossipFrom("x", forged)))
	st, _ = s.Member("c", at)
	assert.Equal(t, "c2:7946", st.Node.Addr, "a forger's tie does not move the entry")
	own := low
	own.Proof = Sign(testKey("c"), own)
	require.NoError(t, s.Step(at, gossipFrom("x", own)))
	st, _ = s.Member("c", at)
	assert.Equal(t, "a:7946", st.Node.Addr, "a second revival under c's key, at a lower address, is kept")
	assert.Equal(t, StateAlive, st.State)

	// Once a dead entry is reaped, the ID is free: the forger's key is
	// bound on first use (Member.Trust closes this).
	s2 := newSigned("s", "s:7946", testKey("s"))
	c3 := newSigned("c", "c:7946", testKey("c"))
	require.NoError(t, c3.Join(0, []string{"s:7946"}))
	runNet(t, 0, time.Second, s2, c3)
	killC(t, 2*time.Second, s2)
	runNet(t, 2*time.Second, retain+3*time.Second, s2)
	require.Equal(t, State(0), s2.State("c"), "reaped")
	f2 := newSigned("c", "f:7946", testKey("forger"))
	require.NoError(t, f2.Join(retain+4*time.Second, []string{"s:7946"}))
	runNet(t, retain+4*time.Second, retain+6*time.Second, s2, f2)
	st, _ = s2.Member("c", retain+6*time.Second)
	assert.Equal(t, StateAlive, st.State)
	assert.Equal(t, "f:7946", st.Node.Addr)
}

// A restart refused within DeadReclaimTime refutes the declaration it is
// answered with (its incarnation is then above it) and, giving up, leaves:
// that leave must not turn the crashed member's Dead into Left at the
// restart's address.
func TestRefusedRestartLeaveKeepsDead(t *testing.T) {
	wait := func(c *Config) { c.DeadReclaimTime = new(20 * time.Second) }
	s := newTest(t, "s", ModeLifeguard, wait, "o", "c")
	o := newTest(t, "o", ModeLifeguard, wait, "s", "c")
	killC(t, time.Second, s, o)
	c2 := restartC(t, ModeLifeguard, "c2:7946", 3, "s:7946")
	runNet(t, 2*time.Second, 5*time.Second, s, o, c2)
	require.NoError(t, c2.Leave(5*time.Second))
	ev := runNet(t, 5*time.Second, 8*time.Second, s, o, c2)
	for _, m := range []*Member{s, o} {
		st, _ := m.Member("c", 8*time.Second)
		assert.Equal(t, StateDead, st.State, "%s: the crash stays a crash", m.Self().ID)
		assert.Equal(t, "c:7946", st.Node.Addr, "%s", m.Self().ID)
		assert.False(t, hasEvent(ev[m], EventLeave), "%s", m.Self().ID)
	}
}

// The pings of a stale node under a held ID (c at its old address, after
// a restart reclaimed c at c2) are no heartbeats of the holder: when c2
// crashes, the others declare it dead, in every mode, and c, hearing
// that declaration of its ID at c2, refutes it and takes its ID back.
func TestStaleNodeDoesNotKeepHolderAlive(t *testing.T) {
	for _, mode := range []Mode{ModeSWIM, ModeLifeguard, ModeDetector} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newTest(t, "s", mode, nil, "o", "c")
			o := newTest(t, "o", mode, nil, "s", "c")
			c := newTest(t, "c", mode, nil, "s", "o") // paused from the start
			killC(t, time.Second, s, o)
			c2 := restartC(t, mode, "c2:7946", 3, "o:7946")
			runNet(t, 2*time.Second, 10*time.Second, s, o, c2)
			require.Equal(t, StateAlive, s.State("c"))
			runNet(t, 10*time.Second, 60*time.Second, s, o, c) // c2 crashed, c resumed
			for _, m := range []*Member{s, o} {
				st, _ := m.Member("c", 60*time.Second)
				assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
				assert.Equal(t, "c:7946", st.Node.Addr, "%s: c2 crashed 50 s ago; c, resumed, took its ID back", m.Self().ID)
			}
		})
	}
}

// A member wrongly declared dead (paused) that resumes at its old address
// after a restart reclaimed its ID elsewhere hears at once that its ID is
// held at the new address (EventConflict): the holders answer its stale
// Alive with the entry they keep. Before, they ignored it silently and the
// resumed process ran on, believing itself a member, until an
// anti-entropy exchange told it (13.85 s after it resumed here).
func TestPausedMemberResumesAfterReclaim(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
	c := newTest(t, "c", ModeLifeguard, nil, "s", "o") // paused from the start
	killC(t, time.Second, s, o)
	c2 := restartC(t, ModeLifeguard, "c2:7946", 3, "o:7946")
	runNet(t, 2*time.Second, 10*time.Second, s, o, c2)
	ev := runNet(t, 10*time.Second, 13*time.Second, s, o, c, c2)
	for _, m := range []*Member{s, o} {
		st, _ := m.Member("c", 13*time.Second)
		assert.Equal(t, "c2:7946", st.Node.Addr)
	}
	assert.True(t, hasEvent(ev[c], EventConflict), "the resumed process hears it was replaced")
}

// Two restarts of one crashed member at two new addresses at once
// (flapping pods) both refute the declaration Dead(c, 0) with Alive at 1.
// The group must converge on one of them, and the other must hear a
// conflict. Before, the first Alive(c, 1) each member heard won there and
// the other, at the same incarnation, was ignored silently as stale: the
// group split for good (s held c at c2, o at c3), each claimant probed by
// half of it.
func TestTwoReclaimsAtOnceConverge(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
	killC(t, time.Second, s, o)
	c2 := restartC(t, ModeLifeguard, "c2:7946", 3, "s:7946")
	c3 := restartC(t, ModeLifeguard, "c3:7946", 5, "o:7946")
	ev := runNet(t, 2*time.Second, 30*time.Second, s, o, c2, c3)

	ss, _ := s.Member("c", 30*time.Second)
	os, _ := o.Member("c", 30*time.Second)
	assert.Equal(t, StateAlive, ss.State)
	assert.Equal(t, StateAlive, os.State)
	assert.Equal(t, ss.Node.Addr, os.Node.Addr, "s and o hold c at the same address")
	loser := c3
	if ss.Node.Addr == "c3:7946" {
		loser = c2
	}
	assert.True(t, hasEvent(ev[loser], EventConflict), "the claimant not kept hears the conflict")
}

// A member wrongly declared dead (paused) resumes at its old address while
// a restart of it reclaims the ID from a new one: both refute Dead(c, 0)
// with Alive(c, 1). The group converges on one address whatever the
// order of addresses (the lower), and the other node hears a conflict.
func TestPausedMemberResumesWhileReclaimed(t *testing.T) {
	for _, newAddr := range []string{"c2:7946", "b9:7946"} { // above and below c:7946
		t.Run(newAddr, func(t *testing.T) {
			s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
			o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
			c := newTest(t, "c", ModeLifeguard, nil, "s", "o") // paused from the start
			killC(t, time.Second, s, o)
			c2 := restartC(t, ModeLifeguard, newAddr, 3, "o:7946")
			ev := runNet(t, 2*time.Second, 30*time.Second, s, o, c, c2)

			want := min("c:7946", newAddr)
			for _, m := range []*Member{s, o} {
				st, _ := m.Member("c", 30*time.Second)
				assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
				assert.Equal(t, want, st.Node.Addr, "%s", m.Self().ID)
			}
			loser := c2
			if want == newAddr {
				loser = c
			}
			assert.True(t, hasEvent(ev[loser], EventConflict), "the node not kept hears the conflict")
		})
	}
}

// DeadReclaimTime protects a member wrongly declared dead that resumes at
// its old address within the window: a restart elsewhere, even at a lower
// address and at the same incarnation, does not displace it (the tie rule
// applies only to a revival that was itself past DeadReclaimTime).
func TestTieKeepsDeadReclaimTime(t *testing.T) {
	wait := func(c *Config) { c.DeadReclaimTime = new(20 * time.Second) }
	s := newTest(t, "s", ModeLifeguard, wait, "o", "c")
	o := newTest(t, "o", ModeLifeguard, wait, "s", "c")
	c := newTest(t, "c", ModeLifeguard, wait, "s", "o")
	killC(t, time.Second, s, o)
	runNet(t, time.Second, 3*time.Second, s, o, c) // c resumes at c:7946 and refutes
	require.Equal(t, StateAlive, s.State("c"))
	b := Node{ID: "c", Addr: "b9:7946"}
	for _, m := range []*Member{s, o} {
		require.NoError(t, m.Step(4*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: b, Incarnation: 1, From: "c"})))
		st, _ := m.Member("c", 4*time.Second)
		assert.Equal(t, "c:7946", st.Node.Addr, "%s: 3 s after the declaration, within DeadReclaimTime", m.Self().ID)
	}
}

// A member that heard the losing revival of a tie declared dead (Dead(c,
// z9, 1)) before it heard the winner's Alive at the same incarnation holds
// c dead while the rest hold it alive at b1: the winner, speaking to it,
// gets the declaration back, refutes it above, and every member ends on
// b1 alive (not held dead until the entry is reaped).
func TestTieLoserDeclaredDeadConverges(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "o", "c")
	o := newTest(t, "o", ModeLifeguard, nil, "s", "c")
	killC(t, time.Second, s, o)
	z := Node{ID: "c", Addr: "z9:7946"}
	b := Node{ID: "c", Addr: "b1:7946"}
	for _, m := range []*Member{s, o} {
		require.NoError(t, m.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: z, Incarnation: 1, From: "c"})))
	}
	require.NoError(t, s.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: b, Incarnation: 1, From: "c"})))
	require.NoError(t, o.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateDead, Node: z, Incarnation: 1, From: "x"})))
	require.NoError(t, o.Step(2*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: b, Incarnation: 1, From: "c"})))
	drain(s)
	drain(o)
	cb, err := New(Config{Self: b, Mode: ModeLifeguard, Incarnation: 1}, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	cb.Bootstrap([]Node{node("s"), node("o")})
	runNet(t, 2*time.Second, 90*time.Second, s, o, cb)
	for _, m := range []*Member{s, o} {
		st, _ := m.Member("c", 90*time.Second)
		assert.Equal(t, StateAlive, st.State, "%s", m.Self().ID)
		assert.Equal(t, "b1:7946", st.Node.Addr, "%s", m.Self().ID)
	}
}
