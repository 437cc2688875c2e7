package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlockedAgentSendsServedCalls (atk27 F7): while the agent waits for a
// reader (BlockingMessages, a Receive channel nobody reads), the calls it
// serves meanwhile send their datagrams at once. Before, their packets
// waited in the state machine for the flush after the wait: 20,000
// SendTo calls returned nil, sent nothing and held 27.8 MB.
func TestBlockedAgentSendsServedCalls(t *testing.T) {
	as := groupOf(t, []Config{{Plain: true, BlockingMessages: true}, {Plain: true}})
	v, b := as[0], as[1]
	msgs, cancelMsgs := v.Receive(1)
	defer cancelMsgs()
	got, cancelGot := b.Receive(4096)
	defer cancelGot()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, b.SendTo(ctx, v.Self().ID, []byte("first")))
	require.NoError(t, b.SendTo(ctx, v.Self().ID, []byte("second")))
	require.Eventually(t, v.sub.waiting.Load, 5*time.Second, time.Millisecond, "v waits for its reader")
	sent0 := v.Stats().PacketsSent
	const calls = 500
	for i := range calls {
		require.NoError(t, v.SendTo(ctx, b.Self().ID, []byte{byte(i)}))
	}
	// A call returns once it has run, just before the waiting agent sends
	// its packet: the last one may still be on its way.
	require.Eventually(t, func() bool { return v.Stats().PacketsSent-sent0 >= calls }, 5*time.Second, time.Millisecond,
		"the served calls' datagrams sent during the wait")
	assert.True(t, v.sub.waiting.Load(), "still waiting for the reader")
	require.Eventually(t, func() bool { return len(got) >= calls*9/10 }, 5*time.Second, time.Millisecond,
		"b received the datagrams (a few may be lost on the loopback)")
	assert.Equal(t, []byte("first"), receiveOne(t, msgs).Data)
	assert.Equal(t, []byte("second"), receiveOne(t, msgs).Data)
}
