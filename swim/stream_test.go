package swim

import (
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

// The stream probe goes out with the ping-reqs, when the direct ping timed
// out (memberlist's probeNode), for the probe's target and sequence number,
// with the end of the period as its deadline.
func TestStreamProbeRequestedWithPingReqs(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, streamOn, "b", "c", "d", "e", "f")
	a.Tick(0)
	pk, _, sp := drainStreams(a)
	require.Len(t, pk, 1)
	assert.Empty(t, sp, "no stream probe while the direct ping may still be answered")
	ping := pk[0]
	a.Tick(499 * time.Millisecond)
	_, _, sp = drainStreams(a)
	assert.Empty(t, sp)
	a.Tick(500 * time.Millisecond)
	pk, _, sp = drainStreams(a)
	assert.Len(t, only(t, pk, MsgPingReq), 3)
	require.Equal(t, []StreamProbe{{To: ping.To, Seq: ping.Ping.Seq, Deadline: time.Second}}, sp)
	assert.Equal(t, 1, a.Stats().StreamProbes)

	// Off by default: the same probe asks for no stream ping.
	b := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d", "e", "f")
	b.Tick(0)
	b.Tick(500 * time.Millisecond)
	_, _, sp = drainStreams(b)
	assert.Empty(t, sp)
	assert.False(t, b.Config().StreamProbe)
}

// A probe answered only over the stream: the target is not suspected, the
// local health multiplier is unchanged (memberlist leaves its awareness
// alone then), and an EventStreamOnly names the target. A datagram ack
// that arrives in the same period wins: no warning.
func TestStreamOnlyProbe(t *testing.T) {
	for _, mode := range []Mode{ModeLifeguard, ModeDetector, ModeSWIM} {
		a := newTest(t, "a", mode, streamOn, "b", "c", "d", "e", "f")
		a.Tick(0)
		pk, _ := drain(a)
		target := pk[0].To
		a.Tick(500 * time.Millisecond)
		_, _, sp := drainStreams(a)
		require.Len(t, sp, 1, "%v", mode)
		a.StreamAck(600*time.Millisecond, target.ID, sp[0].Seq)
		_, ev, _ := drainStreams(a)
		assert.Empty(t, ev, "%v: the verdict waits for the end of the period", mode)
		_, ev = advance(a, time.Second)
		require.Len(t, ev, 1, "%v: %v", mode, ev)
		assert.Equal(t, Event{Kind: EventStreamOnly, Node: target, From: "a", At: time.Second}, ev[0], "%v", mode)
		st := a.Stats()
		assert.Equal(t, 1, st.StreamOnly, "%v", mode)
		assert.Zero(t, st.ProbesFailed, "%v", mode)
		assert.Zero(t, st.Suspicions, "%v", mode)
		assert.Zero(t, a.LocalHealthMultiplier(), "%v", mode)
	}

	// The relayed datagram ack comes after the stream's: the probe is an
	// ordinary success.
	a := newTest(t, "a", ModeLifeguard, streamOn, "b", "c", "d", "e", "f")
	a.Tick(0)
	a.Tick(500 * time.Millisecond)
	pk, _, sp := drainStreams(a)
	require.Len(t, sp, 1)
	a.StreamAck(550*time.Millisecond, sp[0].To.ID, sp[0].Seq)
	req := only(t, pk, MsgPingReq)[0]
	ack := Packet{Kind: MsgAck, From: req.To, To: node("a"), Ack: Ack{Seq: req.PingReq.Seq}}
	require.NoError(t, a.Step(700*time.Millisecond, &ack))
	_, ev := advance(a, time.Second)
	assert.Empty(t, ev)
	assert.Zero(t, a.Stats().StreamOnly)
}

// Answers that do not match the current probe change nothing: another
// sequence number, another member, an answer after the period ended, an
// answer when no stream probe was asked for.
func TestStreamAckMismatchIgnored(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, streamOn, "b")
	a.Tick(0)
	a.StreamAck(100*time.Millisecond, "b", 1) // no stream probe asked yet
	a.Tick(500 * time.Millisecond)
	_, _, sp := drainStreams(a)
	require.Equal(t, []StreamProbe{{To: node("b"), Seq: 1, Deadline: time.Second}}, sp)
	a.StreamAck(600*time.Millisecond, "b", 2)
	a.StreamAck(600*time.Millisecond, "c", 1)
	a.StreamAck(600*time.Millisecond, "a", 1)
	_, ev := advance(a, time.Second)
	require.Len(t, ev, 1)
	assert.Equal(t, EventSuspect, ev[0].Kind)
	a.StreamAck(time.Second+time.Millisecond, "b", 1) // too late
	_, ev = drain(a)
	assert.Empty(t, ev)
	assert.Zero(t, a.Stats().StreamOnly)
	assert.Equal(t, 1, a.Stats().Suspicions)

	// The next stream ping carries b's suspicion, so that b, which
	// datagrams may not reach, can refute.
	advance(a, 1500*time.Millisecond)
	a.Tick(2500 * time.Millisecond)
	_, _, sp = drainStreams(a)
	require.Len(t, sp, 1)
	assert.Equal(t, []Update{{Kind: UpdateSuspect, Node: node("b"), From: "a"}}, sp[0].Updates)
}

// EventStreamOnly is rate-limited per member (StreamOnlyEventEvery);
// Stats.StreamOnly counts every such probe.
func TestStreamOnlyEventRateLimited(t *testing.T) {
	a := newTest(t, "a", ModeLifeguard, streamOn, "b")
	var events []Event
	const periods = 70
	for k := range periods {
		start := time.Duration(k) * time.Second
		a.Tick(start)
		a.Tick(start + 500*time.Millisecond)
		_, ev, sp := drainStreams(a)
		events = append(events, ev...)
		require.Len(t, sp, 1, "period %d", k)
		a.StreamAck(start+600*time.Millisecond, "b", sp[0].Seq)
	}
	a.Tick(periods * time.Second)
	_, ev := drain(a)
	events = append(events, ev...)
	require.Len(t, events, 2, "%v", events)
	assert.Equal(t, time.Second, events[0].At)
	assert.Equal(t, time.Second+StreamOnlyEventEvery, events[1].At)
	assert.Equal(t, periods, a.Stats().StreamOnly)
	assert.Equal(t, StateAlive, a.State("b"))
}

// The detector gate's retry ends as soon as every intermediate has nacked;
// with a stream probe out it waits for the stream's answer: a stream ack
// makes it a stream-only success at once, a stream failure a failed probe
// once the retry's direct timeout has passed.
func TestStreamProbeAndGateRetry(t *testing.T) {
	for _, answer := range []string{"ack", "fail"} {
		a := newTest(t, "a", ModeDetector, func(c *Config) {
			c.StreamProbe = true
			c.PeerDetector = FixedPeerDetector(5 * time.Second)
		}, "b", "c", "d", "e")
		for _, from := range []string{"b", "c", "d", "e"} {
			p := Packet{Kind: MsgAck, From: node(from), To: node("a"), Ack: Ack{Seq: 999}}
			require.NoError(t, a.Step(0, &p))
		}
		a.Tick(time.Millisecond)
		pk, _ := drain(a)
		target := pk[0].To
		advance(a, time.Second) // the first probe's stream ping goes unanswered
		// The gate forgives the first failure and retries at once: ping,
		// ping-reqs and the stream probe.
		now := time.Millisecond + time.Second
		a.Tick(now)
		require.Equal(t, 1, a.Stats().GateDeferrals)
		pk, _, sp := drainStreams(a)
		require.Len(t, sp, 1, answer)
		assert.Equal(t, target, sp[0].To)
		for _, r := range only(t, pk, MsgPingReq) {
			nack := Packet{Kind: MsgNack, From: r.To, To: node("a"), Nack: Nack{Seq: r.PingReq.Seq}}
			require.NoError(t, a.Step(now+100*time.Millisecond, &nack))
		}
		_, ev := drain(a)
		assert.Empty(t, ev, "%s: all nacked, but the stream has not answered", answer)
		if answer == "ack" {
			a.StreamAck(now+200*time.Millisecond, target.ID, sp[0].Seq)
			_, ev = drain(a)
			require.Len(t, ev, 1)
			assert.Equal(t, EventStreamOnly, ev[0].Kind)
			assert.Equal(t, now+200*time.Millisecond, ev[0].At)
		} else {
			// Every path has failed; the retry still waits for its own
			// direct timeout (500 ms at the raised LHM).
			to, _ := a.ProbeTimeout(target.ID)
			require.Greater(t, to, 200*time.Millisecond)
			a.StreamFailed(now+200*time.Millisecond, target.ID, sp[0].Seq)
			_, ev = drain(a)
			assert.Empty(t, ev)
			a.Tick(now + to)
			_, ev = drain(a)
			require.Len(t, ev, 1)
			assert.Equal(t, EventSuspect, ev[0].Kind)
			assert.Equal(t, now+to, ev[0].At)
		}
	}
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
