package agent

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHandInBytesBounded (atk27 F14): an agent waiting for a reader
// (BlockingMessages, a Receive channel of 1 nobody reads) holds at most
// MaxReceiveBytes of reliable messages handed to it; the others are
// refused unacknowledged (Stats.ReliableRefused) and their senders' calls
// fail. Before, each was acknowledged once queued, and 66 of 100
// messages of 1 MiB were held at the 8 MiB default.
func TestHandInBytesBounded(t *testing.T) {
	const size, bound = 200 << 10, 1 << 20
	v := start(t, Config{Plain: true, BlockingMessages: true, MaxReceiveBytes: bound})
	msgs, cancelMsgs := v.Receive(1)
	defer cancelMsgs()
	x := start(t, Config{Plain: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	data := make([]byte, size)
	var acked, failed atomic.Int64
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			if err := x.SendReliableToAddress(ctx, v.Self().Addr, data); err == nil {
				acked.Add(1)
			} else {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	// Held: one in the Receive channel, one being waited for, and at most
	// bound/size in the hand-in queue.
	t.Logf("acknowledged %d, failed %d; ReliableRefused %d", acked.Load(), failed.Load(), v.Stats().ReliableRefused)
	assert.LessOrEqual(t, acked.Load(), int64(2+bound/size))
	assert.Equal(t, uint64(failed.Load()), v.Stats().ReliableRefused, "every failed send refused by v")
	require.Positive(t, failed.Load())
	assert.LessOrEqual(t, v.stream.inBytes.Load(), int64(bound))
	// The reader reads: every acknowledged message is delivered, and the
	// budget is given back.
	for range acked.Load() {
		m := receiveOne(t, msgs)
		assert.Len(t, m.Data, size)
	}
	require.Eventually(t, func() bool { return v.stream.inBytes.Load() == 0 }, 5*time.Second, time.Millisecond)
	require.NoError(t, x.SendReliableToAddress(ctx, v.Self().Addr, data), "room again once read")
	assert.Len(t, receiveOne(t, msgs).Data, size)
}
