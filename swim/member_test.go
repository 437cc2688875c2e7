package swim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func node(id string) Node { return Node{ID: ID(id), Addr: id + ":7946"} }

func newTest(t *testing.T, id string, mode Mode, mut func(*Config), peers ...string) *Member {
	t.Helper()
	cfg := Config{Self: node(id), Mode: mode, SyncProbes: true}
	if mut != nil {
		mut(&cfg)
	}
	m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	m.join.noChallenge = true // joinchallenge_test.go tests the challenges
	var ns []Node
	for _, p := range peers {
		ns = append(ns, node(p))
	}
	m.Bootstrap(ns)
	return m
}

// advance ticks m at every deadline it announces up to and including
// until, and returns everything it produced.
func advance(m *Member, until time.Duration) ([]Packet, []Event) {
	var pk []Packet
	var ev []Event
	tickUntil(m, until, func(_ time.Duration, p []Packet, e []Event) {
		pk, ev = append(pk, p...), append(ev, e...)
	})
	return pk, ev
}

// tickUntil ticks m at every deadline it announces up to and including
// until, and passes each tick's output to each.
func tickUntil(m *Member, until time.Duration, each func(at time.Duration, pk []Packet, ev []Event)) {
	for {
		at, ok := m.NextDeadline()
		if !ok || at > until {
			return
		}
		m.Tick(at)
		pk, ev := drain(m)
		each(at, pk, ev)
	}
}

// drain copies the member's output.
func drain(m *Member) ([]Packet, []Event) {
	r := m.Ready()
	return slices.Clone(r.Packets), slices.Clone(r.Events)
}

func only(t *testing.T, pkts []Packet, kind MessageKind) []Packet {
	t.Helper()
	var out []Packet
	for _, p := range pkts {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

func hasUpdate(p Packet, k UpdateKind, id string, inc Incarnation) bool {
	for _, u := range p.Updates {
		if u.Kind == k && u.Node.ID == ID(id) && u.Incarnation == inc {
			return true
		}
	}
	return false
}

func TestConfigDefaultsAndErrors(t *testing.T) {
	m, err := New(Config{Self: node("a")}, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	c := m.Config()
	assert.Equal(t, time.Second, c.ProbeInterval)
	assert.Equal(t, 500*time.Millisecond, c.ProbeTimeout)
	assert.Equal(t, 100*time.Millisecond, *c.MinProbeTimeout)
	assert.Equal(t, 500*time.Millisecond, c.MaxProbeTimeout)
	assert.Equal(t, 3, *c.IndirectChecks)
	assert.Equal(t, 4, c.RetransmitMult)
	assert.Equal(t, 4, c.SuspicionMult)
	assert.Equal(t, 6, c.SuspicionMaxTimeoutMult)
	assert.Equal(t, 2, *c.SuspicionConfirmations, "K = α − 2 as in memberlist")
	assert.Equal(t, 8, c.MaxLocalHealthMultiplier)
	assert.Equal(t, 1400, c.MaxPacketSize)
	assert.Equal(t, ModeDetector, c.Mode)

	_, err = New(Config{Self: node("a")}, nil)
	assert.ErrorIs(t, err, ErrNoRand)
	r := rand.New(rand.NewPCG(1, 1))
	for name, cfg := range map[string]Config{
		"no id":                {},
		"negative period":      {Self: node("a"), ProbeInterval: -1},
		"timeout > period":     {Self: node("a"), ProbeInterval: time.Second, ProbeTimeout: 2 * time.Second},
		"min > max":            {Self: node("a"), MinProbeTimeout: new(400 * time.Millisecond), MaxProbeTimeout: 200 * time.Millisecond},
		"negative k":           {Self: node("a"), IndirectChecks: new(-1)},
		"tiny packets":         {Self: node("a"), MaxPacketSize: 100},
		"bad mode":             {Self: node("a"), Mode: 9},
		"long id":              {Self: Node{ID: ID(string(make([]byte, 300)))}},
		"bad rtt k":            {Self: node("a"), RTTDeviations: -2},
		"negative K":           {Self: node("a"), Lifeguard: Lifeguard{SuspicionConfirmations: new(-1)}},
		"negative fanout":      {Self: node("a"), GossipFanout: new(-1)},
		"negative guard":       {Self: node("a"), PauseGuard: new(-time.Second)},
		"negative overhead":    {Self: node("a"), WireOverhead: -1},
		"overhead of a packet": {Self: node("a"), MaxPacketSize: 300, WireOverhead: 300},
	} {
		_, err := New(cfg, r)
		assert.ErrorIs(t, err, ErrConfig, name)
	}

	// Zero is sayable (see package detector): new(0) is 0, not the default.
	m, err = New(Config{Self: node("a"), Lifeguard: Lifeguard{SuspicionConfirmations: new(0)}, IndirectChecks: new(0),
		GossipFanout: new(0), PauseGuard: new(time.Duration(0)), MinProbeTimeout: new(time.Duration(0)),
		ReconnectInterval: new(time.Duration(0)), PushPullInterval: new(time.Duration(0))}, r)
	require.NoError(t, err)
	c = m.Config()
	for name, v := range map[string]int64{"SuspicionConfirmations": int64(*c.SuspicionConfirmations),
		"IndirectChecks": int64(*c.IndirectChecks), "GossipFanout": int64(*c.GossipFanout),
		"PauseGuard": int64(*c.PauseGuard), "MinProbeTimeout": int64(*c.MinProbeTimeout),
		"ReconnectInterval": int64(*c.ReconnectInterval), "PushPullInterval": int64(*c.PushPullInterval)} {
		assert.Zero(t, v, name)
	}
}

// A probe answered directly: one ping per period, no suspicion, LHM stays 0.
func TestProbeAckedDirectly(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	a.Tick(0)
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	assert.Equal(t, MsgPing, pk[0].Kind)
	assert.Equal(t, ID("b"), pk[0].To.ID)
	at, ok := a.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, 500*time.Millisecond, at, "probe timeout")
	ack := Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: pk[0].Ping.Seq}}
	require.NoError(t, a.Step(2*time.Millisecond, &ack))
	at, _ = a.NextDeadline()
	assert.Equal(t, time.Second, at, "next period")
	a.Tick(time.Second)
	pk, ev := drain(a)
	assert.Len(t, only(t, pk, MsgPing), 1)
	assert.Empty(t, ev)
	assert.Equal(t, 0, a.LocalHealthMultiplier())
}

// toPingReqs ticks a through its first probe, sent at 0: it returns the
// probe's target and the ping-reqs a sends when the ping times out at
// 500 ms.
func toPingReqs(t *testing.T, a *Member) (ID, []Packet) {
	t.Helper()
	a.Tick(0)
	pk, _ := drain(a)
	target := pk[0].To.ID
	a.Tick(500 * time.Millisecond)
	pk, _ = drain(a)
	return target, only(t, pk, MsgPingReq)
}

// The full failure path: ping, timeout, ping-req through k members with
// nack requested, no answer, suspicion at the end of the period, LHM raised
// by the missed nacks, suspicion timeout, Dead.
func TestProbeFailsThenSuspectThenDead(t *testing.T) {
	peers := []string{"b", "c", "d", "e", "f"}
	a := newTest(t, "a", ModeLifeguard, nil, peers...)
	target, reqs := toPingReqs(t, a)
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		assert.Equal(t, target, r.PingReq.Target.ID)
		assert.True(t, r.PingReq.Nack)
		assert.NotEqual(t, target, r.To.ID)
	}
	// One intermediate nacks; two stay silent.
	nack := Packet{Kind: MsgNack, From: reqs[0].To, To: node("a"), Nack: Nack{Seq: reqs[0].PingReq.Seq}}
	require.NoError(t, a.Step(700*time.Millisecond, &nack))
	a.Tick(time.Second)
	pk, ev := drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Equal(t, 2, a.LocalHealthMultiplier(), "two missed nacks")
	// The suspicion goes at once to the suspect alone (eager
	// dissemination), and is piggybacked on the next probe.
	require.Len(t, pk, 2)
	assert.Equal(t, Packet{Kind: MsgGossip, From: node("a"), To: node(string(target)),
		Updates: []Update{{Kind: UpdateSuspect, Node: node(string(target)), From: "a"}}}, pk[0])
	assert.Equal(t, MsgPing, pk[1].Kind)
	assert.True(t, hasUpdate(pk[1], UpdateSuspect, string(target), 0))
	// n = 6: Min = 4 s (log10 6 < 1), Max = 24 s, K = 2 → started at Max.
	st, ok := a.Member(target, time.Second)
	require.True(t, ok)
	assert.Equal(t, StateSuspect, st.State)
	assert.Equal(t, 25*time.Second, st.SuspicionDeadline)
	// The next period is scaled by LHM+1 = 3.
	at, _ := a.NextDeadline()
	assert.Equal(t, 1*time.Second+1500*time.Millisecond, at, "probe timeout 500 ms · 3")
	// Two independent confirmations bring it down to Min.
	for _, from := range []string{"c", "d"} {
		if ID(from) == target {
			from = "f"
		}
		p := Packet{Kind: MsgPing, From: node(from), To: node("a"), Ping: Ping{Seq: 9},
			Updates: []Update{{Kind: UpdateSuspect, Node: node(string(target)), From: ID(from)}}}
		require.NoError(t, a.Step(2*time.Second, &p))
	}
	st, _ = a.Member(target, 2*time.Second)
	assert.Equal(t, 5*time.Second, st.SuspicionDeadline, "start 1 s + Min 4 s")
	a.Tick(5 * time.Second)
	_, ev = drain(a)
	var dead []Event
	for _, e := range ev {
		if e.Kind == EventDead {
			dead = append(dead, e)
		}
	}
	require.Len(t, dead, 1)
	assert.Equal(t, target, dead[0].Node.ID)
	assert.Equal(t, ID("a"), dead[0].From)
	assert.Equal(t, StateDead, a.State(target))
	assert.Equal(t, 5, a.NumAlive())
}

// Plain SWIM: no nack flag, no LHM, no buddy, fixed suspicion timeout Min.
func TestPlainSWIM(t *testing.T) {
	a := newTest(t, "a", ModeSWIM, nil, "b", "c", "d")
	target, reqs := toPingReqs(t, a)
	for _, r := range reqs {
		assert.False(t, r.PingReq.Nack)
	}
	a.Tick(time.Second)
	_, ev := drain(a)
	require.Len(t, ev, 1)
	assert.Equal(t, 0, a.LocalHealthMultiplier())
	st, _ := a.Member(target, time.Second)
	assert.Equal(t, 5*time.Second, st.SuspicionDeadline, "Min = 4 s, no Max")
	// Pinging the suspect carries no buddy suspicion beyond normal gossip
	// ordering; the period is not scaled.
	at, _ := a.NextDeadline()
	assert.Equal(t, 1500*time.Millisecond, at)
}

// An intermediate pings the target for the requester and relays the ack,
// or sends a nack when the target stays silent.
func TestPingReqRelay(t *testing.T) {
	b := newTest(t, "b", ModeLifeguard, nil, "a", "c")
	req := Packet{Kind: MsgPingReq, From: node("a"), To: node("b"), PingReq: PingReq{Seq: 77, Target: node("c"), Nack: true}}
	require.NoError(t, b.Step(10*time.Second, &req))
	pk, _ := drain(b)
	pings := only(t, pk, MsgPing)
	require.Len(t, pings, 1)
	assert.Equal(t, ID("c"), pings[0].To.ID)
	ack := Packet{Kind: MsgAck, From: node("c"), To: node("b"), Ack: Ack{Seq: pings[0].Ping.Seq}}
	require.NoError(t, b.Step(10*time.Second+time.Millisecond, &ack))
	pk, _ = drain(b)
	acks := only(t, pk, MsgAck)
	require.Len(t, acks, 1)
	assert.Equal(t, ID("a"), acks[0].To.ID)
	assert.Equal(t, uint32(77), acks[0].Ack.Seq)

	// Silent target: nack after b's probe timeout.
	require.NoError(t, b.Step(20*time.Second, &req))
	drain(b)
	b.Tick(20*time.Second + 499*time.Millisecond)
	pk, _ = drain(b)
	assert.Empty(t, only(t, pk, MsgNack))
	b.Tick(20*time.Second + 500*time.Millisecond)
	pk, _ = drain(b)
	nacks := only(t, pk, MsgNack)
	require.Len(t, nacks, 1)
	assert.Equal(t, uint32(77), nacks[0].Nack.Seq)
}

// A suspected member refutes with a higher incarnation, gossips Alive, and
// counts the refutation against its local health.
func TestRefutation(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	p := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: 1},
		Updates: []Update{{Kind: UpdateSuspect, Node: node("a"), Incarnation: 0, From: "b"}}}
	require.NoError(t, a.Step(time.Second, &p))
	assert.Equal(t, Incarnation(1), a.Incarnation())
	assert.Equal(t, 1, a.LocalHealthMultiplier())
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	assert.Equal(t, MsgAck, pk[0].Kind)
	assert.True(t, hasUpdate(pk[0], UpdateAlive, "a", 1), "the refutation rides on the ack")
	// An accusation in a later incarnation is refuted above it.
	p.Updates[0] = Update{Kind: UpdateDead, Node: node("a"), Incarnation: 7, From: "b"}
	require.NoError(t, a.Step(2*time.Second, &p))
	assert.Equal(t, Incarnation(8), a.Incarnation())
	// An older one is ignored.
	p.Updates[0] = Update{Kind: UpdateSuspect, Node: node("a"), Incarnation: 3, From: "b"}
	require.NoError(t, a.Step(3*time.Second, &p))
	assert.Equal(t, Incarnation(8), a.Incarnation())
}

// Incarnation arithmetic cannot overflow: an accusation at the maximum
// leaves the member at the maximum (its refutation can then no longer win;
// it must rejoin under a new ID), never wrapping to 0.
func TestRefutationAtMaxIncarnation(t *testing.T) {
	// A member can only get near the limit one plausible step
	// (MaxIncarnationJump) at a time; start it there directly.
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	a.inc = MaxIncarnation - 2
	p := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: 1},
		Updates: []Update{{Kind: UpdateSuspect, Node: node("a"), Incarnation: MaxIncarnation - 1, From: "b"}}}
	require.NoError(t, a.Step(time.Second, &p))
	assert.Equal(t, MaxIncarnation, a.Incarnation())
	p.Updates[0].Incarnation = MaxIncarnation
	require.NoError(t, a.Step(2*time.Second, &p))
	assert.Equal(t, MaxIncarnation, a.Incarnation())
	// Peers' incarnations at the maximum compare correctly too (a member
	// first heard of at any incarnation is admitted at it).
	b := newTest(t, "b", ModeLifeguard, nil, "a")
	for _, u := range []Update{
		{Kind: UpdateAlive, Node: node("c"), Incarnation: MaxIncarnation, From: "c"},
		{Kind: UpdateAlive, Node: node("c"), Incarnation: 0, From: "c"},
	} {
		b.apply(0, u, true)
	}
	st, _ := b.Member("c", 0)
	assert.Equal(t, MaxIncarnation, st.Incarnation)
	assert.Equal(t, StateAlive, st.State)
}

// The precedence rules of docs/algorithms.md, “SWIM suspicion and incarnations”
// (with Dead needing i ≥ j).
func TestPrecedence(t *testing.T) {
	type tc struct {
		name      string
		state     State
		inc       Incarnation
		u         Update
		wantState State
		wantInc   Incarnation
	}
	u := func(k UpdateKind, inc Incarnation) Update {
		return Update{Kind: k, Node: node("l"), Incarnation: inc, From: "x"}
	}
	cases := []tc{
		{"alive newer overrides alive", StateAlive, 2, u(UpdateAlive, 3), StateAlive, 3},
		{"alive same ignored", StateAlive, 2, u(UpdateAlive, 2), StateAlive, 2},
		{"alive newer overrides suspect", StateSuspect, 2, u(UpdateAlive, 3), StateAlive, 3},
		{"alive same does not clear suspect", StateSuspect, 2, u(UpdateAlive, 2), StateSuspect, 2},
		{"suspect same overrides alive", StateAlive, 2, u(UpdateSuspect, 2), StateSuspect, 2},
		{"suspect older ignored", StateAlive, 2, u(UpdateSuspect, 1), StateAlive, 2},
		{"suspect newer overrides suspect", StateSuspect, 2, u(UpdateSuspect, 3), StateSuspect, 3},
		{"dead overrides alive", StateAlive, 2, u(UpdateDead, 2), StateDead, 2},
		{"dead overrides suspect", StateSuspect, 2, u(UpdateDead, 5), StateDead, 5},
		{"stale dead ignored", StateAlive, 3, u(UpdateDead, 2), StateAlive, 3},
		{"suspect cannot revive dead", StateDead, 2, u(UpdateSuspect, 9), StateDead, 2},
		{"alive same cannot revive dead", StateDead, 2, u(UpdateAlive, 2), StateDead, 2},
		{"alive newer revives dead", StateDead, 2, u(UpdateAlive, 3), StateAlive, 3},
		{"leave", StateAlive, 2, Update{Kind: UpdateDead, Node: node("l"), Incarnation: 2, From: "l"}, StateLeft, 2},
		{"alive newer revives left", StateLeft, 2, u(UpdateAlive, 3), StateAlive, 3},
	}
	for _, c := range cases {
		m := newTest(t, "a", ModeLifeguard, nil, "b", "c")
		m.apply(0, Update{Kind: UpdateAlive, Node: node("l"), Incarnation: c.inc, From: "l"}, false)
		switch c.state {
		case StateSuspect:
			m.apply(0, Update{Kind: UpdateSuspect, Node: node("l"), Incarnation: c.inc, From: "y"}, false)
		case StateDead:
			m.apply(0, Update{Kind: UpdateDead, Node: node("l"), Incarnation: c.inc, From: "y"}, false)
		case StateLeft:
			m.apply(0, Update{Kind: UpdateDead, Node: node("l"), Incarnation: c.inc, From: "l"}, false)
		}
		require.Equal(t, c.state, m.State("l"), c.name)
		m.apply(time.Second, c.u, true)
		st, _ := m.Member("l", time.Second)
		assert.Equal(t, c.wantState, st.State, c.name)
		assert.Equal(t, c.wantInc, st.Incarnation, c.name)
		live := 3
		if st.State == StateAlive || st.State == StateSuspect {
			live = 4
		}
		assert.Equal(t, live, m.NumAlive(), c.name)
	}
	// Updates about unknown members: Alive adds, Suspect and Dead are ignored.
	m := newTest(t, "a", ModeLifeguard, nil, "b")
	m.apply(0, Update{Kind: UpdateSuspect, Node: node("z"), From: "b"}, true)
	m.apply(0, Update{Kind: UpdateDead, Node: node("z"), From: "b"}, true)
	assert.Equal(t, State(0), m.State("z"))
	m.apply(0, Update{Kind: UpdateAlive, Node: node("z"), From: "z"}, true)
	assert.Equal(t, StateAlive, m.State("z"))
}

// Each update is piggybacked at most λ·ceil(log10(n+1)) times, least-sent
// first, and never beyond the packet size limit.
func TestDissemination(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MaxPacketSize = 300 }, "b", "c")
	// n = 3: limit 4·ceil(log10 4) = 4.
	a.enqueue(Update{Kind: UpdateAlive, Node: node("x"), From: "x"})
	sent := 0
	// Round probes (even numbers): a bare ping numbered 3 modulo 4 is a
	// challenge, answered without the queue (challengePing). One a
	// protocol period, as a prober sends them: more answers to one member
	// go bare (reply.go).
	now := time.Duration(0)
	ping := func(i int) []Packet {
		t.Helper()
		now += a.cfg.ProbeInterval
		p := Packet{Kind: MsgPing, From: node("b"), To: node("a"), Ping: Ping{Seq: uint32(2 * i)}}
		require.NoError(t, a.Step(now, &p))
		pk, _ := drain(a)
		return pk
	}
	for i := 0; i < 10; i++ {
		pk := ping(i)
		if hasUpdate(pk[0], UpdateAlive, "x", 0) {
			sent++
		}
	}
	assert.Equal(t, 4, sent)
	// Many updates: each packet stays within the limit, and the least sent
	// go first.
	for i := 0; i < 40; i++ {
		a.enqueue(Update{Kind: UpdateAlive, Node: Node{ID: ID(rune('A'+i)) + "-member", Addr: "10.0.0.1:7946"}, From: "q"})
	}
	seen := map[ID]int{}
	for i := 0; i < 40; i++ {
		pk := ping(i)
		assert.LessOrEqual(t, pk[0].Size(), 300)
		assert.Greater(t, len(pk[0].Updates), 1)
		for _, u := range pk[0].Updates {
			seen[u.Node.ID]++
		}
		if len(seen) == 40 {
			break
		}
		// Least-sent first: no update is sent a second time while another
		// has not been sent at all.
		for _, c := range seen {
			assert.Equal(t, 1, c)
		}
	}
	assert.Len(t, seen, 40)
	for i := 0; i < 100; i++ {
		pk := ping(i)
		for _, u := range pk[0].Updates {
			seen[u.Node.ID]++
		}
	}
	for id, c := range seen {
		assert.Equal(t, 4, c, id)
	}
}

// Lifeguard's buddy system: a ping to a suspected member carries the
// suspicion first.
func TestBuddySystem(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	a.apply(0, Update{Kind: UpdateSuspect, Node: node("b"), From: "c"}, false)
	a.Tick(0)
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	require.NotEmpty(t, pk[0].Updates)
	assert.Equal(t, Update{Kind: UpdateSuspect, Node: node("b"), From: "c"}, pk[0].Updates[0])
}

// The detector gate: a failed probe of a peer whose detector still trusts
// it is retried in the next period instead of raising a suspicion; a second
// failure suspects.
func TestDetectorGate(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.PeerDetector = FixedPeerDetector(5 * time.Second) }, "b", "c")
	// Hear from both peers.
	for _, from := range []string{"b", "c"} {
		p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
		require.NoError(t, a.Step(0, &p))
	}
	a.Tick(time.Millisecond)
	pk, _ := drain(a)
	target := pk[0].To.ID
	pk, ev := advance(a, time.Millisecond+time.Second)
	assert.Empty(t, ev, "heard from 1 ms ago: no suspicion on one lost ack")
	assert.Equal(t, 1, a.Stats().GateDeferrals)
	pings := only(t, pk, MsgPing)
	require.Len(t, pings, 1)
	assert.Equal(t, target, pings[0].To.ID, "retried at once")
	// The deferred probe's missed nack raised LHM to 1: the retry's period
	// is 2 s.
	_, ev = advance(a, 3*time.Second+time.Millisecond)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	assert.Equal(t, target, ev[0].Node.ID)
	assert.Zero(t, a.Stats().LocalPauses)
	lvl, ok := a.Level(target, 3*time.Second)
	assert.True(t, ok)
	assert.Equal(t, 0.0, lvl, "fixed detector: binary level, 0 while trusting")
	lvl, _ = a.Level(target, 6*time.Second)
	assert.Equal(t, 1.0, lvl)

	// Lifeguard mode has no gate.
	l := newTest(t, "a", ModeLifeguard, func(c *Config) { c.PeerDetector = FixedPeerDetector(5 * time.Second) }, "b")
	p := Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: 999}}
	require.NoError(t, l.Step(0, &p))
	l.Tick(time.Millisecond)
	l.Tick(time.Millisecond + time.Second)
	_, ev = drain(l)
	assert.Len(t, ev, 1)
}

// The probe timeout comes from the Jacobson estimator over ack RTTs,
// clamped, times LHM+1.
func TestRTTProbeTimeout(t *testing.T) {
	// probeAcked ticks m at now, acks its ping to "b" after rtt and
	// returns m's probe timeout for "b".
	probeAcked := func(m *Member, now, rtt time.Duration) time.Duration {
		t.Helper()
		m.Tick(now)
		pk, _ := drain(m)
		pings := only(t, pk, MsgPing)
		require.Len(t, pings, 1)
		ack := Packet{Kind: MsgAck, From: node("b"), To: node("a"), Ack: Ack{Seq: pings[0].Ping.Seq}}
		require.NoError(t, m.Step(now+rtt, &ack))
		to, ok := m.ProbeTimeout("b")
		require.True(t, ok)
		return to
	}
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.MinProbeTimeout = new(time.Millisecond) }, "b")
	to, ok := a.ProbeTimeout("b")
	require.True(t, ok)
	assert.Equal(t, 500*time.Millisecond, to, "no sample yet: ProbeTimeout")
	assert.Equal(t, 30*time.Millisecond, probeAcked(a, 0, 10*time.Millisecond),
		"SRTT 10 + 4·RTTVAR 5 (RFC 6298 first sample)")
	// Next sample 20 ms: RTTVAR = 3/4·5 + 1/4·10 = 6.25, SRTT = 11.25 → 36.25 ms.
	assert.Equal(t, 36250*time.Microsecond, probeAcked(a, time.Second, 20*time.Millisecond))
	// Clamped by default to [100 ms, 500 ms].
	d := newTest(t, "a", ModeDetector, nil, "b")
	assert.Equal(t, 100*time.Millisecond, probeAcked(d, 0, 10*time.Millisecond))
	// ModeLifeguard ignores RTTs.
	l := newTest(t, "a", ModeLifeguard, nil, "b")
	assert.Equal(t, 500*time.Millisecond, probeAcked(l, 0, 10*time.Millisecond))
}

// Round-robin: every member is probed exactly once per pass.
func TestRoundRobin(t *testing.T) {
	peers := []string{"b", "c", "d", "e", "f", "g", "h"}
	a := newTest(t, "a", ModeLifeguard, nil, peers...)
	for pass := 0; pass < 3; pass++ {
		seen := map[ID]bool{}
		for i := 0; i < len(peers); i++ {
			now := time.Duration(pass*len(peers)+i) * time.Second
			a.Tick(now)
			pk, _ := drain(a)
			pings := only(t, pk, MsgPing)
			require.Len(t, pings, 1)
			seen[pings[0].To.ID] = true
			ack := Packet{Kind: MsgAck, From: pings[0].To, To: node("a"), Ack: Ack{Seq: pings[0].Ping.Seq}}
			require.NoError(t, a.Step(now+time.Millisecond, &ack))
		}
		assert.Len(t, seen, len(peers), "pass %d", pass)
	}
}

func TestStepRejectsMalformed(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	bad := []Packet{
		{Kind: 0, From: node("b")},
		{Kind: 42, From: node("b")},
		{Kind: MsgPing},
		{Kind: MsgPingReq, From: node("b")},
		{Kind: MsgPing, From: node("b"), Updates: []Update{{Kind: 9, Node: node("c")}}},
		{Kind: MsgPing, From: node("b"), Updates: []Update{{Kind: UpdateAlive}}},
		{Kind: MsgPing, From: Node{ID: ID(make([]byte, 256))}},
	}
	for i := range bad {
		assert.ErrorIs(t, a.Step(0, &bad[i]), ErrPacket, "packet %d", i)
	}
	assert.ErrorIs(t, a.Step(0, nil), ErrPacket)
	pk, ev := drain(a)
	assert.Empty(t, pk)
	assert.Empty(t, ev)
	// Misdirected packets are dropped and counted.
	p := Packet{Kind: MsgPing, From: node("b"), To: node("zz"), Ping: Ping{Seq: 1}}
	require.NoError(t, a.Step(0, &p))
	pk, _ = drain(a)
	assert.Empty(t, pk)
	assert.Equal(t, 1, a.Stats().Misdirected)
}

// The local health multiplier: saturating in [0, S−1], scaling the period.
func TestLocalHealthMultiplier(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, nil, "b")
	for i := 0; i < 20; i++ {
		a.adjustHealth(1)
	}
	assert.Equal(t, 7, a.LocalHealthMultiplier())
	a.Tick(0)
	at, _ := a.NextDeadline()
	assert.Equal(t, 4*time.Second, at, "probe timeout 500 ms · 8")
	for i := 0; i < 20; i++ {
		a.adjustHealth(-1)
	}
	assert.Equal(t, 0, a.LocalHealthMultiplier())
}
