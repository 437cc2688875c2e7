package swim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/internal/worked"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func streamOn(c *Config) { c.StreamProbe = true }

// drainStreams copies the member's stream probe requests (and discards the
// rest of its output).
func drainStreams(m *Member) ([]Packet, []Event, []StreamProbe) {
	r := m.Ready()
	return slices.Clone(r.Packets), slices.Clone(r.Events), slices.Clone(r.StreamProbes)
}

// FuzzStreamAnswers: any interleaving of ticks, stream acks and stream
// failures, for any sequence number and member, never panics, never
// counts more stream-only probes than stream probes asked for, and never
// raises an EventStreamOnly about a member not asked for.
func FuzzStreamAnswers(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{5, 5, 5, 1, 1, 1, 9, 9, 200, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []Mode{ModeDetector, ModeLifeguard} {
			m := newTest(t, "a", mode, streamOn, "b", "c", "d")
			asked := map[ID]bool{}
			now := time.Duration(0)
			ids := []ID{"a", "b", "c", "d", "zz", ""}
			var lastSeq uint32
			for i, b := range data {
				switch b % 4 {
				case 0, 1:
					now += time.Duration(b) * 5 * time.Millisecond
					m.Tick(now)
				case 2:
					seq := lastSeq
					if b&0x10 != 0 {
						seq = uint32(b)
					}
					m.StreamAck(now, ids[i%len(ids)], seq)
				case 3:
					m.StreamFailed(now, ids[i%len(ids)], lastSeq)
				}
				r := m.Ready()
				for _, sp := range r.StreamProbes {
					asked[sp.To.ID] = true
					lastSeq = sp.Seq
				}
				for _, e := range r.Events {
					if e.Kind == EventStreamOnly && !asked[e.Node.ID] {
						t.Fatalf("EventStreamOnly about %s, never asked for", e.Node.ID)
					}
				}
				if st := m.Stats(); st.StreamOnly > st.StreamProbes {
					t.Fatalf("%d stream-only probes of %d asked", st.StreamOnly, st.StreamProbes)
				}
			}
		}
	})
}

// TestWorkedStreamProbe replays the worked example of docs/algorithms.md,
// “SWIM: stream fallback probe”.
func TestWorkedStreamProbe(t *testing.T) {
	tabs, err := worked.Read("../docs/algorithms.md")
	require.NoError(t, err)
	tab := tabs["swim-stream"]
	require.NotNil(t, tab, "docs/algorithms.md has no worked example swim-stream")
	require.Len(t, tab.Rows, 4)
	cell := func(i int, col string) string {
		c, err := tab.Cell(i, col)
		require.NoError(t, err)
		return c
	}
	eq := func(i int, col string, got float64) {
		assert.NoError(t, worked.Compare(cell(i, col), got), "row %d column %q", i+1, col)
	}
	at := func(i int) time.Duration {
		v, _, err := worked.Number(cell(i, "t (ms)"))
		require.NoError(t, err)
		return time.Duration(v) * time.Millisecond
	}
	a := newTest(t, "a", ModeLifeguard, streamOn, "b", "c", "d", "e", "f")
	var target Node
	row := func(i int, pk []Packet, ev []Event, sp []StreamProbe) {
		eq(i, "pings", float64(len(only(t, pk, MsgPing))))
		eq(i, "ping-reqs", float64(len(only(t, pk, MsgPingReq))))
		eq(i, "stream pings", float64(len(sp)))
		if c := cell(i, "stream deadline (ms)"); c != "–" {
			require.Len(t, sp, 1)
			eq(i, "stream deadline (ms)", float64(sp[0].Deadline/time.Millisecond))
		}
		n := 0
		for _, e := range ev {
			if e.Kind == EventStreamOnly && e.Node == target {
				n++
			}
		}
		eq(i, "EventStreamOnly", float64(n))
		assert.Equal(t, cell(i, "b's state at a"), a.State(target.ID).String(), "row %d", i+1)
	}
	a.Tick(at(0))
	pk, ev, sp := drainStreams(a)
	target = pk[0].To // the member the table calls b
	row(0, pk, ev, sp)
	a.Tick(at(1))
	pk, ev, sp = drainStreams(a)
	row(1, pk, ev, sp)
	a.StreamAck(at(2), target.ID, sp[0].Seq)
	pk, ev, sp = drainStreams(a)
	row(2, pk, ev, sp)
	a.Tick(at(3))
	pk, ev, sp = drainStreams(a)
	row(3, pk, ev, sp)
	assert.NotEqual(t, target, only(t, pk, MsgPing)[0].To, "the next period probes another member")
}

// A member suspected by its prober learns it from the stream ping (the
// buddy notice it carries), refutes, and its stream ack carries the new
// Alive: the prober clears the suspicion with no datagram from the member.
// A ping for another member, or from itself, is refused and changes
// nothing.
func TestAnswerStreamPingRefutes(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, streamOn, "b")
	b := newTest(t, "b", ModeLifeguard, streamOn, "a")
	// a's first probe of b fails: a suspects b.
	_, ev := advance(a, time.Second)
	require.Len(t, ev, 1)
	require.Equal(t, EventSuspect, ev[0].Kind)
	// The next probe (LHM 1: timeout 1 s): direct timeout, the stream
	// ping carries a's suspicion.
	a.Tick(2 * time.Second)
	_, _, sp := drainStreams(a)
	require.Len(t, sp, 1)
	require.Equal(t, []Update{{Kind: UpdateSuspect, Node: node("b"), From: "a"}}, sp[0].Updates)
	ping := Packet{Kind: MsgPing, From: node("a"), To: sp[0].To, Ping: Ping{Seq: sp[0].Seq}, Updates: sp[0].Updates}

	for _, bad := range []Packet{
		{Kind: MsgPing, From: node("a"), To: node("c"), Ping: Ping{Seq: 1}},
		{Kind: MsgPing, From: node("b"), To: node("b"), Ping: Ping{Seq: 1}},
		{Kind: MsgAck, From: node("a"), To: node("b")},
		{Kind: MsgPing, To: node("b")},
	} {
		_, err := b.AnswerStreamPing(2100*time.Millisecond, &bad)
		assert.ErrorIs(t, err, ErrPacket, "%+v", bad)
	}
	assert.Zero(t, b.Incarnation())

	ack, err := b.AnswerStreamPing(2100*time.Millisecond, &ping)
	require.NoError(t, err)
	assert.Equal(t, Incarnation(1), b.Incarnation(), "b refuted")
	pk, _ := drain(b)
	assert.Empty(t, only(t, pk, MsgAck), "no datagram ack to a stream ping")
	assert.Equal(t, MsgAck, ack.Kind)
	assert.Equal(t, sp[0].Seq, ack.Ack.Seq)
	assert.Equal(t, node("a"), ack.To)
	require.Len(t, ack.Updates, 1)
	u := ack.Updates[0]
	assert.Equal(t, []any{UpdateAlive, node("b"), Incarnation(1), ID("b")}, []any{u.Kind, u.Node, u.Incarnation, u.From})

	// a applies the ack's updates as gossip from b, then takes the ack.
	g := Packet{Kind: MsgGossip, From: ack.From, To: node("a"), Updates: ack.Updates}
	require.NoError(t, a.Step(2100*time.Millisecond, &g))
	a.StreamAck(2100*time.Millisecond, "b", ack.Ack.Seq)
	_, ev = drain(a)
	require.NotEmpty(t, ev)
	assert.Equal(t, EventAlive, ev[0].Kind)
	assert.Equal(t, StateAlive, a.State("b"))
}

// A stream ping that did not come from its sender's claimed address
// (AnswerStreamPingFromOtherSource) is answered, but the sender's own
// Alive it carries is relayed gossip, not the sender speaking: 300 pings
// from as many forged members leave the unverified quota of them,
// unverified, where the same pings from their claimed addresses admit
// every one, unverified until it answers a challenge (receipt.go).
func TestStreamPingFromOtherSourceDoesNotSpeak(t *testing.T) {
	for _, other := range []bool{true, false} {
		a := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
		answer := a.AnswerStreamPing
		if other {
			answer = a.AnswerStreamPingFromOtherSource
		}
		for i := range 300 {
			g := node(fmt.Sprintf("g%04d", i))
			ack, err := answer(time.Millisecond, &Packet{Kind: MsgPing, From: g, To: node("a"), Ping: Ping{Seq: uint32(i)},
				Updates: []Update{{Kind: UpdateAlive, Node: g, From: g.ID}}})
			require.NoError(t, err)
			require.Equal(t, MsgAck, ack.Kind)
			drain(a)
		}
		if other {
			assert.Equal(t, 1+3+unverifiedFloor, a.NumAlive())
			assert.Equal(t, unverifiedFloor, a.unverified, "none verified")
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

// A stream probe of a member not verified is paid from its ledger
// (requestStreamProbe; issue 27, user40 F4): g, learned by gossip from
// b, gets none while never heard from at its address, none when its one
// packet (its own Alive, credit 120) pays only for its challenge and
// probe pings, and one (for its probe and its retry) when a larger packet
// pays for it, its ledger charged the stream ping's bytes and
// streamOverhead.
func TestStreamProbeOfUnverifiedPaidByLedger(t *testing.T) {
	g := Node{ID: "g", Addr: "victim:1"}
	own := Update{Kind: UpdateAlive, Node: g, From: g.ID}
	var many []Update
	for i := range 12 {
		many = append(many, Update{Kind: UpdateSuspect, Node: Node{ID: ID(fmt.Sprintf("x%02d", i)), Addr: fmt.Sprintf("x:%d", i)}, From: g.ID})
	}
	for _, c := range []struct {
		name   string
		pkt    *Packet // from g's address, nil: none
		stream bool
	}{
		{"never heard from", nil, false},
		{"own Alive", &Packet{Kind: MsgGossip, From: g, To: node("a"), Updates: []Update{own}}, false},
		{"a larger packet", &Packet{Kind: MsgGossip, From: g, To: node("a"), Updates: append([]Update{own}, many...)}, true},
	} {
		a := newTest(t, "a", ModeLifeguard, streamOn)
		a.Tick(0)
		drainStreams(a)
		require.NoError(t, a.Step(time.Millisecond, &Packet{Kind: MsgGossip, From: node("b"), To: a.Self(), Updates: []Update{own}}))
		drainStreams(a)
		if c.pkt != nil {
			require.NoError(t, a.Step(10*time.Millisecond, c.pkt))
			drainStreams(a)
		}
		var sps []StreamProbe
		credit := 0
		for now := 20 * time.Millisecond; now <= 3*time.Second; now += 10 * time.Millisecond {
			credit = a.peers["g"].credit
			a.Tick(now)
			_, _, s := drainStreams(a)
			if len(s) > 0 && len(sps) == 0 {
				ping := Packet{Kind: MsgPing, From: a.Self(), To: g, Ping: Ping{Seq: s[0].Seq}, Updates: s[0].Updates}
				assert.Equal(t, credit-a.sentBytes(&ping)-streamOverhead, a.peers["g"].credit, "%s: the ledger charged", c.name)
			}
			sps = append(sps, s...)
		}
		require.NotNil(t, a.peers["g"], c.name)
		assert.False(t, a.peers["g"].verified, c.name)
		assert.Positive(t, a.Stats().ProbesFailed, "%s: g probed", c.name)
		if c.stream {
			require.NotEmpty(t, sps, c.name)
			assert.Equal(t, g, sps[0].To, c.name)
			assert.Equal(t, len(sps), a.Stats().StreamProbes, c.name)
		} else {
			assert.Empty(t, sps, c.name)
			assert.Zero(t, a.Stats().StreamProbes, c.name)
			assert.Positive(t, a.Stats().StreamProbesUnpaid, c.name)
		}
	}
}
