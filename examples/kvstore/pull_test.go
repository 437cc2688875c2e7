package kvstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim/agent"
)

// A member that got one challenge echoes it again and again: it gets the
// store once, the echoes after the first draw nothing, a new challenge
// within storeInterval is answered "served recently" with no store, and
// a real joiner that joins meanwhile gets the whole store. Before, each
// 17-byte echo drew the whole store again (about 2,900 times the
// insider's bytes), and a joiner whose echo was dropped from the full
// queue kept part of the store while its Join returned nil (issue 27,
// user37 F4).
func TestEchoReplayDrawsOneStore(t *testing.T) {
	a := newStore(t, plainCfg("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const keys = 300
	for i := range keys {
		require.NoError(t, a.Set(ctx, fmt.Sprintf("key-%05d", i), strings.Repeat("v", 900)))
	}
	ins, err := agent.Start(ctx, plainCfg("insider"))
	require.NoError(t, err)
	defer func() { _ = ins.Shutdown() }()
	msgs, stop := ins.Receive(4096)
	defer stop()
	require.NoError(t, ins.Join(ctx, a.Agent().Self().Addr))
	got, answers := 0, []byte{}
	// next returns the next challenge, counting the state and answers
	// that come before it; nil when none comes within wait.
	next := func(wait time.Duration) []byte {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			select {
			case m := <-msgs:
				switch {
				case len(m.Data) > 0 && m.Data[0] == kindState:
					var es []entry
					if json.Unmarshal(m.Data[1:], &es) == nil {
						got += len(es)
					}
				case len(m.Data) == 2 && m.Data[0] == kindAnswer:
					answers = append(answers, m.Data[1])
				case len(m.Data) == 1+challengeLen && m.Data[0] == kindChal:
					return m.Data[1:]
				}
			case <-timer.C:
				return nil
			}
		}
	}
	require.NoError(t, ins.SendTo(ctx, "a", []byte{kindAsk}))
	chal := next(10 * time.Second)
	require.NotNil(t, chal, "a challenge")
	echo := append([]byte{kindEcho}, chal...)
	b := newStore(t, plainCfg("b"))
	joined := make(chan error, 1)
	for i := range 200 {
		if i == 20 { // a real joiner comes while the insider echoes
			go func() { joined <- b.Join(ctx, a.Agent().Self().Addr) }()
		}
		require.NoError(t, ins.SendReliable(ctx, "a", echo))
		if i%4 == 3 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	require.NoError(t, <-joined, "b's Join")
	require.Eventually(t, func() bool { return b.Len() == keys }, 20*time.Second, 10*time.Millisecond, "b got the store")
	// Within storeInterval of the first store, a new challenge is
	// answered "served recently".
	require.NoError(t, ins.SendTo(ctx, "a", []byte{kindAsk}))
	chal2 := next(storeInterval / 2)
	require.NotNil(t, chal2, "a second challenge")
	require.NoError(t, ins.SendReliable(ctx, "a", append([]byte{kindEcho}, chal2...)))
	require.Eventually(t, func() bool { next(10 * time.Millisecond); return len(answers) == 2 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { next(10 * time.Millisecond); return got >= keys }, 20*time.Second, time.Millisecond, "one store")
	next(500 * time.Millisecond) // nothing more comes
	t.Logf("200 echoes of one challenge: the insider got %d entries of store (the store holds %d); answers %q; a.Rejected %d",
		got, keys, answers, a.Rejected())
	assert.Equal(t, keys, got, "exactly one store")
	assert.Equal(t, []byte{answerQueued, answerRecent}, answers)
	require.Eventually(t, func() bool { return a.Rejected() == 199 }, 10*time.Second, time.Millisecond, "every echo after the first refused")
	assert.Zero(t, a.AnswersDropped())
}

// A joiner that no member will send the store learns it: Join's ask
// fails when its context ends instead of returning nil (here a has sent
// b its store within storeInterval and answers "served recently").
func TestAskRefusedIsAnError(t *testing.T) {
	ctx, a, b := pair(t)
	require.NoError(t, a.Set(ctx, "k", "v"))
	short, cancel := context.WithTimeout(ctx, 2*askWait)
	defer cancel()
	err := b.ask(short)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "joined, but no member queued the store")
}
