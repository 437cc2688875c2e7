package swim

import (
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
	assert.Empty(t, stepAll(t, a, time.Millisecond, pk...))
	assert.Equal(t, 1, a.Stats().MergesRefused)
	assert.Equal(t, 1, a.Stats().StatesReceived)
	assert.Equal(t, 1, a.Stats().StatesWithheld)
	assert.Empty(t, a.app.held)

	want := RemoteState{From: node("b"), State: []byte("state of b"), Join: true}
	a = joiner(t, "nobody")
	assert.Equal(t, []RemoteState{want}, stepAll(t, a, time.Millisecond, pk...))
	assert.Zero(t, a.Stats().StatesWithheld)

	// The view overtakes the state (a stream and a datagram): the
	// acceptance is remembered for the state that follows.
	a = joiner(t, "nobody")
	got := stepAll(t, a, time.Millisecond, pk[1], pk[0])
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

// An anti-entropy exchange whose views are equal sends no view: the
// state's digest, equal to the receiver's, delivers it at once. Without
// a MergeFilter a state is delivered as it comes.
func TestMergeFilterStateWithEqualDigest(t *testing.T) {
	f := &filterLog{refuse: "nobody"}
	a := newTest(t, "a", ModeLifeguard, func(c *Config) { c.MergeFilter = f.filter }, "b")
	b := newTest(t, "b", ModeLifeguard, func(c *Config) {
		c.LocalState = func(bool) []byte { return []byte("state of b") }
	}, "a")
	require.Equal(t, a.digest(), b.digest())
	b.sendState(a.self, false)
	pk, _ := drain(b)
	require.Len(t, pk, 1)
	assert.Len(t, stepAll(t, a, time.Millisecond, pk...), 1)

	c := newTest(t, "c", ModeLifeguard, nil)
	pk[0].To = c.self
	assert.Len(t, stepAll(t, c, time.Millisecond, pk...), 1)
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
