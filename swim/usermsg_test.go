package swim

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/internal/worked"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkedBroadcastWindow replays docs/algorithms.md, “SWIM: application
// messages”: broadcasts from one origin delivered or dropped by number.
func TestWorkedBroadcastWindow(t *testing.T) {
	tabs, err := worked.Read("../docs/algorithms.md")
	require.NoError(t, err)
	tab := tabs["swim-broadcast-window"]
	require.NotNil(t, tab)
	require.NotEmpty(t, tab.Rows)
	var w seenWindow
	for i := range tab.Rows {
		c, err := tab.Cell(i, "number")
		require.NoError(t, err)
		v, _, err := worked.Number(c)
		require.NoError(t, err)
		want, err := tab.Cell(i, "delivered")
		require.NoError(t, err)
		assert.Equal(t, want == "yes", w.fresh(uint64(v)), "row %d", i+1)
	}
}

// TestSeenWindowProperties: every number is delivered at most once, and
// every number within 64 below the highest is delivered once in any order.
func TestSeenWindowProperties(t *testing.T) {
	var w seenWindow
	got := map[uint64]int{}
	// 1..200 in a scrambled order with a bounded displacement (< 64).
	for base := uint64(0); base < 200; base += 50 {
		for _, off := range []uint64{49, 0, 25, 12, 37, 1, 48, 24} {
			if w.fresh(base + off + 1) {
				got[base+off+1]++
			}
		}
		for off := uint64(0); off < 50; off++ {
			if w.fresh(base + off + 1) {
				got[base+off+1]++
			}
		}
	}
	for n := uint64(1); n <= 200; n++ {
		assert.Equal(t, 1, got[n], "number %d", n)
	}
	assert.False(t, w.fresh(0))
	assert.True(t, w.fresh(1<<64-1))
	assert.False(t, w.fresh(1<<64-1))
}

// pump delivers every packet of the members to their addressees, the
// members read in the order of their IDs and what each sent delivered once
// all have been read, until none sends or rounds run out; it returns the
// messages each received. (It used to read each member once a round and
// then take only the messages of a second read, dropping the packets sent
// between the two.)
func pump(t *testing.T, now time.Duration, ms map[ID]*Member, rounds int) map[ID][]Message {
	t.Helper()
	ids := slices.Sorted(maps.Keys(ms))
	got := map[ID][]Message{}
	for range rounds {
		var out []Packet
		for _, id := range ids {
			r := ms[id].Ready()
			got[id] = append(got[id], r.Messages...)
			out = append(out, r.Packets...)
		}
		if len(out) == 0 {
			break
		}
		for i := range out {
			if to := ms[out[i].To.ID]; to != nil {
				require.NoError(t, to.Step(now, &out[i]))
			}
		}
	}
	return got
}

// TestBroadcastQueue: broadcasts ride after the updates within the packet
// size, least sent first; a keyed broadcast supersedes its predecessor;
// each is sent λ·ceil(log10(n+1)) times; the queue is bounded.
func TestBroadcastQueue(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.MaxQueuedBroadcasts = 4; c.MaxPacketSize = 400 }, "b", "c")
	require.NoError(t, a.Broadcast("k", []byte("one")))
	require.NoError(t, a.Broadcast("k", []byte("two")))
	assert.Equal(t, 1, a.Stats().BroadcastsSuperseded)
	require.Len(t, a.app.queue, 1)
	assert.Equal(t, "two", string(a.app.queue[0].b.Data))
	assert.Equal(t, uint64(2), a.app.queue[0].b.Seq)

	// Four 100-byte broadcasts: a 400-byte ping holds only some of them.
	for i := range 4 {
		require.NoError(t, a.Broadcast("", bytes.Repeat([]byte{byte('0' + i)}, 100)))
	}
	assert.Equal(t, 1, a.Stats().BroadcastsDropped, "queue of 4: the oldest unsent (\"two\") went")
	require.Len(t, a.app.queue, 4)
	a.send(Packet{Kind: MsgPing, To: node("b")})
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	assert.LessOrEqual(t, pk[0].Size(), 400)
	n := len(pk[0].Broadcasts)
	assert.True(t, n >= 2 && n < 4, "%d broadcasts", n)
	assert.Equal(t, "3", string(pk[0].Broadcasts[0].Data[:1]), "newest first among the unsent")
	// Group of 3: each is sent once to b and once to c, never twice to one.
	got := map[string]int{}
	for _, b := range pk[0].Broadcasts {
		got["b"+string(b.Data[:1])]++
	}
	for i := range 10 {
		to := []string{"b", "c"}[i%2]
		a.send(Packet{Kind: MsgPing, To: node(to)})
		pk, _ := drain(a)
		assert.LessOrEqual(t, pk[0].Size(), 400)
		for _, b := range pk[0].Broadcasts {
			got[to+string(b.Data[:1])]++
		}
	}
	assert.Equal(t, map[string]int{"b0": 1, "b1": 1, "b2": 1, "b3": 1, "c0": 1, "c1": 1, "c2": 1, "c3": 1}, got)
	assert.Empty(t, a.app.queue, "gone once every live member had it")
}

// TestBroadcastRetransmitLimit: in a group of 20 each broadcast is sent to
// λ·ceil(log10(n+1)) = 8 distinct members, then dropped.
func TestBroadcastRetransmitLimit(t *testing.T) {
	var peers []string
	for i := range 19 {
		peers = append(peers, fmt.Sprintf("p%02d", i))
	}
	a := newTest(t, "a", ModeDetector, nil, peers...)
	limit := retransmitLimit(a.cfg.RetransmitMult, a.NumAlive())
	require.Equal(t, 8, limit)
	require.NoError(t, a.Broadcast("", []byte("x")))
	to := map[string]int{}
	for i := range 60 {
		a.send(Packet{Kind: MsgPing, To: node(peers[i%len(peers)])})
		pk, _ := drain(a)
		if len(pk[0].Broadcasts) > 0 {
			to[peers[i%len(peers)]]++
		}
	}
	assert.Len(t, to, limit)
	for p, n := range to {
		assert.Equal(t, 1, n, p)
	}
	assert.Empty(t, a.app.queue)
}

// TestBroadcastReachesAll: in a static group of 12, one broadcast reaches
// every member once, by infection (each member passes it on), with only
// the protocol's own packets carrying it.
func TestBroadcastReachesAll(t *testing.T) {
	var ids []string
	for i := range 12 {
		ids = append(ids, fmt.Sprintf("m%02d", i))
	}
	ms := map[ID]*Member{}
	for i, id := range ids {
		var peers []string
		peers = append(peers, ids[:i]...)
		peers = append(peers, ids[i+1:]...)
		m := newTest(t, id, ModeDetector, nil, peers...)
		m.rng = rand.New(rand.NewPCG(uint64(i+1), 7))
		ms[ID(id)] = m
	}
	require.NoError(t, ms["m00"].Broadcast("", []byte("hello")))
	got := map[ID]int{}
	for tick := time.Duration(0); tick <= 30*time.Second; tick += 100 * time.Millisecond {
		for _, m := range ms {
			m.Tick(tick)
		}
		for id, msgs := range pump(t, tick, ms, 8) {
			for _, msg := range msgs {
				assert.Equal(t, Message{From: "m00", Data: []byte("hello"), Broadcast: true}, msg)
				got[id]++
			}
		}
	}
	for _, id := range ids[1:] {
		assert.Equal(t, 1, got[ID(id)], "%s received it once", id)
	}
	assert.Zero(t, got["m00"], "not delivered to its origin")
}

// TestSendTo: a direct message reaches its addressee only; unknown members,
// empty and oversize messages are refused.
func TestSendTo(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b")
	b := newTest(t, "b", ModeDetector, nil, "a")
	require.NoError(t, a.SendTo(0, "b", []byte("hi b")))
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	assert.Equal(t, MsgUser, pk[0].Kind)
	require.NoError(t, b.Step(0, &pk[0]))
	r := b.Ready()
	assert.Equal(t, []Message{{From: "a", Data: []byte("hi b"), FromHeldAddr: true}}, r.Messages)
	assert.Empty(t, r.Packets, "no answer")
	assert.Equal(t, 1, a.Stats().MessagesSent)
	assert.Equal(t, 1, b.Stats().MessagesReceived)

	assert.ErrorIs(t, a.SendTo(0, "zz", []byte("x")), ErrUnknownMember)
	assert.ErrorIs(t, a.SendTo(0, "b", nil), ErrMessageSize)
	err := a.SendTo(0, "b", make([]byte, DefaultMaxPacketSize))
	assert.ErrorIs(t, err, ErrMessageSize)
	assert.ErrorContains(t, err, "MaxPacketSize 1400")
	// An empty MsgUser is malformed.
	bad := Packet{Kind: MsgUser, From: node("a"), To: node("b")}
	assert.ErrorIs(t, b.Step(0, &bad), ErrPacket)
}

// TestMessageFromHeldAddr: a direct message is marked FromHeldAddr only
// when its packet names the address b holds for its sender and comes
// from there (Step): not from another source (StepFromOtherSource), not
// naming another address, not leaving the address out, not from a
// member b does not hold.
func TestMessageFromHeldAddr(t *testing.T) {
	b := newTest(t, "b", ModeDetector, nil, "a")
	msg := func(from Node, other bool) Message {
		t.Helper()
		pk := Packet{Kind: MsgUser, From: from, To: b.Self(), User: []byte("x")}
		if other {
			require.NoError(t, b.StepFromOtherSource(0, &pk))
		} else {
			require.NoError(t, b.Step(0, &pk))
		}
		r := b.Ready()
		require.Len(t, r.Messages, 1)
		return r.Messages[0]
	}
	assert.True(t, msg(node("a"), false).FromHeldAddr, "a at its address")
	assert.False(t, msg(node("a"), true).FromHeldAddr, "from another source")
	assert.False(t, msg(Node{ID: "a", Addr: "10.6.6.6:7946"}, false).FromHeldAddr, "naming another address")
	assert.False(t, msg(Node{ID: "a"}, false).FromHeldAddr, "the address left out")
	assert.False(t, msg(node("z"), false).FromHeldAddr, "a member not held")
	assert.True(t, msg(node("a"), false).FromHeldAddr, "a at its address, still")
}

// TestBroadcastHostile: the API refuses empty, oversize and over-keyed
// broadcasts; Step refuses packets with malformed broadcasts and changes
// nothing; a flood of distinct origins keeps the windows bounded.
func TestBroadcastHostile(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.MaxMembers = 8 }, "b")
	assert.ErrorIs(t, a.Broadcast("", nil), ErrMessageSize)
	assert.ErrorIs(t, a.Broadcast("", make([]byte, MaxBroadcastLen+1)), ErrMessageSize)
	assert.ErrorIs(t, a.Broadcast(strings.Repeat("k", 256), []byte("x")), ErrMessageSize)
	small := newTest(t, "s", ModeDetector, func(c *Config) { c.MaxPacketSize = 300 })
	assert.ErrorIs(t, small.Broadcast("", make([]byte, 290)), ErrMessageSize, "does not fit a packet")
	assert.Zero(t, a.Stats().BroadcastsQueued)

	for _, b := range []Broadcast{
		{Origin: "x"},
		{Origin: "x", Data: make([]byte, MaxBroadcastLen+1)},
		{Data: []byte("x")},
		{Origin: ID(strings.Repeat("o", 256)), Data: []byte("x")},
		{Origin: "x", Key: strings.Repeat("k", 256), Data: []byte("x")},
	} {
		pk := Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Broadcasts: []Broadcast{b}}
		assert.ErrorIs(t, a.Step(0, &pk), ErrPacket)
	}
	assert.Empty(t, a.Ready().Messages)

	for i := range 100 {
		pk := Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
			Broadcasts: []Broadcast{{Origin: ID(fmt.Sprintf("o%d", i)), Seq: 1, Data: []byte("x")}}}
		require.NoError(t, a.Step(0, &pk))
	}
	assert.LessOrEqual(t, len(a.app.seen), 8)
	assert.Equal(t, 100, a.Stats().BroadcastsReceived)
	assert.Equal(t, 92, a.Stats().BroadcastOriginsForgotten)
	assert.LessOrEqual(t, len(a.app.queue), a.cfg.MaxQueuedBroadcasts)
}

// TestLocalState: a join's answer carries the answerer's state, delivered
// to the joiner with Join true; an anti-entropy push carries it with join
// false; oversize states are neither sent nor accepted.
func TestLocalState(t *testing.T) {
	var asked []bool
	a := newTest(t, "a", ModeDetector, func(c *Config) {
		c.LocalState = func(join bool) []byte { asked = append(asked, join); return []byte("state of a") }
	})
	b := newTest(t, "b", ModeDetector, nil)
	require.NoError(t, b.Join(0, []string{"a:7946"}))
	pk, _ := drain(b)
	require.Len(t, pk, 1)
	require.NoError(t, a.Step(0, &pk[0]))
	pk, _ = drain(a)
	var states []RemoteState
	for i := range pk {
		if pk[i].Kind == MsgPing {
			answerChallenge(t, a, b, 0, pk) // receipt.go: a pushes to b once verified
			continue
		}
		require.NoError(t, b.Step(0, &pk[i]))
		states = append(states, b.Ready().RemoteStates...)
	}
	assert.Equal(t, []bool{true}, asked)
	require.Len(t, states, 1)
	assert.Equal(t, RemoteState{From: node("a"), State: []byte("state of a"), Join: true}, states[0])
	assert.Equal(t, 1, a.Stats().StatesSent)
	assert.Equal(t, 1, b.Stats().StatesReceived)

	a.pushPull(0)
	assert.Equal(t, []bool{true, false}, asked)
	pk, _ = drain(a)
	var sawState bool
	for i := range pk {
		sawState = sawState || len(pk[i].State) > 0
	}
	assert.True(t, sawState)

	big := newTest(t, "big", ModeDetector, func(c *Config) {
		c.LocalState = func(bool) []byte { return make([]byte, 600) }
	}, "b")
	big.sendState(node("b"), false, 0)
	pk, _ = drain(big)
	assert.Empty(t, pk)
	assert.Equal(t, 1, big.Stats().StatesTooLarge)

	huge := Packet{Kind: MsgSync, From: node("a"), To: node("b"), State: make([]byte, 600),
		Updates: []Update{{Kind: UpdateAlive, Node: node("a"), From: "a"}}}
	require.NoError(t, b.Step(0, &huge))
	assert.Empty(t, b.Ready().RemoteStates)
	assert.Equal(t, 1, b.Stats().StatesTooLarge)
}

// TestBroadcastBudget: Config.BroadcastBudget bounds the broadcast bytes of
// each packet below what the packet has room for.
func TestBroadcastBudget(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.BroadcastBudget = 150 }, "b", "c")
	for range 3 {
		require.NoError(t, a.Broadcast("", make([]byte, 60)))
	}
	a.send(Packet{Kind: MsgPing, To: node("b")})
	pk, _ := drain(a)
	require.Len(t, pk, 1)
	n := 1 + 3 + 3 // the section, as Packet.Size counts it
	for i := range pk[0].Broadcasts {
		n += pk[0].Broadcasts[i].Size()
	}
	assert.Len(t, pk[0].Broadcasts, 1, "two would need %d bytes", 7+2*pk[0].Broadcasts[0].Size())
	assert.LessOrEqual(t, n, 150)
	_, err := New(Config{Self: node("z"), AppData: AppData{BroadcastBudget: -1}}, a.rng)
	assert.ErrorIs(t, err, ErrConfig)
}

// TestKeyedBroadcastOutOfOrder: a keyed broadcast that arrives after a
// newer one about the same key (still queued here) is stale: not
// delivered, not passed on.
func TestKeyedBroadcastOutOfOrder(t *testing.T) {
	a := newTest(t, "a", ModeDetector, nil, "b", "c")
	pk := func(seq uint64, data string) *Packet {
		return &Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
			Broadcasts: []Broadcast{{Origin: "o", Seq: seq, Key: "cfg", Data: []byte(data)}}}
	}
	require.NoError(t, a.Step(0, pk(5, "new")))
	require.NoError(t, a.Step(0, pk(4, "old")))
	msgs := a.Ready().Messages
	require.Len(t, msgs, 1)
	assert.Equal(t, "new", string(msgs[0].Data))
	require.Len(t, a.app.queue, 1)
	assert.Equal(t, uint64(5), a.app.queue[0].b.Seq)
	assert.Equal(t, 1, a.Stats().BroadcastsSuperseded)
}

// TestBroadcastOverBudget: a broadcast that can never ride within
// Config.BroadcastBudget is refused by Broadcast (ErrMessageSize) instead
// of being accepted and then never sent; one received from a member with a
// larger budget is delivered but not queued for passing on (it would hold
// a queue slot until the queue overflowed).
func TestBroadcastOverBudget(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.BroadcastBudget = 150 }, "b", "c")
	empty := Broadcast{Origin: "a"}
	fits := 150 - 7 - empty.Size() // data bytes that just fit
	require.NoError(t, a.Broadcast("", make([]byte, fits)))
	err := a.Broadcast("", make([]byte, fits+1))
	require.ErrorIs(t, err, ErrMessageSize)
	assert.ErrorContains(t, err, "BroadcastBudget")
	assert.Equal(t, 1, a.Stats().BroadcastsQueued)
	require.Len(t, a.app.queue, 1)

	big := Broadcast{Origin: "b", Seq: 1, Data: make([]byte, 400)}
	require.NoError(t, a.Step(0, &Packet{Kind: MsgGossip, From: node("b"), To: node("a"), Broadcasts: []Broadcast{big}}))
	msgs := a.Ready().Messages
	require.Len(t, msgs, 1, "delivered here")
	assert.Len(t, a.app.queue, 1, "not queued: it could never be sent")
}

// TestBroadcastSeqCeiling: with numbering by the clock, 64 forged
// broadcasts numbered up to 2^64−1 under an origin's name are refused and
// counted, and the origin's genuine broadcasts are still delivered;
// without the ceiling the forged numbers fill the window (seenLen) and
// silence the origin.
func TestBroadcastSeqCeiling(t *testing.T) {
	const start = uint64(1_700_000_000_000_000_000) // the clock at start, Unix ns
	lead := uint64(30 * time.Second)
	ceiling := func(now time.Duration) uint64 { return start + uint64(now) + lead }
	for _, bounded := range []bool{true, false} {
		a := newTest(t, "a", ModeDetector, func(c *Config) {
			if bounded {
				c.BroadcastSeqCeiling = ceiling
			}
		}, "b")
		send := func(now time.Duration, seq uint64) {
			pk := Packet{Kind: MsgGossip, From: node("b"), To: node("a"),
				Broadcasts: []Broadcast{{Origin: "o", Seq: seq, Data: []byte("x")}}}
			require.NoError(t, a.Step(now, &pk))
		}
		send(0, start+1)
		for k := range uint64(seenLen) {
			send(time.Second, math.MaxUint64-k) // forged
		}
		send(2*time.Second, ceiling(2*time.Second)+1)   // just above the ceiling
		send(3*time.Second, start+uint64(time.Second))  // genuine: o's clock a second later
		send(4*time.Second, ceiling(4*time.Second)-100) // o's clock 30 s ahead: within the skew
		got := a.Ready().Messages
		if bounded {
			assert.Len(t, got, 3, "every genuine broadcast delivered")
			assert.Equal(t, seenLen+1, a.Stats().BroadcastsImplausible)
		} else {
			assert.Len(t, got, 1+seenLen, "the first and the forged ones; every broadcast after them is old news")
			assert.Equal(t, 0, a.Stats().BroadcastsImplausible)
		}
	}
}
