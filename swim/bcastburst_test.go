package swim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A burst of broadcasts from each member (usr30 M1: the ported key-value
// store, 4 replicas writing 100 keys each within 2 ms, kept 354–359 of
// the 400 with every drop counter at 0). A queue sends the least-sent
// broadcasts first, the newest among equals, so a receiver gets an
// origin's burst far out of order; a delivery window of the 64 highest
// numbers took every broadcast that came after 64 later ones for old
// news, and dropped it unsaid. Each member must deliver every other
// member's broadcasts, once.
func TestBroadcastBurstDelivered(t *testing.T) {
	const n, each = 4, 150
	ms := map[ID]*Member{}
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("m%02d", i))
	}
	for i, id := range ids {
		var peers []string
		peers = append(peers, ids[:i]...)
		peers = append(peers, ids[i+1:]...)
		m := newTest(t, id, ModeDetector, nil, peers...)
		m.rng = rand.New(rand.NewPCG(127000401, uint64(i)))
		ms[ID(id)] = m
	}
	value := make([]byte, 500)
	for _, id := range ids {
		for k := range each {
			require.NoError(t, ms[ID(id)].Broadcast(fmt.Sprintf("%s/%03d", id, k), value))
		}
	}
	got := map[ID]map[string]int{}
	for _, id := range ids {
		got[ID(id)] = map[string]int{}
	}
	for tick := time.Duration(0); tick <= 60*time.Second; tick += 100 * time.Millisecond {
		for _, id := range ids {
			ms[ID(id)].Tick(tick)
		}
		for id, msgs := range pump(t, tick, ms, 1000) {
			for _, msg := range msgs {
				got[id][msg.Key]++
			}
		}
	}
	for _, id := range ids {
		assert.Len(t, got[ID(id)], (n-1)*each, "%s delivered every other member's broadcasts", id)
		for k, c := range got[ID(id)] {
			assert.Equal(t, 1, c, "%s delivered %s once", id, k)
		}
		assert.Zero(t, ms[ID(id)].Stats().BroadcastsStale, "%s", id)
	}
}

// A flood of broadcasts from made-up origins, past the bound of windows
// (MaxMembers), forgets made-up origins' windows, not a live member's: b's
// broadcasts delivered before the flood are not delivered again after it
// (usr30b C: about 98,000 such broadcasts made receivers forget a live
// member's window, and its earlier broadcasts came a second time).
func TestLiveOriginWindowOutlivesFlood(t *testing.T) {
	a := newTest(t, "a", ModeDetector, func(c *Config) { c.MaxMembers = 8 }, "b", "c")
	send := func(origin ID, seq uint64) int {
		pk := Packet{Kind: MsgGossip, From: node("c"), To: node("a"),
			Broadcasts: []Broadcast{{Origin: origin, Seq: seq, Data: []byte("x")}}}
		require.NoError(t, a.Step(0, &pk))
		return len(a.Ready().Messages)
	}
	for seq := uint64(1); seq <= 10; seq++ {
		require.Equal(t, 1, send("b", seq))
	}
	for i := range 500 {
		send(ID(fmt.Sprintf("made-up-%d", i)), 1)
	}
	assert.LessOrEqual(t, len(a.app.seen), 8)
	for seq := uint64(1); seq <= 10; seq++ {
		assert.Zero(t, send("b", seq), "b's broadcast %d delivered again", seq)
	}
}
