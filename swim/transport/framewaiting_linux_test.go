package transport

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// user46 M2: streams from one source admitted faster than their handlers
// run. Every handler here waits at a gate before its first read (or
// returns once its stream is evicted, as one blocked in a read would), so all
// the source's streams are unread and idle since their accept; the first,
// a member's, has its whole first frame in the kernel, the flood's each a
// bare length prefix. Each new stream beyond MaxConnsPerSource evicts one
// of the flood's, never the member's (it is the oldest, and was evicted
// first before: its message reset), and once the gate opens its handler
// reads its frame whole. A stream with only part of its frame waiting is
// not spared.
func TestStreamFirstFrameWaitingSpared(t *testing.T) {
	gate := make(chan struct{})
	got := make(chan []byte, 16)
	var started atomic.Int32
	l, err := ListenStream(StreamConfig{MaxConns: 64, MaxConnsPerSource: 4, Timeout: 20 * time.Second}, func(c *Conn) {
		started.Add(1)
		for !c.state.isEvicted() { // an evicted stream's handler returns without reading
			select {
			case <-gate:
				if b, err := c.ReadFrame(); err == nil {
					got <- b
				}
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	var opened atomic.Bool
	openGate := func() {
		if opened.CompareAndSwap(false, true) {
			close(gate)
		}
	}
	t.Cleanup(openGate) // before Close (cleanups run last first): Close waits for the handlers
	dial := dialerFrom(t, l)
	accepted := func(n uint64) {
		t.Helper()
		require.Eventually(t, func() bool { return l.Stats().Accepted == n && started.Load() == int32(n) }, 5*time.Second, time.Millisecond)
	}

	member := dial("127.0.0.1")
	frame, err := AppendFrame(nil, []byte("a reliable message's first frame"))
	require.NoError(t, err)
	_, err = member.Write(frame)
	require.NoError(t, err)
	accepted(1)
	partial := dial("127.0.0.1") // its frame's length and half its bytes
	_, err = partial.Write(frame[:FrameHeaderSize+8])
	require.NoError(t, err)
	accepted(2)
	prefix := []byte{0, 0, 0, 100} // a frame of 100 bytes announced, none sent
	for i := range 2 {
		c := dial("127.0.0.1")
		_, err := c.Write(prefix)
		require.NoError(t, err)
		accepted(uint64(3 + i))
	}
	time.Sleep(20 * time.Millisecond) // the bytes written are in the listener's kernel buffers
	const extra = 6
	for i := range extra {
		c := dial("127.0.0.1")
		_, err := c.Write(prefix)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return l.Stats().Evicted == uint64(i+1) }, 5*time.Second, time.Millisecond, "eviction %d", i)
		if i == 0 {
			assert.True(t, closedByPeer(partial, 5*time.Second), "the partial frame's stream, oldest after the member's, evicted first")
		}
	}
	st := l.Stats()
	assert.Equal(t, uint64(extra), st.Evicted)
	assert.Equal(t, uint64(extra), st.Spared, "the member's stream passed over once per eviction")
	assert.Zero(t, st.Refused)
	openGate()
	select {
	case b := <-got:
		assert.Equal(t, "a reliable message's first frame", string(b))
	case <-time.After(5 * time.Second):
		t.Fatal("the member's frame was never read: its stream was evicted")
	}
}
