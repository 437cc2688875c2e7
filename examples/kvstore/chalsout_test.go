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
// force when the last came, up to maxChalAsks of them; asks from the
// member at another address replace those waiting; at most maxPullers
// members wait. take empties the queue.
func TestChalsOutBounded(t *testing.T) {
	var o chalsOut
	o.init()
	c1, c2 := [challengeLen]byte{1}, [challengeLen]byte{2}
	var want [][askNonceLen]byte
	for i := range maxChalAsks {
		q := [askNonceLen]byte{byte(i), 1}
		want = append(want, q)
		c := c1
		if i == maxChalAsks-1 {
			c = c2 // a new challenge drawn meanwhile
		}
		require.NoError(t, o.add("b", "10.0.0.2:1", c, q), i)
	}
	assert.ErrorIs(t, o.add("b", "10.0.0.2:1", c2, [askNonceLen]byte{99}), errChalsOutFull)
	require.NoError(t, o.add("c", "10.0.0.3:1", c1, [askNonceLen]byte{7}))
	assert.Len(t, o.ready, 1, "signalled")
	m := o.take(nil)
	assert.Empty(t, o.take(nil))
	require.Len(t, m, 2)
	assert.Equal(t, &pendingChal{addr: "10.0.0.2:1", chal: c2, asks: want}, m["b"])
	assert.Equal(t, &pendingChal{addr: "10.0.0.3:1", chal: c1, asks: [][askNonceLen]byte{{7}}}, m["c"])

	require.NoError(t, o.add("b", "10.0.0.2:1", c1, [askNonceLen]byte{1}))
	require.NoError(t, o.add("b", "10.0.0.9:1", c2, [askNonceLen]byte{2}))
	assert.Equal(t, &pendingChal{addr: "10.0.0.9:1", chal: c2, asks: [][askNonceLen]byte{{2}}}, o.take(nil)["b"],
		"the ask at another address replaced the one waiting")

	for i := range maxPullers {
		require.NoError(t, o.add(swim.ID(fmt.Sprint("m", i)), "10.0.0.2:1", c1, [askNonceLen]byte{}))
	}
	assert.ErrorIs(t, o.add("x", "10.0.0.2:1", c1, [askNonceLen]byte{}), errChalsOutFull)
	require.NoError(t, o.add("m0", "10.0.0.2:1", c1, [askNonceLen]byte{1}), "a member waiting already")
}

// The receiving goroutine queues the answer to an ask and sends
// nothing: two asks from b are one challenge waiting, carrying both
// nonces, and the sender sends it in one datagram, which b (asking
// nothing) refuses once. Before, the receiving goroutine sent each
// challenge itself, waiting for the agent each time, and asks forged at
// 50,000 to 90,000 a second made it lose more than half of the writes
// another member made meanwhile (docs/experiments.md).
func TestAsksQueuedForTheSender(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := agent.Start(ctx, plainCfg("a"))
	require.NoError(t, err)
	defer func() { _ = a.Shutdown() }()
	s := &Store{a: a, data: map[string]entry{}} // no goroutines of its own
	s.pull.init()
	b := newStore(t, plainCfg("b"))
	require.NoError(t, b.Agent().Join(ctx, a.Self().Addr))
	require.Eventually(t, func() bool { _, err := s.liveAddr("b"); return err == nil }, 10*time.Second, 5*time.Millisecond, "b live at a")
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
// 40 asks under b's ID, 32 kept, and one ask from each of 3 others.
// Before, take made a new map each pass, and add an entry per member
// and the slice of its asks.
func TestChalsOutPassAllocatesNothing(t *testing.T) {
	var o chalsOut
	o.init()
	ids := []swim.ID{"c", "d", "e"}
	var sent map[swim.ID]*pendingChal
	pass := func() {
		for i := range maxChalAsks + 8 {
			_ = o.add("b", "10.0.0.2:1", [challengeLen]byte{1}, [askNonceLen]byte{byte(i)})
		}
		for i, id := range ids {
			_ = o.add(id, "10.0.0.3:1", [challengeLen]byte{2}, [askNonceLen]byte{byte(i)})
		}
		<-o.ready
		sent = o.take(sent)
	}
	pass()
	require.Len(t, sent, 4)
	require.Len(t, sent["b"].asks, maxChalAsks)
	assert.Equal(t, [askNonceLen]byte{maxChalAsks - 1}, sent["b"].asks[maxChalAsks-1])
	assert.Equal(t, &pendingChal{addr: "10.0.0.3:1", chal: [challengeLen]byte{2}, asks: [][askNonceLen]byte{{2}}}, sent["e"])
	assert.Zero(t, testing.AllocsPerRun(100, pass))
	require.Len(t, sent, 4, "the last pass's")
	assert.Equal(t, &pendingChal{addr: "10.0.0.3:1", chal: [challengeLen]byte{2}, asks: [][askNonceLen]byte{{2}}}, sent["e"])
	assert.LessOrEqual(t, len(o.free), 4, "entries kept for reuse")
}
