package agent

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usr27 F2.1 and F2.2 at the dial: a reliable message whose dial hangs
// (its SYN dropped, hungListener) fails with the context's error when the
// caller's context ends first, 20 times with contexts of 1 to 40 ms
// ended by their deadline or cancelled, and with an error naming
// StreamTimeout, wrapping os.ErrDeadlineExceeded and not
// context.DeadlineExceeded, when StreamTimeout ends it first. Before, the
// latter was the dial's "i/o timeout", which says
// context.DeadlineExceeded to errors.Is while the caller's context had
// not ended.
func TestReliableDialEnds(t *testing.T) {
	addr := hungListener(t)
	if addr == "" {
		t.Skip("the listener's accept queue is not full: a dial would not hang")
	}
	a := start(t, Config{Plain: true, StreamTimeout: 300 * time.Millisecond})
	for i := range 20 {
		wait := time.Duration(1+2*i) * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		want := context.DeadlineExceeded
		if i%2 == 1 {
			want = context.Canceled
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(wait, cancel)
		}
		err := a.SendReliableToAddress(ctx, addr, []byte("x"))
		cancel()
		require.ErrorIs(t, err, want, "message %d (context of %v)", i, wait)
		require.NotErrorIs(t, err, ErrReliableBusy, "message %d", i)
		require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "message %d", i)
	}
	t0 := time.Now()
	err := a.SendReliableToAddress(context.Background(), addr, []byte("x"))
	t.Logf("no deadline, StreamTimeout 300ms, dial hung: %v after %v", err, time.Since(t0).Round(time.Millisecond))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.NotErrorIs(t, err, context.DeadlineExceeded, "the caller's context has not ended")
	assert.Contains(t, err.Error(), "agent: reliable message to "+addr+": not connected within StreamTimeout 300ms (")
}
