package agent

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A stream ping this agent cannot send (every dialling slot taken, or an
// address it cannot dial) is not reported to the state machine as failed:
// swim.Member.StreamFailed is evidence that nothing listens at the target
// (the detector gate then starts its retry at once rather than at the end
// of the period, and the retry suspects as soon as every intermediate has
// nacked), and a local shortage says nothing about the target. It is
// counted in Stats.StreamPingsSkipped; the probe waits for its period, as
// without the stream path. A ping refused by the target is reported.
// Before, the agent reported StreamFailed at once for a ping it had no
// slot for.
func TestStreamPingNotSentIsNotFailure(t *testing.T) {
	var failed atomic.Int64
	a := start(t, Config{Plain: true, streamFailed: func(swim.ID, uint32) { failed.Add(1) }})
	// A port with nothing listening: a dial there is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())
	ping := func(addr string, seq uint32) {
		require.NoError(t, a.do(context.Background(), func() {
			a.startStreamProbe(swim.StreamProbe{To: swim.Node{ID: "b", Addr: addr}, Seq: seq, Deadline: a.now() + 2*time.Second})
		}))
	}
	for range cap(a.outSlots) {
		a.outSlots <- struct{}{}
	}
	ping(closed, 1)
	ping("not an address", 2)
	for range cap(a.outSlots) {
		<-a.outSlots
	}
	assert.Zero(t, failed.Load(), "a ping never sent reported as failed")
	assert.Equal(t, uint64(2), a.Stats().StreamPingsSkipped)
	ping(closed, 3)
	require.Eventually(t, func() bool { return failed.Load() == 1 }, 5*time.Second, 5*time.Millisecond, "a refused ping is reported")
	assert.Equal(t, uint64(2), a.Stats().StreamPingsSkipped)
}
