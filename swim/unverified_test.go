package swim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodTest returns a (peers b, c, d from Bootstrap) told by b of ghosts
// members it never heard from.
func floodTest(t *testing.T, mode Mode, ghosts int) *Member {
	a := newTest(t, "a", mode, nil, "b", "c", "d")
	var ups []Update
	for i := range ghosts {
		g := node(fmt.Sprintf("g%04d", i))
		ups = append(ups, Update{Kind: UpdateAlive, Node: g, From: g.ID})
	}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: ups}))
	drain(a)
	return a
}

// Members a was only told of take at most one probe in v+1, v = 3 the
// members it heard from (unverifiedProbeCost), count in the n of the log
// n formulas only up to the members heard from, and are held only up to
// the unverified quota: of 300 forged, 64 are held beside 3 known, which
// keep three quarters of the probes and the n of the suspicion timeout at
// 7, not 304. Every probe is acked by the known members, none by the
// ghosts.
func TestUnverifiedMembersDoNotDiluteProbing(t *testing.T) {
	a := floodTest(t, ModeSWIM, 300)
	assert.Equal(t, 3+unverifiedFloor+1, a.NumAlive())
	assert.Equal(t, 300-unverifiedFloor, a.Stats().MembersRefused)
	assert.Equal(t, 7, a.groupSize())
	known, ghosts := 0, 0
	tickUntil(a, 29*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind != MsgPing || p.To.ID == "" {
				continue
			}
			switch p.To.ID {
			case "b", "c", "d":
				known++
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
				drain(a)
			default:
				ghosts++
			}
		}
	})
	// 30 periods (0 s to 29 s): 8 probes to ghosts at most (the first,
	// then one in four), the rest to b, c and d.
	assert.Equal(t, 30, known+ghosts)
	assert.LessOrEqual(t, ghosts, 8)
	assert.GreaterOrEqual(t, known, 22)
	// A ghost probed and unanswered is suspected with the timeout of the
	// known group (α·T = 4 s for n ≤ 10), not of 304 members
	// (α·log10(304)·T = 9.9 s).
	for _, ps := range a.Members(29 * time.Second) {
		if ps.State == StateSuspect {
			assert.Equal(t, 4*time.Second, ps.SuspicionDeadline-ps.Since, ps.Node.ID)
		}
	}
}

// A member heard from directly and answering the challenge that draws
// (receipt.go) is verified and probed as any other. Its probe ping (one
// that asks for an ack without IDs, as a member's probe does) pays for
// the challenge: 44 bytes of Packet.Size, credited twice less the
// 42-byte ack it draws, against the challenge's 44.
func TestUnverifiedMemberVerifiedWhenHeard(t *testing.T) {
	a := floodTest(t, ModeSWIM, 4)
	require.Equal(t, 4, a.unverified)
	g0 := node("g0000")
	stepAnswered(t, a, time.Millisecond, &Packet{Kind: MsgPing, From: g0, To: node("a"), Ping: Ping{Seq: 9, MatchBySeq: true}})
	drain(a)
	assert.Equal(t, 3, a.unverified, "g0000 answered its challenge")
	assert.True(t, a.peers["g0000"].verified)
	a.Tick(0)
	drain(a)
	// Gossip relayed by several members does not verify.
	for _, from := range []string{"b", "c", "d"} {
		g := node("g0001")
		require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node(from), To: node("a"),
			Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	}
	assert.False(t, a.peers["g0001"].verified)
	assert.Equal(t, 3, a.unverified)
	// Its death takes it out of the count.
	require.NoError(t, a.Step(3*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateDead, Node: node("g0001"), From: "b"}}}))
	assert.Equal(t, 2, a.unverified)
}

// Forged gossip registers at most the unverified quota of members, however
// it comes: Alives relayed by every known member, the same ghosts from
// several relays, a view transfer from a member other than the join seed,
// and ghosts revived from the dead at a higher incarnation. A member that
// speaks for itself still enters with the quota full, and ghosts that die
// free their places.
func TestForgedGossipHeldWithinQuota(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	a.Tick(0)
	drain(a)
	ghost := func(i int) Node { return node(fmt.Sprintf("g%04d", i)) }
	alives := func(from, to int, inc Incarnation) []Update {
		var ups []Update
		for i := from; i < to; i++ {
			ups = append(ups, Update{Kind: UpdateAlive, Node: ghost(i), Incarnation: inc, From: ghost(i).ID})
		}
		return ups
	}
	known := 3
	held := func(msg string) {
		t.Helper()
		assert.LessOrEqual(t, a.unverified, unverifiedFloor, msg)
		assert.LessOrEqual(t, a.NumAlive(), 1+known+unverifiedFloor, msg)
	}
	now := time.Millisecond
	step := func(kind MessageKind, from string, ups []Update) {
		t.Helper()
		for i := 0; i < len(ups); i += 20 {
			require.NoError(t, a.Step(now, &Packet{Kind: kind, From: node(from), To: node("a"), Updates: ups[i:min(i+20, len(ups))]}))
			drain(a)
		}
		now += time.Millisecond
	}
	// Each known member relays 100 ghosts, the first 50 the same.
	for k, from := range []string{"b", "c", "d"} {
		step(MsgGossip, from, alives(0, 50, 0))
		step(MsgGossip, from, alives(100*(k+1), 100*(k+1)+50, 0))
		held("relayed by " + from)
	}
	// A view transfer from a member that did not answer a join.
	step(MsgSync, "b", alives(1000, 1200, 0))
	held("in a view")
	refused := a.Stats().MembersRefused
	assert.Equal(t, 50+3*50+200-unverifiedFloor, refused, "distinct ghosts over the quota")

	// A member speaking for itself enters with the quota full.
	r := node("real")
	stepAnswered(t, a, now, &Packet{Kind: MsgPing, From: r, To: node("a"), Ping: Ping{Seq: 1},
		Updates: []Update{{Kind: UpdateAlive, Node: r, From: r.ID}}})
	drain(a)
	assert.Equal(t, StateAlive, a.State("real"))
	assert.True(t, a.peers["real"].verified)
	known++

	// Ten ghosts declared dead free ten places; revived at a higher
	// incarnation while the quota is full, they stay dead.
	var dead []Update
	for i := range 10 {
		dead = append(dead, Update{Kind: UpdateDead, Node: ghost(i), From: "b"})
	}
	step(MsgGossip, "b", dead)
	require.Equal(t, unverifiedFloor-10, a.unverified)
	step(MsgGossip, "c", alives(2000, 2010, 0))
	assert.Equal(t, unverifiedFloor, a.unverified, "freed places taken by new ghosts")
	step(MsgGossip, "d", alives(0, 10, 1))
	for i := range 10 {
		assert.Equal(t, StateDead, a.State(ghost(i).ID), "revival over the quota")
	}
	held("after revivals")
	assert.Equal(t, refused+10, a.Stats().MembersRefused)
}

// The detector gate does not retry a member never heard from: its first
// failed probe suspects it, and the next probe goes to a known member:
// the gossip that announced a forged member gives it a detector, but its
// failure takes no second probe turn from the known ones.
func TestGateSkipsUnverified(t *testing.T) {
	a := floodTest(t, ModeDetector, 1)
	require.NotNil(t, a.peers["g0000"].det, "the gossip counts as a heartbeat")
	var probed []ID
	tickUntil(a, 20*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind != MsgPing || p.To.ID == "" {
				continue
			}
			probed = append(probed, p.To.ID)
			if p.To.ID != "g0000" {
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
				drain(a)
			}
		}
	})
	i := slices.Index(probed, "g0000")
	require.GreaterOrEqual(t, i, 0, "the ghost is probed")
	require.Less(t, i+1, len(probed))
	assert.NotEqual(t, ID("g0000"), probed[i+1], "no retry of the ghost")
	assert.Zero(t, a.Stats().GateDeferrals)
	assert.Equal(t, 1, a.Stats().Suspicions)
}

// The seed that answers a join vouches for the members of its view, not
// for what it relays by gossip in the same period: a flood of forged
// members relayed just after the join stays unverified.
func TestJoinSeedVouchesForItsViewOnly(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{node("b").Addr}))
	drain(a)
	c, g := node("c"), node("g")
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgSync, From: node("b"), To: node("a"), JoinToken: a.join.token,
		Updates: []Update{{Kind: UpdateAlive, Node: node("b"), From: "b"}, {Kind: UpdateAlive, Node: c, From: c.ID}}}))
	require.NoError(t, a.Step(2*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	drain(a)
	require.Equal(t, StateAlive, a.State("g"))
	assert.True(t, a.peers["c"].verified, "in the seed's view")
	assert.False(t, a.peers["g"].verified, "relayed by the seed")
}

// A view transfer from a member that is not at one of the join's seed
// addresses (a member that picked the joiner for its push-pull, or a
// forger racing the seed) neither answers the join nor vouches for the
// members it lists: the join stays pending until the seed's own view
// arrives, and the seed's view, of more members than the unverified quota,
// is held whole and verified. Were the first view from anywhere taken as
// the seed's, the forger's members would be verified and the seed's view
// cut at the quota, for good (a 150-member group joining through one seed
// in swim/sim never reached a full view).
func TestJoinSeedIsTheMemberJoinedThrough(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{node("s").Addr}))
	drain(a)
	view := func(from string, prefix string, n int) *Packet {
		ups := []Update{{Kind: UpdateAlive, Node: node(from), From: ID(from)}}
		for i := range n {
			p := node(fmt.Sprintf("%s%04d", prefix, i))
			ups = append(ups, Update{Kind: UpdateAlive, Node: p, From: p.ID})
		}
		return &Packet{Kind: MsgSync, From: node(from), To: node("a"), Updates: ups, JoinToken: a.join.token}
	}
	require.NoError(t, a.Step(time.Millisecond, view("x", "g", 10)))
	drain(a)
	assert.True(t, a.join.pending, "a view from a member not joined through answers no join")
	assert.False(t, a.peers["g0000"].verified, "listed by a member not joined through")
	require.NoError(t, a.Step(2*time.Millisecond, view("s", "r", 2*unverifiedFloor)))
	drain(a)
	assert.False(t, a.join.pending)
	assert.Equal(t, 1+1+10+1+2*unverifiedFloor, a.NumAlive(), "the seed's whole view")
	if p := a.peers[ID(fmt.Sprintf("r%04d", 2*unverifiedFloor-1))]; assert.NotNil(t, p) {
		assert.True(t, p.verified, "in the seed's view")
	}
	assert.Zero(t, a.Stats().MembersRefused)
}

// A seed that advertises an address other than the one dialled (behind a
// NAT or a load balancer) answers the join after joinFallbackPeriods
// periods of views from elsewhere, without vouching for its members.
func TestJoinAnsweredFromAnotherAddress(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil)
	require.NoError(t, a.Join(0, []string{"10.0.0.1:7946"}))
	drain(a)
	s, c := node("s"), node("c")
	view := &Packet{Kind: MsgSync, From: s, To: node("a"),
		Updates: []Update{{Kind: UpdateAlive, Node: s, From: s.ID}, {Kind: UpdateAlive, Node: c, From: c.ID}}}
	require.NoError(t, a.Step(time.Millisecond, view))
	drain(a)
	assert.True(t, a.join.pending, "the first view from another address")
	require.NoError(t, a.Step(time.Millisecond+3*time.Second-1, view))
	assert.True(t, a.join.pending, "within joinFallbackPeriods")
	require.NoError(t, a.Step(time.Millisecond+3*time.Second, view))
	assert.False(t, a.join.pending, "after joinFallbackPeriods")
	assert.Equal(t, StateAlive, a.State("c"))
	assert.False(t, a.peers["c"].verified, "no seed at a dialled address vouched")
}

// Once the MergeFilter refused a view from the address dialled, the seed
// answers from there: views from elsewhere, however long they come, do
// not answer the join (another member of the refused group would have
// completed it after joinFallbackPeriods); the seed's view, once
// accepted, does.
func TestJoinRefusedSeedNotAnsweredFromElsewhere(t *testing.T) {
	f := &filterLog{refuse: "x"}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter })
	require.NoError(t, a.Join(0, []string{"b:7946"}))
	drain(a)
	b, c, x := node("b"), node("c"), node("x")
	alive := func(n Node) Update { return Update{Kind: UpdateAlive, Node: n, From: n.ID} }
	refused := &Packet{Kind: MsgSync, From: b, To: node("a"), Updates: []Update{alive(b), alive(x)}, JoinToken: a.join.token}
	require.NoError(t, a.Step(time.Millisecond, refused))
	require.Equal(t, 1, a.Stats().MergesRefused)
	other := &Packet{Kind: MsgSync, From: c, To: node("a"), Updates: []Update{alive(c)}}
	for _, at := range []time.Duration{2 * time.Millisecond, 5 * time.Second, 10 * time.Second} {
		require.NoError(t, a.Step(at, other))
		drain(a)
		assert.True(t, a.Joining(), "a view from c at %v", at)
	}
	accepted := &Packet{Kind: MsgSync, From: b, To: node("a"), Updates: []Update{alive(b)}, JoinToken: a.join.token}
	require.NoError(t, a.Step(11*time.Second, accepted))
	assert.False(t, a.Joining())
}

// A packet the transport received from an address other than the one its
// sender claims (StepFromOtherSource) is not its sender speaking for
// itself: 300 ghosts each announcing itself that way are held within the
// unverified quota and stay unverified, where the same packets stepped as
// from their claimed addresses are each admitted, and stay unverified too
// until they answer a challenge.
func TestSelfAnnouncedFromOtherSourceHeldWithinQuota(t *testing.T) {
	for _, other := range []bool{true, false} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		for i := range 300 {
			g := node(fmt.Sprintf("g%04d", i))
			pkt := &Packet{Kind: MsgGossip, From: g, To: node("a"), Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}
			if other {
				require.NoError(t, a.StepFromOtherSource(time.Millisecond, pkt))
			} else {
				require.NoError(t, a.Step(time.Millisecond, pkt))
			}
			drain(a)
		}
		if other {
			assert.Equal(t, 1+3+unverifiedFloor, a.NumAlive())
			assert.Equal(t, unverifiedFloor, a.unverified, "none verified")
			assert.Equal(t, 300-unverifiedFloor, a.Stats().MembersRefused)
		} else {
			// Each admitted, heard, and challenged (receipt.go): none
			// verified before its challenge's ack, and at most
			// PullsPerPeriod challenges in the period.
			assert.Equal(t, 1+3+300, a.NumAlive())
			assert.Equal(t, 300, a.unverified)
			assert.Equal(t, DefaultPullsPerPeriod, a.Stats().VerifyChallenges)
			assert.Equal(t, 300-DefaultPullsPerPeriod, a.Stats().VerifyChallengesRefused)
		}
	}
}

// An ack that carries the probe's sequence number but comes neither from
// the target nor from a member asked to relay (ping-req) is not an answer:
// in plain mode (or from any key holder) it would mark a ghost answered
// and verified, and keep a crashed member alive. Sequence numbers are
// sequential, so one who has been probed once can predict the next.
func TestAckFromAnyoneIsNoAnswer(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	g := node("g")
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}}))
	drain(a)
	require.False(t, a.peers["g"].verified)
	forged := false
	tickUntil(a, 20*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind == MsgPing && p.To.ID == "g" && !forged {
				forged = true
				require.NoError(t, a.Step(at+time.Millisecond, &Packet{Kind: MsgAck, From: node("c"), To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
				drain(a)
			}
		}
	})
	require.True(t, forged, "g was probed")
	assert.False(t, a.peers["g"].verified, "verified by an ack from a member not asked")
	assert.NotEqual(t, StateAlive, a.State("g"), "kept alive by an ack from a member not asked")
}

// An unverified member that answers its probe gives the probe budget
// back (verify): the members of a group merging with this member's, all
// real, are probed in their round-robin turns, so that a round of 63
// members, 60 of them told of, takes 63 periods, each member probed once,
// and leaves them all verified. With the budget kept, the 60 would take
// one probe in four and the round about 240 periods (two merged groups of
// 80 took 6.3–7.6 minutes to hold each other whole in swim/sim).
func TestAnsweredUnverifiedProbesCostNothing(t *testing.T) {
	a := floodTest(t, ModeSWIM, 60)
	require.Equal(t, 60, a.unverified)
	probed := map[ID]int{}
	periods := 0
	tickUntil(a, 62*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind != MsgPing || p.To.ID == "" {
				continue
			}
			periods++
			probed[p.To.ID]++
			require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
			drain(a)
		}
	})
	assert.Equal(t, 63, periods)
	assert.Len(t, probed, 63, "every member once in 63 periods")
	assert.Zero(t, a.unverified)
}

// Unverified members that do not answer keep the budget: with half of 60
// told-of members answering, the unanswered probes over 40 periods are at
// most the budget's, the first and then one in v+1 = 4 (v the 3 members
// heard from, the budget growing as answering ones are verified), and
// the known members keep their turns.
func TestUnansweredUnverifiedProbesKeepTheBudget(t *testing.T) {
	a := floodTest(t, ModeSWIM, 60)
	answers := func(id ID) bool {
		var i int
		_, err := fmt.Sscanf(string(id), "g%04d", &i)
		return err != nil || i%2 == 0
	}
	unanswered, known := 0, 0
	tickUntil(a, 39*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind != MsgPing || p.To.ID == "" {
				continue
			}
			switch {
			case p.To.ID == "b" || p.To.ID == "c" || p.To.ID == "d":
				known++
			case !answers(p.To.ID):
				unanswered++
				continue
			}
			require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
			drain(a)
		}
	})
	assert.LessOrEqual(t, unanswered, 1+40/4)
	assert.Positive(t, unanswered)
	assert.GreaterOrEqual(t, known, 3, "every known member probed")
}

// The unverified quota is the size of the group this member knows, itself
// included: a member of a group of 71 holds the whole view of another
// group of 71, told of at once (two equal groups merging), where a quota
// of the 70 others held it one member short, each such member until the
// missing one probed it (in swim/sim, two merged groups of 80 held each
// other whole minutes later).
func TestQuotaHoldsAnEqualGroup(t *testing.T) {
	var peers []string
	for i := range 70 {
		peers = append(peers, fmt.Sprintf("p%02d", i))
	}
	a := newTest(t, "a", ModeLifeguard, nil, peers...)
	ups := []Update{{Kind: UpdateAlive, Node: node("p00"), From: "p00"}}
	for i := range 71 {
		o := node(fmt.Sprintf("o%02d", i))
		ups = append(ups, Update{Kind: UpdateAlive, Node: o, From: o.ID})
	}
	require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgSync, From: node("p00"), To: node("a"), Updates: ups}))
	drain(a)
	assert.Equal(t, 71, a.unverifiedQuota())
	assert.Equal(t, 1+70+71, a.NumAlive())
	assert.Zero(t, a.Stats().MembersRefused)
}
