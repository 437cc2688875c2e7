package swim

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinAnswer returns the packets b, knowing p00 and p01 and with an
// application state, answers a's join with: its state, then its view.
func joinAnswer(t *testing.T) []Packet {
	t.Helper()
	b := newTest(t, "b", ModeLifeguard, func(c *Config) {
		c.LocalState = func(bool) []byte { return []byte("state of b") }
	}, "p00", "p01")
	pk := viewOf(t, b, "a")
	require.Len(t, pk, 2)
	require.NotEmpty(t, pk[0].State, "the state goes first")
	require.Empty(t, pk[1].State)
	return pk
}

// joiner returns a member joining through b with a MergeFilter refusing
// any view that names refuse.
func joiner(t *testing.T, refuse ID) *Member {
	t.Helper()
	f := &filterLog{refuse: refuse}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter })
	require.NoError(t, a.Join(0, []string{"b:7946"}))
	drain(a)
	return a
}

// echoing returns copies of pkts, a seed's view transfers, as its answer
// to a's latest join: echoing the join's token (Packet.JoinToken), which
// a view needs to answer the join (verify.go, answersJoin).
func echoing(a *Member, pkts ...Packet) []Packet {
	out := slices.Clone(pkts)
	for i := range out {
		if out[i].Kind == MsgSync {
			out[i].JoinToken = a.join.token
		}
	}
	return out
}

// stepAll steps pkts into m at now and returns the states delivered.
func stepAll(t *testing.T, m *Member, now time.Duration, pkts ...Packet) []RemoteState {
	t.Helper()
	var states []RemoteState
	for i := range pkts {
		require.NoError(t, m.Step(now, &pkts[i]))
		states = append(states, m.Ready().RemoteStates...)
	}
	return states
}

// The merge veto withholds the application state of a view it refuses:
// the state comes first, in a packet of its own that the filter accepts
// (it names only its sender), and is held until the view's verdict. An
// accepted view delivers it, in either order of arrival.
func TestMergeFilterWithholdsRefusedViewState(t *testing.T) {
	pk := joinAnswer(t)

	a := joiner(t, "p01")
	assert.Empty(t, stepAll(t, a, time.Millisecond, echoing(a, pk...)...))
	assert.Equal(t, 1, a.Stats().MergesRefused)
	assert.Equal(t, 1, a.Stats().StatesReceived)
	assert.Equal(t, 1, a.Stats().StatesWithheld)
	assert.Empty(t, a.app.held)

	want := RemoteState{From: node("b"), State: []byte("state of b"), Join: true}
	a = joiner(t, "nobody")
	assert.Equal(t, []RemoteState{want}, stepAll(t, a, time.Millisecond, echoing(a, pk...)...))
	assert.Zero(t, a.Stats().StatesWithheld)

	// The view overtakes the state (a stream and a datagram): the
	// acceptance is remembered for the state that follows.
	a = joiner(t, "nobody")
	got := stepAll(t, a, time.Millisecond, echoing(a, pk[1], pk[0])...)
	want.Join = false // the view ended the join before the state came
	assert.Equal(t, []RemoteState{want}, got)
}

// A state whose view never comes (lost) is dropped after two protocol
// periods; one whose view's parts never all come goes with them.
func TestMergeFilterDropsStateWithoutVerdict(t *testing.T) {
	pk := joinAnswer(t)
	a := joiner(t, "nobody")
	assert.Empty(t, stepAll(t, a, time.Millisecond, pk[0]))
	require.Len(t, a.app.held, 1)
	a.Tick(time.Second)
	require.Len(t, a.app.held, 1, "held for two periods")
	a.Tick(2*time.Second + time.Millisecond)
	assert.Empty(t, a.app.held)
	assert.Equal(t, 1, a.Stats().StatesWithheld)
	assert.Empty(t, a.Ready().RemoteStates)
	// The late view no longer delivers it.
	assert.Empty(t, stepAll(t, a, 2*time.Second+2*time.Millisecond, pk[1]))

	parts := splitView(t, 30, 400)
	a = joiner(t, "nobody")
	st := pk[0]
	st.From = parts[0].From
	assert.Empty(t, stepAll(t, a, time.Millisecond, st, parts[0]))
	a.Tick(2*time.Second + time.Millisecond)
	assert.Equal(t, 1, a.Stats().ViewsIncomplete)
	assert.Equal(t, 1, a.Stats().StatesWithheld)
	assert.Empty(t, a.app.held)
}

// Many senders' states held at once stay bounded, the oldest dropped.
func TestHeldStatesBounded(t *testing.T) {
	a := joiner(t, "nobody")
	for i := range 3 * maxHeldStates {
		id := ID(rune('A' + i))
		pk := Packet{Kind: MsgSync, From: Node{ID: id, Addr: string(id) + ":7946"}, To: a.self, State: []byte("s"),
			Updates: []Update{{Kind: UpdateAlive, Node: Node{ID: id, Addr: string(id) + ":7946"}, From: id}}}
		require.NoError(t, a.Step(time.Millisecond, &pk))
	}
	assert.Len(t, a.app.held, maxHeldStates)
	assert.Equal(t, 2*maxHeldStates, a.Stats().StatesWithheld)
}

// exchange steps out (packets from and to a and b) into their receivers
// at now until neither sends more, at most rounds times, and returns the
// states delivered to a.
func exchange(t *testing.T, a, b *Member, now time.Duration, out []Packet) []RemoteState {
	t.Helper()
	var states []RemoteState
	for round := 0; round < 4 && len(out) > 0; round++ {
		var next []Packet
		for i := range out {
			to := a
			if out[i].To.ID == b.self.ID {
				to = b
			}
			require.NoError(t, to.Step(now, &out[i]))
			rd := to.Ready()
			if to == a {
				states = append(states, rd.RemoteStates...)
			}
			next = append(next, rd.Packets...)
		}
		out = next
	}
	return states
}

// equalPair returns a, with a MergeFilter refusing views that name
// refuse, and b, with an application state, each knowing the other and
// also: their views are equal.
func equalPair(t *testing.T, refuse ID, also ...string) (a, b *Member) {
	t.Helper()
	f := &filterLog{refuse: refuse}
	a = newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter }, append([]string{"b"}, also...)...)
	b = newTest(t, "b", ModeLifeguard, func(c *Config) {
		c.LocalState = func(bool) []byte { return []byte("state of b") }
	}, append([]string{"a"}, also...)...)
	require.Equal(t, a.digest(), b.digest())
	return a, b
}

// An anti-entropy exchange whose views are equal sends no view. The state
// that answers this member's own pull, with a digest equal to its own,
// is delivered at once; the state of a member that pulls this one with an
// equal digest is held, and the pull is answered with a request for the
// puller's view, whose verdict delivers it. Without a MergeFilter a state
// is delivered as it comes.
func TestMergeFilterStateWithEqualDigest(t *testing.T) {
	wantB := []RemoteState{{From: node("b"), State: []byte("state of b")}}

	// a pulls b: b's answer is its state only, delivered at once.
	a, b := equalPair(t, "nobody")
	a.pushPull(0)
	pull, _ := drain(a)
	require.Len(t, pull, 1)
	require.NoError(t, b.Step(time.Millisecond, &pull[0]))
	answer, _ := drain(b)
	require.Len(t, answer, 1, "the state only: the digests match")
	require.NotEmpty(t, answer[0].State)
	assert.Equal(t, wantB, stepAll(t, a, 2*time.Millisecond, answer...))
	assert.Zero(t, a.Stats().StatesWithheld)
	// The exchange's one answer is spent: a replay of it is held.
	assert.Empty(t, stepAll(t, a, 3*time.Millisecond, answer...))
	assert.Len(t, a.app.held, 1)

	// Equal views that the filter refuses: a's own view holds x (no
	// filter saw it: bootstrapped here, gossiped in a group), and so does
	// b's, which b's answer claims. The filter, asked about a's view,
	// refuses, and the state is dropped.
	a, b = equalPair(t, "x", "x")
	for tries := 0; tries < 64; tries++ {
		a.pushPull(0)
		if pull, _ = drain(a); pull[0].To.ID == "b" {
			break
		}
	}
	require.Equal(t, ID("b"), pull[0].To.ID)
	require.NoError(t, b.Step(time.Millisecond, &pull[0]))
	answer, _ = drain(b)
	require.Len(t, answer, 1)
	assert.Empty(t, stepAll(t, a, 2*time.Millisecond, answer...))
	assert.Equal(t, 1, a.Stats().MergesRefused)
	assert.Equal(t, 1, a.Stats().StatesWithheld)
	assert.Empty(t, a.app.held)

	// An answer later than ProbeInterval after the pull is held.
	a, b = equalPair(t, "nobody")
	a.pushPull(0)
	pull, _ = drain(a)
	require.NoError(t, b.Step(time.Millisecond, &pull[0]))
	answer, _ = drain(b)
	assert.Empty(t, stepAll(t, a, time.Second, answer...))
	assert.Len(t, a.app.held, 1)

	// So is one received from another address than b's, or naming
	// another address for b: the peer's ID alone does not answer.
	for _, other := range []bool{true, false} {
		a, b = equalPair(t, "nobody")
		a.pushPull(0)
		pull, _ = drain(a)
		require.NoError(t, b.Step(time.Millisecond, &pull[0]))
		answer, _ = drain(b)
		if other {
			require.NoError(t, a.StepFromOtherSource(2*time.Millisecond, &answer[0]))
		} else {
			answer[0].From.Addr = "elsewhere:7946"
			require.NoError(t, a.Step(2*time.Millisecond, &answer[0]))
		}
		assert.Empty(t, a.Ready().RemoteStates)
		assert.Len(t, a.app.held, 1)
	}

	// b pulls a: b's state goes ahead of its digest and is held; a
	// answers the pull with a request for b's view, which delivers it.
	a, b = equalPair(t, "nobody")
	b.pushPull(0)
	out, _ := drain(b)
	require.Len(t, out, 2, "the state, then the digest")
	assert.Equal(t, wantB, exchange(t, a, b, time.Millisecond, out))
	assert.Zero(t, a.Stats().StatesWithheld)
	assert.Empty(t, a.app.held)
	assert.Equal(t, 1, a.Stats().DigestMatches)

	c := newTest(t, "c", ModeLifeguard, nil)
	out[0].To = c.self
	assert.Len(t, stepAll(t, c, time.Millisecond, out[0]), 1)
}

// The digest on a state is its sender's claim, and this member's digest
// is public (it goes with every pull): a member whose own Alive passes the
// MergeFilter but whose view the filter refuses puts this member's digest
// on a state it was not asked for. The state is held, not delivered,
// whether or not this member awaits another member's answer, and the
// forger's view, asked for when it pulls with the same forged digest, is
// refused, dropping the state.
func TestMergeFilterForgedDigestWithheld(t *testing.T) {
	f := &filterLog{refuse: "x"}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter }, "b", "m")
	m := newTest(t, "m", ModeLifeguard, nil, "a", "b", "x") // "x" in its view: refused
	pushPull := func(now time.Duration) []Packet {
		for tries := 0; tries < 64; tries++ {
			a.pushPull(now)
			out, _ := drain(a)
			if require.Len(t, out, 1); out[0].To.ID == "b" {
				return out
			}
		}
		t.Fatal("a never pulled b")
		return nil
	}
	pull := pushPull(0) // a awaits b's answer, and its digest is out
	forged := Packet{Kind: MsgSync, From: m.self, To: a.self, State: []byte("state of m"),
		Updates: []Update{m.selfAlive()}, Digest: pull[0].Digest}
	assert.Empty(t, stepAll(t, a, time.Millisecond, forged), "a state a did not ask for")
	assert.Len(t, a.app.held, 1)

	// The forger pulls with the same forged digest: a asks for its view,
	// refuses it, and drops the state.
	mp := Packet{Kind: MsgJoin, From: m.self, To: a.self, Updates: []Update{m.selfAlive()}, Digest: pull[0].Digest}
	require.NoError(t, a.Step(2*time.Millisecond, &mp))
	out, _ := drain(a)
	asks := slices.DeleteFunc(only(t, out, MsgJoin), func(p Packet) bool { return !p.Digest.IsZero() })
	require.Len(t, asks, 1, "a view request")
	require.NoError(t, m.Step(3*time.Millisecond, &asks[0]))
	view, _ := drain(m)
	assert.Empty(t, stepAll(t, a, 4*time.Millisecond, only(t, view, MsgSync)...))
	assert.Positive(t, a.Stats().MergesRefused)
	assert.Equal(t, 1, a.Stats().StatesWithheld)
	assert.Empty(t, a.app.held)

	// Forged again and never followed by a view: dropped after two periods.
	pushPull(10 * time.Second)
	assert.Empty(t, stepAll(t, a, 10*time.Second+time.Millisecond, forged))
	a.Tick(13 * time.Second)
	assert.Empty(t, a.Ready().RemoteStates)
	assert.Equal(t, 2, a.Stats().StatesWithheld)
}

// An anti-entropy exchange whose views differ: the initiator's state
// goes ahead of its digest and is held until its view, which the
// receiver asks for, arrives; the receiver's veto decides.
func TestMergeFilterStateOfExchange(t *testing.T) {
	for _, refuse := range []ID{"nobody", "p00"} {
		f := &filterLog{refuse: refuse}
		a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter }, "b")
		b := newTest(t, "b", ModeLifeguard, func(c *Config) {
			c.LocalState = func(bool) []byte { return []byte("state of b") }
		}, "a", "p00")
		var out []Packet
		for tries := 0; tries < 64 && (len(out) == 0 || out[0].To.ID != "a"); tries++ {
			b.pushPull(0) // a random peer: until it is a
			out, _ = drain(b)
		}
		require.Len(t, out, 2, "the state, then the digest")
		require.Equal(t, ID("a"), out[0].To.ID)
		var states []RemoteState
		for round := 0; round < 3 && len(out) > 0; round++ {
			var back []Packet
			for i := range out {
				require.NoError(t, a.Step(time.Millisecond, &out[i]))
				rd := a.Ready()
				states = append(states, rd.RemoteStates...)
				back = append(back, rd.Packets...)
				if round == 0 {
					assert.Empty(t, states, "held until b's view")
				}
			}
			for i := range back {
				require.NoError(t, b.Step(2*time.Millisecond, &back[i]))
			}
			out, _ = drain(b)
		}
		if refuse == "nobody" {
			assert.Equal(t, []RemoteState{{From: node("b"), State: []byte("state of b")}}, states)
			assert.Zero(t, a.Stats().StatesWithheld)
		} else {
			assert.Empty(t, states)
			assert.Equal(t, 1, a.Stats().StatesWithheld)
			assert.Positive(t, a.Stats().MergesRefused)
		}
		assert.Empty(t, a.app.held)
	}
}
