package swim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests for messages that are well formed but stale, replayed or crafted
// (issue 12). Each one failed before the rule it tests was added; see
// docs/algorithms.md, “SWIM: hostile and stale updates”.

func gossipFrom(from string, ups ...Update) *Packet {
	return &Packet{Kind: MsgGossip, From: node(from), Updates: ups}
}

// An accusation at (or near) the incarnation limit cannot be refuted: the
// refutation saturates at the same number and is ignored. Such an
// accusation is implausible, far above anything heard from the accused, and
// is refused by the accused and by everyone else.
func TestAccusationAtIncarnationLimitRefused(t *testing.T) {
	for _, inc := range []Incarnation{MaxIncarnation, MaxIncarnation - 1, MaxIncarnation - 2, MaxIncarnationJump + 1} {
		for _, k := range []UpdateKind{UpdateSuspect, UpdateDead} {
			a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
			require.NoError(t, a.Step(time.Second, gossipFrom("b", Update{Kind: k, Node: node("a"), Incarnation: inc, From: "b"})))
			assert.Equal(t, Incarnation(0), a.Incarnation(), "%v at %d: the accused does not jump to the limit", k, inc)

			c := newTest(t, "c", ModeLifeguard, nil, "a", "b")
			require.NoError(t, c.Step(time.Second, gossipFrom("b", Update{Kind: k, Node: node("a"), Incarnation: inc, From: "b"})))
			st, _ := c.Member("a", time.Second)
			assert.Equal(t, StateAlive, st.State, "%v at %d: a third member keeps the accused alive", k, inc)
			assert.Equal(t, Incarnation(0), st.Incarnation)
		}
	}
	// An Alive claiming the limit, about oneself or about another member.
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
	require.NoError(t, a.Step(time.Second, gossipFrom("b",
		Update{Kind: UpdateAlive, Node: node("a"), Incarnation: MaxIncarnation, From: "a"},
		Update{Kind: UpdateAlive, Node: node("c"), Incarnation: MaxIncarnation, From: "c"})))
	assert.Equal(t, Incarnation(0), a.Incarnation())
	st, _ := a.Member("c", time.Second)
	assert.Equal(t, Incarnation(0), st.Incarnation)

	// Within the plausible range an accusation is refuted as before, and
	// the refutation can be refuted again: the limit is never reached.
	require.NoError(t, a.Step(2*time.Second, gossipFrom("b", Update{Kind: UpdateSuspect, Node: node("a"), Incarnation: maxAccusationJump, From: "b"})))
	assert.Equal(t, maxAccusationJump+1, a.Incarnation())
}

// usr27's F1: a stranger's one datagram carried Suspect(b) exactly
// MaxIncarnationJump above the incarnation a stored, and a took it; b
// refuted one above, and c, which never saw the accusation and stored b
// at 0, refused b's refutation as implausible for good, so that its next
// false suspicion of b held b dead while a and b went on. An accusation
// may claim at most maxAccusationJump, half the window: refused above,
// and the refutation of one accepted at the bound is accepted by a member
// that never saw it.
func TestRefutationOfAcceptedAccusationAcceptedEverywhere(t *testing.T) {
	for _, k := range []UpdateKind{UpdateSuspect, UpdateDead} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c")
		require.NoError(t, a.Step(time.Second, gossipFrom("c", Update{Kind: k, Node: node("b"), Incarnation: maxAccusationJump + 1, From: "c"})))
		assert.Equal(t, StateAlive, a.State("b"), "%v one above the accusation bound", k)
		require.NoError(t, a.Step(time.Second, gossipFrom("c", Update{Kind: k, Node: node("b"), Incarnation: maxAccusationJump, From: "c"})))
		st, _ := a.Member("b", time.Second)
		assert.Equal(t, maxAccusationJump, st.Incarnation, "%v at the bound is taken", k)

		b := newTest(t, "b", ModeLifeguard, nil, "a", "c")
		require.NoError(t, b.Step(time.Second, gossipFrom("c", Update{Kind: k, Node: node("b"), Incarnation: maxAccusationJump + 1, From: "c"})))
		assert.Equal(t, Incarnation(0), b.Incarnation(), "%v above the bound: not refuted, as nobody takes it", k)
		require.NoError(t, b.Step(time.Second, gossipFrom("c", Update{Kind: k, Node: node("b"), Incarnation: maxAccusationJump, From: "c"})))
		refutation := b.Incarnation()
		require.Equal(t, maxAccusationJump+1, refutation)

		c := newTest(t, "c", ModeLifeguard, nil, "a", "b")
		before := c.Stats().Implausible
		require.NoError(t, c.Step(time.Second, gossipFrom("b", Update{Kind: UpdateAlive, Node: node("b"), Incarnation: refutation, From: "b"})))
		st, _ = c.Member("b", time.Second)
		assert.Equal(t, refutation, st.Incarnation, "%v: b's refutation is taken by a member that never saw the accusation", k)
		assert.Equal(t, before, c.Stats().Implausible)
	}
}

// The stored incarnation never decreases, in any state: Dead@10 heard over
// Dead@1 stores 10, so a late Alive@2 (older than the death) does not bring
// the member back.
func TestStoredIncarnationMonotone(t *testing.T) {
	b := newTest(t, "b", ModeLifeguard, nil, "x", "c")
	require.NoError(t, b.Step(time.Second, gossipFrom("c", Update{Kind: UpdateDead, Node: node("x"), Incarnation: 1, From: "c"})))
	require.NoError(t, b.Step(time.Second, gossipFrom("c", Update{Kind: UpdateDead, Node: node("x"), Incarnation: 10, From: "c"})))
	st, _ := b.Member("x", time.Second)
	assert.Equal(t, Incarnation(10), st.Incarnation)
	require.NoError(t, b.Step(2*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 2, From: "x"})))
	assert.Equal(t, StateDead, b.State("x"), "an Alive older than the death is stale")

	// The same for Left: a leave at 10 over a leave at 1.
	l := newTest(t, "l", ModeLifeguard, nil, "x", "c")
	require.NoError(t, l.Step(time.Second, gossipFrom("c", Update{Kind: UpdateDead, Node: node("x"), Incarnation: 1, From: "x"})))
	require.NoError(t, l.Step(time.Second, gossipFrom("c", Update{Kind: UpdateDead, Node: node("x"), Incarnation: 10, From: "x"})))
	st, _ = l.Member("x", time.Second)
	assert.Equal(t, Incarnation(10), st.Incarnation)
	require.NoError(t, l.Step(2*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node("x"), Incarnation: 2, From: "x"})))
	assert.Equal(t, StateLeft, l.State("x"))
}

// A member holding Dead{x, 100} that hears a stale Alive{x, 0} relayed by
// gossip sends the accusation back to whoever relayed it and to x itself,
// at once, in every mode: x refutes without waiting for a reconnect ping.
func TestStaleAliveSendsAccusationBack(t *testing.T) {
	for _, mode := range []Mode{ModeSWIM, ModeLifeguard, ModeDetector} {
		for _, held := range []UpdateKind{UpdateSuspect, UpdateDead} {
			to := accusationSentTo(t, mode, held, 100, 0)
			assert.True(t, to["c"], "%v, %v: the source hears the accusation", mode, held)
			assert.True(t, to["x"], "%v, %v: the accused hears the accusation", mode, held)
		}
	}
}

// accusationSentTo has b hold held(x, inc) from d, then hear Alive(x, alive)
// relayed by c, and returns the members b sent the accusation to.
func accusationSentTo(t *testing.T, mode Mode, held UpdateKind, inc, alive Incarnation) map[ID]bool {
	t.Helper()
	b := newTest(t, "b", mode, nil, "x", "c", "d")
	require.NoError(t, b.Step(time.Second, gossipFrom("d", Update{Kind: held, Node: node("x"), Incarnation: inc, From: "d"})))
	drain(b)
	require.NoError(t, b.Step(2*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node("x"), Incarnation: alive, From: "x"})))
	pk, _ := drain(b)
	to := map[ID]bool{}
	for _, p := range pk {
		if hasUpdate(p, held, "x", inc) {
			to[p.To.ID] = true
		}
	}
	return to
}

// Suspect and Dead about others in a view transfer (a join answer or a
// push-pull) enter as this member's own suspicion, which it disseminates,
// never as an instant death: the accused hears it and can refute.
func TestViewTransferAccusationBecomesSuspicion(t *testing.T) {
	for _, mode := range []Mode{ModeSWIM, ModeLifeguard} {
		for _, k := range []UpdateKind{UpdateSuspect, UpdateDead} {
			b := newTest(t, "b", mode, nil, "x", "c")
			sync := &Packet{Kind: MsgSync, From: node("c"), To: node("b"),
				Updates: []Update{{Kind: k, Node: node("x"), Incarnation: 0, From: "c"}}}
			require.NoError(t, b.Step(time.Second, sync))
			assert.Equal(t, StateSuspect, b.State("x"), "%v, %v", mode, k)
			// x hears it: in plain SWIM the suspicion is gossiped, in the
			// Lifeguard modes packets to x carry it (hearsay.go), and
			// the rest of the group once b's own probe of x fails.
			pk, _ := advance(b, 3*time.Second)
			var carried bool
			for _, p := range pk {
				carried = carried || hasUpdate(p, UpdateSuspect, "x", 0)
			}
			assert.True(t, carried, "%v, %v: x hears the suspicion", mode, k)
		}
	}
}

// Dead and left members are reaped after DeadRetention, and the table is
// capped at MaxMembers: a flood of fake Alive updates cannot grow it
// without limit.
func TestReapAndMemberCap(t *testing.T) {
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.DeadRetention = new(time.Minute); c.MaxMembers = 8 }, "x", "y", "c")
	require.NoError(t, b.Step(time.Second, gossipFrom("c",
		Update{Kind: UpdateDead, Node: node("x"), Incarnation: 0, From: "c"},
		Update{Kind: UpdateDead, Node: node("y"), Incarnation: 0, From: "y"})))
	has := func(now time.Duration, id ID) bool {
		for _, st := range b.Members(now) {
			if st.Node.ID == id {
				return true
			}
		}
		return false
	}
	advance(b, 30*time.Second)
	assert.True(t, has(30*time.Second, "x") && has(30*time.Second, "y"), "kept until the retention ends")
	advance(b, 70*time.Second)
	assert.False(t, has(70*time.Second, "x"), "x (dead) reaped")
	assert.False(t, has(70*time.Second, "y"), "y (left) reaped")
	assert.Equal(t, State(0), b.State("x"), "unknown once reaped")

	for i := range 100 {
		id := "fake" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		require.NoError(t, b.Step(71*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})))
	}
	assert.LessOrEqual(t, len(b.Members(71*time.Second)), 8)
}

// A member that joins with an ID already held by a live member at another
// address is refused: the seed keeps the original, sends the joiner no view
// and emits EventConflict; the joiner learns of the conflict from the
// answer and emits EventConflict too.
func TestIDConflictAtJoin(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "b", "c")
	imp := Node{ID: "b", Addr: "impostor:7946"}
	j, err := New(Config{Self: imp, Mode: ModeLifeguard}, newTestRand())
	require.NoError(t, err)
	require.NoError(t, j.Join(0, []string{"s:7946"}))
	pk, _ := drain(j)
	require.Len(t, pk, 1)
	require.NoError(t, s.Step(time.Second, &pk[0]))
	st, _ := s.Member("b", time.Second)
	assert.Equal(t, node("b"), st.Node, "the original is kept")
	assert.Equal(t, StateAlive, st.State)
	out, ev := drain(s)
	require.Len(t, out, 1, "a refusal, not the view")
	var conflict bool
	for _, e := range ev {
		conflict = conflict || e.Kind == EventConflict
	}
	assert.True(t, conflict, "the seed reports the conflict")
	_, refused := s.JoinConflict()
	assert.False(t, refused, "the seed's own join is not refused")
	for _, u := range out[0].Updates {
		assert.NotEqual(t, ID("c"), u.Node.ID, "the joiner is not given the view")
	}
	require.NoError(t, j.Step(time.Second, &out[0]))
	_, ev = drain(j)
	conflict = false
	for _, e := range ev {
		conflict = conflict || e.Kind == EventConflict
	}
	assert.True(t, conflict, "the joiner reports the conflict")
	assert.Equal(t, 1, j.NumAlive(), "the joiner did not join")
	holder, refused := j.JoinConflict()
	assert.True(t, refused)
	assert.Equal(t, node("b"), holder)

	// The impostor's leave (its own Dead, at its own address) does not
	// remove the original.
	require.NoError(t, s.Step(2*time.Second, gossipFrom("c", Update{Kind: UpdateDead, Node: imp, Incarnation: 0, From: "b"})))
	assert.Equal(t, StateAlive, s.State("b"))
}

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// A member that believes every other member dead (it declared them while
// its probes were blocked, and they declared it) asks a dead member for its
// view, from the next period on and backing off (isolated), instead of
// waiting for a reconnect ping to pick the right member (schedule 316 of the adversarial checker: after the faults
// stopped, two such members stayed apart for over 40 s).
func TestIsolatedMemberAsksForViews(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, nil, "b", "c")
	for _, id := range []string{"b", "c"} {
		a.apply(0, Update{Kind: UpdateDead, Node: node(id), Incarnation: 0, From: "a"}, false)
	}
	pk, _ := advance(a, 3*time.Second)
	joins := only(t, pk, MsgJoin)
	assert.Len(t, joins, 3, "view requests at 0, 1 and 3 s (isolated: backing off)")
	for _, j := range joins {
		assert.True(t, hasUpdate(j, UpdateAlive, "a", 0))
	}
	// The answer of a live member holding a dead: it sends the accusation
	// back, and a refutes.
	b := newTest(t, "b", ModeSWIM, nil, "a", "c")
	b.apply(0, Update{Kind: UpdateDead, Node: node("a"), Incarnation: 0, From: "b"}, false)
	require.NoError(t, b.Step(4*time.Second, &joins[0]))
	out, _ := drain(b)
	for i := range out {
		require.NoError(t, a.Step(4*time.Second, &out[i]))
	}
	assert.Equal(t, Incarnation(1), a.Incarnation(), "a refuted")
}

// The common case of a stale Alive is at the accusation's own incarnation:
// x, cut off, was suspected and declared dead at its current incarnation j
// and never heard of it, so its Alive(x, j), relayed by a member that
// missed the death, reaches b, which holds Dead(x, j). b sends the
// accusation back to x and to the relay, as for an older Alive; before,
// only an Alive strictly older than the accusation was answered, and x
// learnt of its death only from a reconnect ping.
func TestEqualIncarnationAliveSendsAccusationBack(t *testing.T) {
	for _, held := range []UpdateKind{UpdateSuspect, UpdateDead} {
		to := accusationSentTo(t, ModeLifeguard, held, 7, 7)
		assert.True(t, to["c"], "%v: the relay hears the accusation", held)
		assert.True(t, to["x"], "%v: the accused hears the accusation", held)
	}
}

// A view full of forged members (alive, never answering) does not keep a
// genuine member out: one that speaks for itself (its own packet carries
// its Alive) takes the place of a member that never answered a ping of
// this one, while a forged Alive relayed by others is still refused and a
// member that answered is never evicted. The genuine member is not
// refused until a fake is declared dead (the schedule checker's case: a
// member evicted while held dead must be known again when it comes back).
func TestFullViewAdmitsMemberSpeakingForItself(t *testing.T) {
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.MaxMembers = 6 }, "c")
	// c answers b's probes.
	for now := time.Duration(0); now < 6*time.Second; now += 100 * time.Millisecond {
		pk, _ := advance(b, now)
		for _, p := range pk {
			if p.Kind == MsgPing && p.To.ID == "c" {
				require.NoError(t, b.Step(now, &Packet{Kind: MsgAck, From: node("c"), To: node("b"), Ack: Ack{Seq: p.Ping.Seq}}))
			}
		}
	}
	for i := range 10 {
		id := "fake" + string(rune('a'+i))
		require.NoError(t, b.Step(6*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})))
	}
	require.Len(t, b.Members(6*time.Second), 6, "full")
	require.NoError(t, b.Step(6*time.Second, gossipFrom("c", Update{Kind: UpdateAlive, Node: node("relayed"), From: "relayed"})))
	assert.Equal(t, State(0), b.State("relayed"), "a relayed newcomer does not evict")

	require.NoError(t, b.Step(6*time.Second, &Packet{Kind: MsgPing, From: node("x"), To: node("b"), Ping: Ping{Seq: 1},
		Updates: []Update{{Kind: UpdateAlive, Node: node("x"), From: "x"}}}))
	assert.Equal(t, StateAlive, b.State("x"), "the genuine member speaking for itself is admitted")
	assert.Equal(t, StateAlive, b.State("c"), "the member that answered stays")
	assert.Len(t, b.Members(6*time.Second), 6)
	assert.Equal(t, b.NumAlive(), 6)

	// c, which answered, is held dead (a partition): relayed fakes do not
	// evict it, so it stays a reconnect candidate and the two sides can
	// meet again.
	require.NoError(t, b.Step(7*time.Second, gossipFrom("x", Update{Kind: UpdateDead, Node: node("c"), From: "x"})))
	for i := range 10 {
		id := "late" + string(rune('a'+i))
		require.NoError(t, b.Step(7*time.Second, gossipFrom("x", Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})))
	}
	assert.Equal(t, StateDead, b.State("c"), "not evicted by relayed fakes")
}

// Ping-req intermediates are chosen first among members that have answered
// this member's own pings: a member known only from others' word (a forged
// Alive, a flood of fake IDs) may not exist, and in the Lifeguard modes its
// missing nack counts against this member's local health. Found by the
// schedule checker: under a flood of fakes, most intermediates were fakes,
// every failed probe cost up to k missed nacks, the local health
// multiplier climbed to its maximum (8 s periods), and fakes and crashed
// members were declared dead later than the checker's bound.
func TestPingReqIntermediatesAnsweredFirst(t *testing.T) {
	peers := []string{"b", "c", "d", "e"}
	var fakes []string
	for i := range 10 {
		fakes = append(fakes, fmt.Sprint("f", i))
	}
	a := newTest(t, "a", ModeLifeguard, nil, append(slices.Clone(peers), fakes...)...)
	for _, id := range peers {
		a.peers[ID(id)].answered = true
	}
	// b, c, d and e answer a's pings (so they stay alive: a suspect is
	// no intermediate), the fakes never do.
	var reqs []Packet
	tickUntil(a, 30*time.Second, func(at time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			if p.Kind == MsgPing && slices.Contains(peers, string(p.To.ID)) {
				require.NoError(t, a.Step(at, &Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}))
			}
		}
		reqs = append(reqs, only(t, pk, MsgPingReq)...)
	})
	require.NotEmpty(t, reqs)
	for _, p := range reqs {
		assert.Contains(t, peers, string(p.To.ID), "ping-req for %s sent to a member that never answered", p.PingReq.Target.ID)
	}
	// With fewer answered members than IndirectChecks, the rest are
	// drawn from the others.
	b := newTest(t, "b", ModeLifeguard, nil, "c", "d", "e")
	b.peers["c"].answered = true
	pk, _ := advance(b, 3*time.Second)
	others := 0
	for _, p := range only(t, pk, MsgPingReq) {
		if p.To.ID != "c" {
			others++
		}
	}
	assert.Positive(t, others, "members that never answered still serve when too few did")
}

// A member that joins through the very member holding its ID is refused
// the same way, and learns of it: the refusal comes From its own ID (at
// the holder's address), which it must read as the conflict rather than
// drop as its own packet, so that its join does not time out without a
// word.
func TestIDConflictAtJoinThroughHolder(t *testing.T) {
	s := newTest(t, "s", ModeLifeguard, nil, "b")
	imp := Node{ID: "s", Addr: "impostor:7946"}
	j, err := New(Config{Self: imp, Mode: ModeLifeguard}, newTestRand())
	require.NoError(t, err)
	require.NoError(t, j.Join(0, []string{"s:7946"}))
	pk, _ := drain(j)
	require.Len(t, pk, 1)
	require.NoError(t, s.Step(time.Second, &pk[0]))
	out, _ := drain(s)
	require.Len(t, out, 1, "a refusal, not the view")
	require.NoError(t, j.Step(time.Second, &out[0]))
	_, ev := drain(j)
	var conflict []Event
	for _, e := range ev {
		if e.Kind == EventConflict {
			conflict = append(conflict, e)
		}
	}
	require.Len(t, conflict, 1, "the joiner reports the conflict")
	assert.Equal(t, node("s"), conflict[0].Node, "the holder")
	assert.Equal(t, imp, conflict[0].Held)
	assert.Equal(t, 1, j.Stats().Conflicts)
	assert.Equal(t, 1, j.NumAlive(), "the joiner did not join")
	holder, refused := j.JoinConflict()
	assert.True(t, refused)
	assert.Equal(t, node("s"), holder)
	_, refused = s.JoinConflict()
	assert.False(t, refused, "the holder's own join is not refused")
	pk, _ = advance(j, 3*time.Second)
	var joins int
	for _, p := range pk {
		if p.Kind == MsgJoin {
			joins++
		}
	}
	assert.Positive(t, joins, "the join is retried")
}

// atk27q's F1: two accusations sent to b itself, each within
// maxAccusationJump of its incarnation, made b refute twice, and only the
// second refutation, 2^20 + 2, left its queue; c, which still stored b at
// 0, refused it as implausible, so that c's next suspicion of b could
// never be refuted and b ended dead at c. With signed self-updates b's
// own Alive is taken however far it jumps (its proof decides), so c takes
// it and keeps b alive. (Without signing a chain of forged accusations
// can still outrun a member's window: forged updates are what signing
// closes; docs/algorithms.md, “SWIM: hostile and stale updates”.)
func TestSignedRefutationAfterAccusationChainTaken(t *testing.T) {
	b := signedTest(t, "b", ModeLifeguard, "a", "c")
	require.NoError(t, b.Step(time.Second, gossipFrom("z", Update{Kind: UpdateSuspect, Node: node("b"), Incarnation: maxAccusationJump, From: "z"})))
	i1 := b.Incarnation()
	require.NoError(t, b.Step(time.Second+time.Millisecond, gossipFrom("z", Update{Kind: UpdateSuspect, Node: node("b"), Incarnation: i1 + maxAccusationJump, From: "z"})))
	require.Greater(t, b.Incarnation(), MaxIncarnationJump, "b was pushed beyond one window by two accusations")
	c := signedTest(t, "c", ModeLifeguard, "a", "b")
	require.NoError(t, c.Step(time.Second, gossipFrom("b", b.selfAlive())))
	st, _ := c.Member("b", time.Second)
	assert.Equal(t, b.Incarnation(), st.Incarnation, "c takes b's signed refutation beyond the jump bound")
	assert.Equal(t, StateAlive, st.State)

	// An unsigned Alive as far above is still refused.
	u := newTest(t, "u", ModeLifeguard, nil, "a", "b")
	before := u.Stats().Implausible
	require.NoError(t, u.Step(time.Second, gossipFrom("b", Update{Kind: UpdateAlive, Node: node("b"), Incarnation: MaxIncarnationJump + 2, From: "b"})))
	assert.Equal(t, before+1, u.Stats().Implausible)
}
