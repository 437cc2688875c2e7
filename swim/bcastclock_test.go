package swim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBroadcastAtFollowsClock (issue 27, atk27 F2): BroadcastAt numbers a
// broadcast max(last+1, clock), so an origin's numbers follow its clock
// and pass a forged number under its name within the receivers' ceiling
// once the clock passes it. Numbered one above the last from its start
// (Broadcast, as the agent did), the origin never passed a forged number
// near the present: a stranger's one datagram silenced it for good.
//
// Hand-worked: o starts at clock S (FirstBroadcastSeq S). Broadcast: S+1;
// BroadcastAt(S+10 s): S+10 s; BroadcastAt(S+5 s) (a clock set back):
// S+10 s+1; Broadcast: S+10 s+2. The receiver r (ceiling its clock S+now
// plus 30 s) is sent at now 10 s 1,024 forged broadcasts from o, which
// it holds live, numbered S+15 s to S+15 s+1023: delivered (under the
// ceiling), the whole window (Config.MaxQueuedBroadcasts numbers for an
// origin held live, windowLen). o's broadcast at clock S+12 s (S+12 s) is old news at r; at
// S+16 s it is delivered.
func TestBroadcastAtFollowsClock(t *testing.T) {
	const s = uint64(1_700_000_000_000_000_000) // the clock at start, Unix ns
	sec := uint64(time.Second)
	o := newTest(t, "o", ModeLifeguard, func(c *Config) { c.FirstBroadcastSeq = s }, "r")
	last := func() uint64 { return o.app.queue[len(o.app.queue)-1].b.Seq }
	require.NoError(t, o.Broadcast("", []byte("1")))
	assert.Equal(t, s+1, last())
	require.NoError(t, o.BroadcastAt(s+10*sec, "", []byte("2")))
	assert.Equal(t, s+10*sec, last())
	require.NoError(t, o.BroadcastAt(s+5*sec, "", []byte("3")))
	assert.Equal(t, s+10*sec+1, last())
	require.NoError(t, o.Broadcast("", []byte("4")))
	assert.Equal(t, s+10*sec+2, last())
	require.ErrorIs(t, o.BroadcastAt(s+20*sec, "", make([]byte, MaxBroadcastLen+1)), ErrMessageSize)
	require.NoError(t, o.Broadcast("", []byte("5")))
	assert.Equal(t, s+10*sec+3, last(), "a refused broadcast takes no number")

	r := newTest(t, "r", ModeLifeguard, func(c *Config) {
		c.BroadcastSeqCeiling = func(now time.Duration) uint64 { return s + uint64(now) + 30*sec }
	}, "o")
	from := func(now time.Duration, b Broadcast) int {
		pk := Packet{Kind: MsgGossip, From: node("o"), To: node("r"), Broadcasts: []Broadcast{b}}
		require.NoError(t, r.Step(now, &pk))
		return len(r.Ready().Messages)
	}
	require.Equal(t, DefaultMaxQueuedBroadcasts, r.windowLen("o"))
	for k := range uint64(r.windowLen("o")) {
		require.Equal(t, 1, from(10*time.Second, Broadcast{Origin: "o", Seq: s + 15*sec + k, Data: []byte("forged")}))
	}
	for _, tc := range []struct {
		clock     uint64
		delivered int
	}{{s + 12*sec, 0}, {s + 16*sec, 1}} {
		require.NoError(t, o.BroadcastAt(tc.clock, "", []byte("genuine")))
		assert.Equal(t, tc.delivered, from(time.Duration(tc.clock-s), o.app.queue[len(o.app.queue)-1].b), "at clock S+%v", time.Duration(tc.clock-s))
	}
	assert.Equal(t, 0, r.Stats().BroadcastsImplausible)
}

// TestSeenWindowSparseNumbers: numbers a clock gives (a millisecond and
// more apart) are delivered exactly once in any order that displaces each
// by fewer than seenLen, and never again; a number below the lowest of
// the seenLen remembered is old news. The first window (the 64 numbers
// below the highest) dropped every one that arrived after a later one.
func TestSeenWindowSparseNumbers(t *testing.T) {
	const base = uint64(1_700_000_000_000_000_000)
	num := func(i int) uint64 { return base + uint64(i)*uint64(time.Millisecond) + uint64(i*i%7) }
	var w seenWindow
	got := map[uint64]int{}
	for block := 0; block < 300; block += 30 {
		// Each block of 30 newest first, as a packet attaches them.
		for i := block + 29; i >= block; i-- {
			if w.fresh(num(i)) {
				got[num(i)]++
			}
		}
	}
	for i := range 300 {
		assert.Equal(t, 1, got[num(i)], "number %d", i)
		assert.False(t, w.fresh(num(i)), "replay of %d", i)
	}
	assert.Len(t, w.nums, seenLen)
	assert.False(t, w.fresh(num(300-seenLen)-1), "below the lowest remembered")
	assert.True(t, w.fresh(num(300-seenLen)+1), "between remembered numbers, new")
}
