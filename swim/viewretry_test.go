package swim

import (
	"fmt"
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

// pingOf returns a ping from j to m carrying Alive updates of b, c, d, …
// until it is at least size bytes (Packet.Size).
func pingOf(m *Member, j Node, size int) Packet {
	p := Packet{Kind: MsgPing, From: j, To: m.Self(), Ping: Ping{Seq: 1}}
	for i := 0; p.Size() < size; i++ {
		id := fmt.Sprintf("u%d", i)
		p.Updates = append(p.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
	}
	return p
}

// A packet from a member this member does not know (a joiner whose
// announcement it missed), at least 1.5 times the size of a view request,
// gets a view request, and when the view never comes the request is
// asked again two and then four periods later, and no more: three
// requests, within twice the bytes received; every request within the
// budget of one per period. A packet only large enough to draw one
// request (asksView: at least half its size), as a forged one from a
// victim's address would be, draws no retry; a sender that becomes known
// in the meantime is not asked again.
func TestViewRequestRetried(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	j := node("j")
	start := func() *Member {
		m := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
		m.Tick(0)
		drain(m)
		return m
	}
	now := 500 * time.Millisecond

	a := start()
	req := a.askViewSize(j)
	ack := a.bareReplySize(j, &Packet{Kind: MsgPing}) // each ping's ack counts too (reply.go)
	big := pingOf(a, j, req+req/2+(ack+1)/2)
	require.NoError(t, a.Step(now, &big))
	pk, _ := drain(a)
	first := only(t, pk, MsgJoin)
	require.Len(t, first, 1, "the view request")
	assert.Equal(t, j.Addr, first[0].To.Addr)
	got := viewAsks(t, a, j.Addr, time.Minute)
	assert.Equal(t, []time.Duration{now + 2*time.Second, now + 6*time.Second}, got)
	assert.Equal(t, 3, a.Stats().ViewRequests)

	// Large enough for one request only: no retry.
	b := start()
	small := pingOf(b, j, oneRequest(b, j))
	require.Less(t, 2*small.Size(), 2*req+ack, "pays for no retry")
	require.NoError(t, b.Step(now, &small))
	pk, _ = drain(b)
	require.Len(t, only(t, pk, MsgJoin), 1, "the view request")
	assert.Empty(t, viewAsks(t, b, j.Addr, time.Minute))
	assert.Equal(t, 1, b.Stats().ViewRequests)

	// The same, then the sender's challenge ping: it pays for one retry.
	c := start()
	require.NoError(t, c.Step(now, &small))
	drain(c)
	challenge := pingOf(c, j, 0)
	for 2*(small.Size()+challenge.Size()) < 2*(req+ack) {
		challenge = pingOf(c, j, challenge.Size()+1)
	}
	require.NoError(t, c.Step(now+10*time.Millisecond, &challenge))
	drain(c)
	assert.Equal(t, []time.Duration{now + 2*time.Second}, viewAsks(t, c, j.Addr, time.Minute))

	// Known by the time the retry is due (its view, or a gossip): none.
	d := start()
	require.NoError(t, d.Step(now, &big))
	drain(d)
	hear(t, d, now+time.Second, MsgGossip, "j")
	assert.Empty(t, viewAsks(t, d, j.Addr, time.Minute))
	assert.Equal(t, 1, d.Stats().ViewRequests)
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
		for _, id := range []string{"b", "c", "d", "e", "g", "h"} {
			ping.Updates = append(ping.Updates, Update{Kind: UpdateAlive, Node: node(id), From: ID(id)})
		}
		require.NoError(t, a.Step(now, &ping))
		pk, _ = drain(a)
		count(pk)
	}
	assert.LessOrEqual(t, asks, 60)
	pk, _ := advance(a, 2*time.Minute)
	count(pk)
	assert.LessOrEqual(t, asks, 60+viewAskSlots*viewAskRetries, "retries of the last requests only")
}

// A retry is paid for at the size it has when sent: after this member's
// metadata grew, a retry the first packet paid for at the old size is
// not sent, and the entry is forgotten.
func TestViewRequestRetryPaidAtItsSize(t *testing.T) {
	far := func(c *Config) { c.PushPullInterval = new(100 * time.Hour) }
	j := node("j")
	a := newTest(t, "a", ModeLifeguard, far, "b", "c", "d")
	a.Tick(0)
	drain(a)
	now := 500 * time.Millisecond
	req := a.askViewSize(j)
	ack := a.bareReplySize(j, &Packet{Kind: MsgPing})
	big := pingOf(a, j, req+req/2+(ack+1)/2) // pays for two retries at req
	require.NoError(t, a.Step(now, &big))
	pk, _ := drain(a)
	require.Len(t, only(t, pk, MsgJoin), 1, "the view request")
	require.NoError(t, a.SetMeta(make([]byte, 2*req)))
	require.Greater(t, req+ack+a.askViewSize(j), 2*big.Size(), "pays for no retry now")
	assert.Empty(t, viewAsks(t, a, j.Addr, time.Minute))
	assert.Equal(t, 1, a.Stats().ViewRequests)
	assert.Empty(t, a.sync.asks)
}
