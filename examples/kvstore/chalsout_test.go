package kvstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// The asks for one member wait together, answered by the challenge in
// force when the last came, up to maxChalAsks of them, one place kept
// for an ask from the member's held address (own); asks from the member
// at another address replace those waiting; at most maxPullers members
// wait, and an own ask of another takes the place of one with no own
// ask. take empties the queue.
func TestChalsOutBounded(t *testing.T) {
	var o chalsOut
	o.init()
	c1, c2 := [challengeLen]byte{1}, [challengeLen]byte{2}
	var want [][askNonceLen]byte
	for i := range maxChalAsks - 1 {
		q := [askNonceLen]byte{byte(i), 1}
		want = append(want, q)
		c := c1
		if i == maxChalAsks-2 {
			c = c2 // a new challenge drawn meanwhile
		}
		require.NoError(t, o.add("b", "10.0.0.2:1", c, q, false), i)
	}
	assert.ErrorIs(t, o.add("b", "10.0.0.2:1", c2, [askNonceLen]byte{99}, false), errChalsOutFull)
	require.NoError(t, o.add("b", "10.0.0.2:1", c2, [askNonceLen]byte{98}, true), "b's own ask")
	assert.ErrorIs(t, o.add("b", "10.0.0.2:1", c2, [askNonceLen]byte{97}, false), errChalsOutFull)
	require.NoError(t, o.add("b", "10.0.0.2:1", c2, [askNonceLen]byte{96}, true), "b's own ask again")
	want = append(want, [askNonceLen]byte{96})
	require.NoError(t, o.add("c", "10.0.0.3:1", c1, [askNonceLen]byte{7}, false))
	assert.Len(t, o.ready, 1, "signalled")
	m := o.take(nil)
	assert.Empty(t, o.take(nil))
	require.Len(t, m, 2)
	assert.Equal(t, &pendingChal{addr: "10.0.0.2:1", chal: c2, asks: want, own: maxChalAsks}, m["b"])
	assert.Equal(t, &pendingChal{addr: "10.0.0.3:1", chal: c1, asks: [][askNonceLen]byte{{7}}}, m["c"])

	require.NoError(t, o.add("b", "10.0.0.2:1", c1, [askNonceLen]byte{1}, true))
	require.NoError(t, o.add("b", "10.0.0.9:1", c2, [askNonceLen]byte{2}, false))
	assert.Equal(t, &pendingChal{addr: "10.0.0.9:1", chal: c2, asks: [][askNonceLen]byte{{2}}}, o.take(nil)["b"],
		"the ask at another address replaced the one waiting")

	for i := range maxPullers {
		require.NoError(t, o.add(swim.ID(fmt.Sprint("m", i)), "10.0.0.2:1", c1, [askNonceLen]byte{}, i == 0))
	}
	assert.ErrorIs(t, o.add("x", "10.0.0.2:1", c1, [askNonceLen]byte{}, false), errChalsOutFull)
	require.NoError(t, o.add("m0", "10.0.0.2:1", c1, [askNonceLen]byte{1}, false), "a member waiting already")
	require.NoError(t, o.add("y", "10.0.0.4:1", c1, [askNonceLen]byte{5}, true), "an own ask, in place of a member with none")
	require.Len(t, o.m, maxPullers)
	assert.Equal(t, [][askNonceLen]byte{{5}}, o.m["y"].asks)
	assert.Contains(t, o.m, swim.ID("m0"), "m0 has an own ask")
	for i := range maxPullers - 2 { // in place of m1 to m63 but the one y took
		require.NoError(t, o.add(swim.ID(fmt.Sprint("n", i)), "10.0.0.5:1", c1, [askNonceLen]byte{}, true))
	}
	assert.ErrorIs(t, o.add("z", "10.0.0.2:1", c1, [askNonceLen]byte{}, true), errChalsOutFull, "every member waiting has an own ask")
}

// The receiving goroutine queues the answer to an ask and sends
// nothing: two asks from b are one challenge waiting, carrying both
// nonces, and the sender sends it in one datagram, which b (asking
// nothing) refuses once. Before, the receiving goroutine sent each
// challenge itself, waiting for the agent each time, and asks forged at
// 50,000 to 90,000 a second made it lose more than half of the writes
// another member made meanwhile (docs/experiments.md).
func TestAsksQueuedForTheSender(t *testing.T) {
	s, b := storeWithoutLoops(t)
	q1, q2 := [askNonceLen]byte{1}, [askNonceLen]byte{2}
	s.receive(swim.Message{From: "b", Data: askMsg(q1)})
	s.receive(swim.Message{From: "b", Data: askMsg(q2)})
	s.receive(swim.Message{From: "b", Data: askMsg(q2)}) // the ask answered last: refused
	assert.Equal(t, uint64(1), s.Rejected())
	require.Contains(t, s.pull.out.m, swim.ID("b"))
	assert.Equal(t, [][askNonceLen]byte{q1, q2}, s.pull.out.m["b"].asks)
	assert.Equal(t, b.Agent().Self().Addr, s.pull.out.m["b"].addr)
	go s.sendChals()
	defer close(s.pull.done)
	require.Eventually(t, func() bool { return b.Rejected() == 1 }, 10*time.Second, time.Millisecond, "b got the challenge")
	assert.Empty(t, s.pull.out.take(nil))
}

// A pass of the sender under a flood of asks allocates nothing in the
// queue (take reuses the map and the entries of the pass before): here
// 40 asks under b's ID, 31 kept, and one ask from each of 3 others.
// Before, take made a new map each pass, and add an entry per member
// and the slice of its asks.
func TestChalsOutPassAllocatesNothing(t *testing.T) {
	var o chalsOut
	o.init()
	ids := []swim.ID{"c", "d", "e"}
	var sent map[swim.ID]*pendingChal
	pass := func() {
		for i := range maxChalAsks + 8 {
			_ = o.add("b", "10.0.0.2:1", [challengeLen]byte{1}, [askNonceLen]byte{byte(i)}, false)
		}
		for i, id := range ids {
			_ = o.add(id, "10.0.0.3:1", [challengeLen]byte{2}, [askNonceLen]byte{byte(i)}, false)
		}
		<-o.ready
		sent = o.take(sent)
	}
	pass()
	require.Len(t, sent, 4)
	require.Len(t, sent["b"].asks, maxChalAsks-1)
	assert.Equal(t, [askNonceLen]byte{maxChalAsks - 2}, sent["b"].asks[maxChalAsks-2])
	assert.Equal(t, &pendingChal{addr: "10.0.0.3:1", chal: [challengeLen]byte{2}, asks: [][askNonceLen]byte{{2}}}, sent["e"])
	assert.Zero(t, testing.AllocsPerRun(100, pass))
	require.Len(t, sent, 4, "the last pass's")
	assert.Equal(t, &pendingChal{addr: "10.0.0.3:1", chal: [challengeLen]byte{2}, asks: [][askNonceLen]byte{{2}}}, sent["e"])
	assert.LessOrEqual(t, len(o.free), 4, "entries kept for reuse")
}

// Asks forged under b's ID from another address (FromHeldAddr false),
// more than a challenge carries, come before and after b's own ask within
// one pass of the sender: b's own is still answered, in the one
// challenge to b. Before, the forged asks filled the maxChalAsks places
// and b's own ask was refused.
func TestOwnAskNotDisplacedByForgedAsks(t *testing.T) {
	s, _ := storeWithoutLoops(t)
	forged := func(n int) {
		for i := range n {
			s.receive(swim.Message{From: "b", Data: askMsg([askNonceLen]byte{byte(n), byte(i), 0xf})})
		}
	}
	own := [askNonceLen]byte{0xb}
	forged(maxChalAsks + 8)
	s.receive(swim.Message{From: "b", Data: askMsg(own), FromHeldAddr: true})
	forged(maxChalAsks + 9)
	require.Contains(t, s.pull.out.m, swim.ID("b"))
	p := s.pull.out.m["b"]
	assert.Len(t, p.asks, maxChalAsks)
	assert.Contains(t, p.asks, own, "b's own ask answered")
	assert.Equal(t, uint64(2*(maxChalAsks+8)+1-(maxChalAsks-1)), s.Rejected(), "the forged asks over the places")
}

// storeWithoutLoops starts agent a wrapped in a Store that runs no
// goroutines of its own (its sender's queue is driven by the test), and a
// full store b joined to it, and waits until a holds b live.
func storeWithoutLoops(t *testing.T) (*Store, *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := agent.Start(context.Background(), plainCfg("a"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Shutdown() })
	s := &Store{a: a, data: map[string]entry{}}
	s.pull.init()
	b := newStore(t, plainCfg("b"))
	require.NoError(t, b.Agent().Join(ctx, a.Self().Addr))
	require.Eventually(t, func() bool { _, err := s.liveAddr("b"); return err == nil }, 10*time.Second, 5*time.Millisecond, "b live at a")
	return s, b
}
