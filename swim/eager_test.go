package swim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recipients returns the IDs the packets go to, and fails unless every one
// is a MsgGossip carrying exactly want.
func gossipRecipients(t *testing.T, pkts []Packet, want ...Update) []ID {
	t.Helper()
	var to []ID
	for _, p := range pkts {
		require.Equal(t, MsgGossip, p.Kind, "packet to %s", p.To.ID)
		assert.Equal(t, node("a"), p.From)
		assert.Equal(t, want, p.Updates, "packet to %s", p.To.ID)
		to = append(to, p.To.ID)
	}
	return to
}

// others returns the peers of a 5-member group {a, b, c, d, e} except the
// given ones.
func others(except ...ID) []ID {
	var out []ID
	for _, id := range []ID{"b", "c", "d", "e"} {
		skip := false
		for _, x := range except {
			skip = skip || x == id
		}
		if !skip {
			out = append(out, id)
		}
	}
	return out
}

// A member's own confirmation of a suspicion goes at once to the suspecter
// it heard of and to GossipFanout (2) random members, never the suspect; a
// suspicion heard from another member is not forwarded.
func TestEagerConfirmation(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To.ID
	from := others(target)[0]
	s := Packet{Kind: MsgAck, From: node(string(from)), To: node("a"), Ack: Ack{Seq: 77},
		Updates: []Update{{Kind: UpdateSuspect, Node: node(string(target)), From: from}}}
	require.NoError(t, a.Step(100*time.Millisecond, &s))
	pk, ev := drain(a)
	assert.Empty(t, pk, "a heard suspicion is only queued")
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)

	a.Tick(500 * time.Millisecond) // ping-reqs
	drain(a)
	a.Tick(time.Second) // the probe fails: a confirms
	pk, _ = drain(a)
	conf := Update{Kind: UpdateSuspect, Node: node(string(target)), From: "a"}
	n := len(pk)
	require.GreaterOrEqual(t, n, 3)
	// The three gossips come first, then the next period's ping.
	to := gossipRecipients(t, pk[:3], conf)
	assert.Equal(t, from, to[0], "the suspecter first")
	assert.ElementsMatch(t, others(target), to, "and both other members")
	assert.Equal(t, 3, a.Stats().GossipsSent)
	for _, p := range pk[3:] {
		assert.NotEqual(t, MsgGossip, p.Kind)
	}
	// n = 5: Min 4 s, Max 24 s, K = 2; one confirmation: 24 − 20·log 2/log 3.
	st, _ := a.Member(target, time.Second)
	assert.Equal(t, 100*time.Millisecond+suspicionTimeout(4*time.Second, 24*time.Second, 2, 1), st.SuspicionDeadline)
}

// A declaration by this member's own timeout goes at once to GossipFanout
// random members other than the dead one.
func TestEagerDeclaration(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
	// b suspects c, d and e confirm (K = 2): a's timer is Min = 4 s.
	for _, from := range []ID{"b", "d", "e"} {
		p := Packet{Kind: MsgGossip, From: node(string(from)), To: node("a"),
			Updates: []Update{{Kind: UpdateSuspect, Node: node("c"), From: from}}}
		require.NoError(t, a.Step(0, &p))
	}
	st, _ := a.Member("c", 0)
	require.Equal(t, 4*time.Second, st.SuspicionDeadline)
	var gossips []Packet
	for {
		at, _ := a.NextDeadline()
		if at > 4*time.Second {
			break
		}
		a.Tick(at)
		pk, _ := drain(a)
		for _, p := range pk {
			switch {
			case p.Kind == MsgGossip:
				gossips = append(gossips, p)
			case p.Kind == MsgPing && p.To.ID != "c": // everyone but c answers
				ack := Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}
				require.NoError(t, a.Step(at, &ack))
				drain(a)
			}
		}
	}
	assert.Equal(t, StateDead, a.State("c"))
	assert.Equal(t, 1, a.Stats().Declarations)
	to := gossipRecipients(t, gossips, Update{Kind: UpdateDead, Node: node("c"), From: "a"})
	require.Len(t, to, 2)
	assert.NotEqual(t, to[0], to[1])
	assert.Subset(t, []ID{"b", "d", "e"}, to)
}

// hearSuspicion steps into a, at 0, b's gossip suspecting c, and returns
// what a sent in answer; a then holds c suspect.
func hearSuspicion(t *testing.T, a *Member) []Packet {
	t.Helper()
	sus := Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
		Updates: []Update{{Kind: UpdateSuspect, Node: node("c"), From: "b"}}}
	require.NoError(t, a.Step(0, &sus))
	pk, _ := drain(a)
	require.Equal(t, StateSuspect, a.State("c"))
	return pk
}

// A refutation that ends a suspicion this member held is forwarded once to
// GossipFanout random members other than the refuter and the sender; an
// Alive that ends nothing is not.
func TestEagerRefutationForwarded(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c", "d", "e")
	assert.Empty(t, hearSuspicion(t, a), "a MsgGossip gets no answer, a heard suspicion is not pushed")

	alive := Update{Kind: UpdateAlive, Node: node("c"), Incarnation: 1, From: "c"}
	ref := Packet{Kind: MsgGossip, From: node("d"), To: node("a"), Updates: []Update{alive}}
	require.NoError(t, a.Step(time.Second, &ref))
	pk, ev := drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventAlive, ev[0].Kind)
	assert.ElementsMatch(t, []ID{"b", "e"}, gossipRecipients(t, pk, alive), "not c (the refuter) nor d (the sender)")

	// The same refutation again, and a newer Alive of a member nobody
	// suspected: nothing to forward.
	require.NoError(t, a.Step(2*time.Second, &ref))
	alive2 := Packet{Kind: MsgGossip, From: node("e"), To: node("a"),
		Updates: []Update{{Kind: UpdateAlive, Node: node("b"), Incarnation: 3, From: "b"}}}
	require.NoError(t, a.Step(2*time.Second, &alive2))
	pk, _ = drain(a)
	assert.Empty(t, pk)
	assert.Equal(t, Incarnation(3), a.peers["b"].inc)
}

// A declaration heard about a member this member suspected too is passed
// on at once to GossipFanout random members, other than the dead member,
// the declarer and the sender (corroborated forwarding); one about a member
// it still trusted, or one it already holds, is not.
func TestEagerDeclarationForwarded(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c", "d", "e", "f")
	hearSuspicion(t, a)

	dead := Update{Kind: UpdateDead, Node: node("c"), From: "b"}
	decl := Packet{Kind: MsgGossip, From: node("d"), To: node("a"), Updates: []Update{dead}}
	require.NoError(t, a.Step(time.Second, &decl))
	pk, ev := drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventDead, ev[0].Kind)
	assert.ElementsMatch(t, []ID{"e", "f"}, gossipRecipients(t, pk, dead), "not c (dead), b (the declarer) nor d (the sender)")

	// The same declaration again, and one about a member a trusted.
	require.NoError(t, a.Step(2*time.Second, &decl))
	trusted := Packet{Kind: MsgGossip, From: node("d"), To: node("a"),
		Updates: []Update{{Kind: UpdateDead, Node: node("e"), From: "d"}}}
	require.NoError(t, a.Step(2*time.Second, &trusted))
	pk, ev = drain(a)
	assert.Empty(t, pk)
	require.Len(t, ev, 1)
	assert.Equal(t, StateDead, a.State("e"))
}

// No eager packet in plain SWIM, nor with GossipFanout new(0).
func TestEagerOff(t *testing.T) {
	for name, m := range map[string]*Member{
		"swim":     newTest(t, "a", ModeSWIM, nil, "b", "c", "d", "e"),
		"disabled": newTest(t, "a", ModeLifeguard, func(c *Config) { c.GossipFanout = new(0) }, "b", "c", "d", "e"),
	} {
		m.Tick(0)
		pk, _ := drain(m)
		target := pk[0].To.ID
		from := others(target)[0]
		s := Packet{Kind: MsgAck, From: node(string(from)), To: node("a"), Ack: Ack{Seq: 77},
			Updates: []Update{{Kind: UpdateSuspect, Node: node(string(target)), From: from}}}
		require.NoError(t, m.Step(0, &s))
		pk, _ = advance(m, 60*time.Second)
		assert.Empty(t, only(t, pk, MsgGossip), name)
		assert.Equal(t, StateDead, m.State(target), name)
		assert.Zero(t, m.Stats().GossipsSent, name)
	}
}

// The detector gate's retry runs the direct and the indirect probe at once
// and suspects as soon as every intermediate has nacked and its own direct
// timeout has passed, instead of a period later. (The first probe has one intermediate silent; a failure
// both nacked is gated too, see TestGateRetriesCorroboratedFailure.)
func TestGateRetryEndsOnNacks(t *testing.T) {
	a, target, reqs := gatedProbe(t)
	// One intermediate nacks the first probe, the other is silent.
	r := reqs[0]
	n := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
	require.NoError(t, a.Step(700*time.Millisecond, &n))
	pk, _ := drain(a)
	assert.Empty(t, pk, "the first probe waits for the end of its period")

	a.Tick(time.Second) // gated: the retry starts with ping and ping-reqs together
	pk, ev := drain(a)
	assert.Empty(t, ev)
	assert.Equal(t, 1, a.Stats().GateDeferrals)
	require.Len(t, pk, 3)
	assert.Equal(t, MsgPing, pk[0].Kind)
	assert.Equal(t, target, pk[0].To.ID)
	reqs = only(t, pk, MsgPingReq)
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, target, r.PingReq.Target.ID)
		assert.Equal(t, pk[0].Ping.Seq, r.PingReq.Seq)
	}
	n0 := Packet{Kind: MsgNack, From: reqs[0].To, To: node("a"), Nack: Nack{Seq: reqs[0].PingReq.Seq}}
	require.NoError(t, a.Step(1100*time.Millisecond, &n0))
	_, ev = drain(a)
	assert.Empty(t, ev, "one of two nacks")
	require.NoError(t, a.Step(1100*time.Millisecond, &n0))
	_, ev = drain(a)
	assert.Empty(t, ev, "a duplicate nack does not count")
	n1 := Packet{Kind: MsgNack, From: reqs[1].To, To: node("a"), Nack: Nack{Seq: reqs[1].PingReq.Seq}}
	require.NoError(t, a.Step(1200*time.Millisecond, &n1))
	_, ev = drain(a)
	assert.Empty(t, ev, "every intermediate nacked, but the retry's direct timeout (500 ms at LHM 1: 1 s) has not passed")
	at, _ := a.NextDeadline()
	require.Equal(t, 2*time.Second, at, "the retry ends at its direct timeout")
	a.Tick(at)
	pk, ev = drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Equal(t, 2*time.Second, ev[0].At)
	assert.Equal(t, []ID{target}, gossipRecipients(t, pk, Update{Kind: UpdateSuspect, Node: node(string(target)), From: "a"}))
	assert.Equal(t, 1, a.LocalHealthMultiplier(), "the first probe's missing nack; every nack of the retry arrived")
	at, _ = a.NextDeadline()
	assert.Equal(t, 3*time.Second, at, "the next period starts on schedule (2 s at LHM 1)")
}

// A gossip packet whose one update does not fit MaxPacketSize (IDs and
// addresses near their 255-byte maximum) is not sent: the update is still
// piggybacked, and no packet the member emits exceeds the limit (see
// Packet.Size).
func TestEagerGossipWithinMaxPacketSize(t *testing.T) {
	long := func(c string) Node {
		return Node{ID: ID(strings.Repeat(c, 250)), Addr: strings.Repeat(c, 245) + ":7946"}
	}
	a, err := New(Config{Self: long("a"), Mode: ModeLifeguard}, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	x := long("x")
	a.Bootstrap([]Node{long("b"), long("c"), long("d"), x})
	sus := Packet{Kind: MsgGossip, From: long("b"), To: a.Self(),
		Updates: []Update{{Kind: UpdateSuspect, Node: x, From: long("b").ID}}}
	require.NoError(t, a.Step(0, &sus))
	drain(a)
	alive := Packet{Kind: MsgGossip, From: long("c"), To: a.Self(),
		Updates: []Update{{Kind: UpdateAlive, Node: x, Incarnation: 1, From: x.ID}}}
	require.NoError(t, a.Step(time.Second, &alive))
	assert.Equal(t, StateAlive, a.State(x.ID))
	pk, _ := drain(a)
	for _, p := range pk {
		assert.LessOrEqual(t, p.Size(), a.Config().MaxPacketSize, "%v to %.8s…", p.Kind, p.To.ID)
	}
	assert.Zero(t, a.Stats().GossipsSent)
	assert.NotNil(t, a.queue.byID[x.ID], "the refutation is still piggybacked")
}

// Forwarding is bounded per protocol period: a member that hears, in one
// period, the refutations of ten suspicions it held forwards at most
// 4·GossipFanout gossip packets; the next period brings a new budget.
func TestEagerForwardBudget(t *testing.T) {
	var peers []string
	for i := range 20 {
		peers = append(peers, string(rune('b'+i)))
	}
	a := newTest(t, "a", ModeLifeguard, nil, peers...)
	a.Tick(0)
	drain(a)
	refute := func(at time.Duration, ids []string) []Packet {
		for _, id := range ids {
			a.apply(at, Update{Kind: UpdateSuspect, Node: node(id), From: "b"}, false)
		}
		drain(a)
		var us []Update
		for _, id := range ids {
			us = append(us, Update{Kind: UpdateAlive, Node: node(id), Incarnation: 1, From: ID(id)})
		}
		p := Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: us}
		require.NoError(t, a.Step(at, &p))
		pk, _ := drain(a)
		return only(t, pk, MsgGossip)
	}
	first := refute(10*time.Millisecond, peers[1:11])
	assert.Len(t, first, forwardsPerFanout*DefaultGossipFanout, "ten refutations forwarded within the budget of one period")
	more := refute(20*time.Millisecond, peers[11:13])
	assert.Empty(t, more, "the period's budget is spent")
	advance(a, a.period()) // the next protocol period starts
	next := refute(a.period()+10*time.Millisecond, peers[13:19])
	assert.Len(t, next, forwardsPerFanout*DefaultGossipFanout, "a new period, a new budget")
}

// A gossip packet to a suspected member also carries that member's own
// suspicion (buddy system), so that it refutes it at once; a gossip packet
// about the recipient itself carries the suspicion only once.
func TestEagerGossipCarriesRecipientsSuspicion(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	a.apply(0, Update{Kind: UpdateSuspect, Node: node("b"), From: "x"}, false)
	drain(a)
	require.Equal(t, StateSuspect, a.State("b"))
	require.NoError(t, a.Leave(0))
	pk, _ := drain(a)
	leave := Update{Kind: UpdateDead, Node: node("a"), From: "a"}
	susp := Update{Kind: UpdateSuspect, Node: node("b"), From: "x"}
	assert.Equal(t, []Packet{{Kind: MsgGossip, From: node("a"), To: node("b"), Updates: []Update{leave, susp}}}, pk)

	c := newTest(t, "c", ModeLifeguard, nil, "b")
	c.apply(0, Update{Kind: UpdateSuspect, Node: node("b"), From: "c"}, false)
	drain(c)
	c.sendGossip(c.peers["b"], Update{Kind: UpdateSuspect, Node: node("b"), From: "c"})
	pk, _ = drain(c)
	require.Len(t, pk, 1)
	assert.Len(t, pk[0].Updates, 1)
}

// A declaration heard from another member (not only one this member made)
// goes out again at the start of each protocol period in one MsgGossip to
// GossipFanout random live members, never the dead one, until it has been
// sent λ·ceil(log10(n+1)) times counting piggybacked copies; a leave does
// not, and plain SWIM sends no gossip. This is the rule without the drain
// loop (GossipInterval 0; see TestDrainLoop).
func TestGossipDeathsEachPeriod(t *testing.T) {
	dead := Update{Kind: UpdateDead, Node: node("c"), From: "b"}
	left := Update{Kind: UpdateDead, Node: node("d"), From: "d"}
	noLoop := func(c *Config) { c.GossipInterval = new(time.Duration(0)) }
	for _, mode := range []Mode{ModeLifeguard, ModeDetector, ModeSWIM} {
		a := newTest(t, "a", mode, noLoop, "b", "c", "d", "e")
		p := Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{dead, left}}
		require.NoError(t, a.Step(0, &p))
		drain(a)
		var perPeriod []int
		var sent int // copies of the Dead sent, gossiped or piggybacked
		for at := time.Duration(0); at < 6*time.Second; at += time.Second {
			a.Tick(at)
			pk, _ := drain(a)
			n := 0
			for _, p := range pk {
				if hasUpdate(p, UpdateDead, "c", 0) {
					sent++
				}
				if p.Kind != MsgGossip {
					if p.Kind == MsgPing { // every live member answers
						ack := Packet{Kind: MsgAck, From: p.To, To: node("a"), Ack: Ack{Seq: p.Ping.Seq}}
						require.NoError(t, a.Step(at+time.Millisecond, &ack))
						drain(a)
					}
					continue
				}
				n++
				assert.Equal(t, []Update{dead}, p.Updates, "%v: the Dead alone, not the leave", mode)
				assert.Contains(t, []ID{"b", "e"}, p.To.ID, "%v: a live member", mode)
			}
			perPeriod = append(perPeriod, n)
		}
		if mode == ModeSWIM {
			assert.Equal(t, []int{0, 0, 0, 0, 0, 0}, perPeriod, "%v", mode)
			continue
		}
		// n = 3 alive: limit 4·ceil(log10 4) = 4. Period 0: two gossips,
		// then the ping carries it (3 sent); period 1: two gossips (5 ≥ 4:
		// dropped from the queue, the ping no longer carries it).
		assert.Equal(t, []int{2, 2, 0, 0, 0, 0}, perPeriod, "%v", mode)
		assert.Equal(t, 5, sent, "%v", mode)
	}
}

// The drain loop (GossipInterval 200 ms, GossipFanout 2): every 200 ms,
// while the queue holds updates other than suspicions, a member sends
// them in one MsgGossip to each of two random live members, each copy
// counting toward the limit; Alive updates and declarations go every
// round, suspicions never (they ride on pings, acks and the eager sends).
// n = 5 alive after the updates below: limit 4·ceil(log10 6) = 4, so two
// rounds send each update its 4 times.
func TestDrainLoop(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e")
	a.Tick(0) // the first probe's ping, acked; the loop's grid starts at 0
	pk, _ := drain(a)
	require.Equal(t, MsgPing, pk[0].Kind)
	ack := Packet{Kind: MsgAck, From: pk[0].To, To: node("a"), Ack: Ack{Seq: pk[0].Ping.Seq}}
	require.NoError(t, a.Step(10*time.Millisecond, &ack))
	drain(a)
	alive := Update{Kind: UpdateAlive, Node: node("f"), From: "f"}
	dead := Update{Kind: UpdateDead, Node: node("c"), From: "b"}
	susp := Update{Kind: UpdateSuspect, Node: node("d"), From: "b"}
	p := Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{alive, dead, susp}}
	require.NoError(t, a.Step(50*time.Millisecond, &p))
	drain(a)
	at, _ := a.NextDeadline()
	assert.Equal(t, 200*time.Millisecond, at, "the next round of the grid, not at once")
	a.Tick(150 * time.Millisecond)
	pk, _ = drain(a)
	assert.Empty(t, pk, "between rounds")

	// round → packets and the updates from the queue each one carries
	// (a packet to d also carries d's own suspicion first: the notice).
	fromQueue := func(p Packet) []Update {
		ups := p.Updates
		if p.To.ID == "d" {
			require.NotEmpty(t, ups)
			assert.Equal(t, susp, ups[0], "the notice to the suspect")
			ups = ups[1:]
		}
		return ups
	}
	want := [][]Update{
		{dead, alive}, // round 1 (200 ms): both, none sent yet, the newer first
		{dead, alive}, // round 2 (400 ms): the last 2 copies of each
	}
	for i, w := range want {
		now := time.Duration(i+1) * 200 * time.Millisecond
		at, _ := a.NextDeadline()
		require.Equal(t, now, at, "round %d", i+1)
		a.Tick(now)
		pk, _ := drain(a)
		if w == nil {
			assert.Empty(t, pk, "round %d", i+1)
			continue
		}
		require.Len(t, pk, 2, "round %d", i+1)
		for _, p := range pk {
			assert.Equal(t, MsgGossip, p.Kind)
			assert.Contains(t, []ID{"b", "d", "e", "f"}, p.To.ID, "round %d: a live member, never the dead one", i+1)
			assert.Equal(t, w, fromQueue(p), "round %d to %s", i+1, p.To.ID)
		}
	}
	assert.Equal(t, 1, a.Queued(), "the suspicion alone")
	at, _ = a.NextDeadline()
	assert.Equal(t, time.Second, at, "the loop is idle (it never sends the suspicion): the next probe")
	assert.Equal(t, 4, a.Stats().GossipsSent)

	// Plain SWIM has no loop.
	s := newTest(t, "a", ModeSWIM, nil, "b", "c", "d", "e")
	s.Tick(0)
	drain(s)
	require.NoError(t, s.Step(50*time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Updates: []Update{alive, dead}}))
	drain(s)
	pk, _ = advance(s, 900*time.Millisecond)
	assert.Empty(t, only(t, pk, MsgGossip))
}

// gatedProbe returns a ModeDetector member a of {a, b, c, d} whose
// detectors (a 5 s fixed timeout) trust every peer, having heard each at 0,
// with its first probe's direct ping unanswered at 500 ms: the probe's
// target and the two ping-reqs sent then.
func gatedProbe(t *testing.T) (*Member, ID, []Packet) {
	t.Helper()
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.PeerDetector = FixedPeerDetector(5 * time.Second) }, "b", "c", "d")
	for _, from := range []string{"b", "c", "d"} {
		p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
		require.NoError(t, a.Step(0, &p))
	}
	target, reqs := toPingReqs(t, a)
	require.Len(t, reqs, 2)
	return a, target, reqs
}

// The gate's retry takes a late ack of the failed first probe's ping, from
// the target or relayed by one of that probe's intermediates, as its own
// answer: the retry re-checks the same failure, and an answer to either
// ping shows the target alive. An ack of that number from anybody else
// answers nothing, and the retry suspects.
func TestGateRetryTakesFirstProbesLateAck(t *testing.T) {
	for _, c := range []struct {
		name string
		from func(target ID, reqs []Packet) ID
		ok   bool
	}{
		{"target", func(target ID, _ []Packet) ID { return target }, true},
		{"intermediate", func(_ ID, reqs []Packet) ID { return reqs[1].To.ID }, true},
		{"stranger", func(ID, []Packet) ID { return "zz" }, false},
	} {
		a, target, reqs := gatedProbe(t)
		first := reqs[0].PingReq.Seq
		for _, r := range reqs {
			n := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: first}}
			require.NoError(t, a.Step(600*time.Millisecond, &n))
		}
		pk, _ := drain(a)
		ping := only(t, pk, MsgPing)
		require.Len(t, ping, 1, c.name)
		require.Equal(t, target, ping[0].To.ID, c.name)
		require.NotEqual(t, first, ping[0].Ping.Seq, "%s: the retry's own ping", c.name)
		require.Equal(t, 1, a.Stats().GateDeferrals, c.name)

		from := c.from(target, reqs)
		ack := Packet{Kind: MsgAck, From: Node{ID: from, Addr: string(from) + ":7946"}, To: node("a"), Ack: Ack{Seq: first}}
		require.NoError(t, a.Step(700*time.Millisecond, &ack))
		_, ev := advance(a, 3*time.Second)
		suspected := slices.ContainsFunc(ev, func(e Event) bool { return e.Kind == EventSuspect && e.Node.ID == target })
		assert.Equal(t, !c.ok, suspected, c.name)
		assert.Equal(t, !c.ok, a.Stats().Suspicions == 1, c.name)
	}
}
