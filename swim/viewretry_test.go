package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewAsks returns the instants at which m, ticked up to until (every
// ping acked at once), sent a view request (a MsgJoin without digest) to
// the member at addr.
func viewAsks(t *testing.T, m *Member, addr string, until time.Duration) []time.Duration {
	t.Helper()
	var at []time.Duration
	tickUntil(m, until, func(now time.Duration, pk []Packet, _ []Event) {
		for _, p := range pk {
			switch {
			case p.Kind == MsgJoin && p.Digest.IsZero() && p.To.Addr == addr:
				at = append(at, now)
			case p.Kind == MsgPing:
				ack := Packet{Kind: MsgAck, From: p.To, To: m.Self(), Ack: Ack{Seq: p.Ping.Seq}}
				require.NoError(t, m.Step(now, &ack))
			}
		}
	})
	return at
}

// A ping from a member this member does not know (a joiner whose
// announcement it missed) gets a view request; when that request or its
// answer is lost, the request is asked again two and then four periods
// later, and no more; every request within the budget of one per period.
// A sender that becomes known in the meantime is not asked again.
func TestViewRequestRetried(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	j := node("j")
	ping := Packet{Kind: MsgPing, From: j, To: a.Self(), Ping: Ping{Seq: 1}}
	now := 500 * time.Millisecond
	require.NoError(t, a.Step(now, &ping))
	pk, _ := drain(a)
	first := only(t, pk, MsgJoin)
	require.Len(t, first, 1, "the view request")
	assert.Equal(t, j.Addr, first[0].To.Addr)
	got := viewAsks(t, a, j.Addr, time.Minute)
	assert.Equal(t, []time.Duration{now + 2*time.Second, now + 6*time.Second}, got)
	assert.Equal(t, 3, a.Stats().ViewRequests)

	// Known by the time the retry is due (its view, or a gossip): none.
	b := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	b.Tick(0)
	drain(b)
	require.NoError(t, b.Step(now, &ping))
	drain(b)
	hear(t, b, now+time.Second, MsgGossip, "j")
	assert.Empty(t, viewAsks(t, b, j.Addr, time.Minute))
	assert.Equal(t, 1, b.Stats().ViewRequests)
}

// Pings from ever new unknown senders (forged, at one address), ten a
// period for a minute, make a member send them no more view requests than
// one per period, retries included, and after the pings stop only the
// retries of the last viewAskSlots requests.
func TestViewRequestRetriesWithinBudget(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	asks := 0
	count := func(pk []Packet) {
		for _, p := range pk {
			if p.Kind == MsgJoin && p.Digest.IsZero() && p.To.Addr == "x:7946" {
				asks++
			}
		}
	}
	for i := range 600 {
		now := time.Duration(i) * 100 * time.Millisecond
		pk, _ := advance(a, now)
		count(pk)
		f := Node{ID: ID("x" + string(rune('A'+i%26)) + string(rune('A'+i/26))), Addr: "x:7946"}
		ping := Packet{Kind: MsgPing, From: f, To: a.Self(), Ping: Ping{Seq: uint32(i)}}
		require.NoError(t, a.Step(now, &ping))
		pk, _ = drain(a)
		count(pk)
	}
	assert.LessOrEqual(t, asks, 60)
	pk, _ := advance(a, 2*time.Minute)
	count(pk)
	assert.LessOrEqual(t, asks, 60+viewAskSlots*viewAskRetries, "retries of the last requests only")
}
