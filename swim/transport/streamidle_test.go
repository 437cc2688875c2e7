package transport

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadFrameWithin over real sockets, against a listener that reads the
// dialler's frame and answers after a delay (or never, until the
// connection's end): a peer that sends nothing fails the read after the
// idle limit with ErrStreamIdle (and os.ErrDeadlineExceeded), not after
// the connection's Timeout; a frame that comes within the limit is read,
// and the connection's deadline is restored for the next read; a
// connection whose own deadline comes first ends with a plain timeout.
func TestReadFrameWithinIdle(t *testing.T) {
	answerAfter := make(chan time.Duration, 8)
	l, err := ListenStream(StreamConfig{Timeout: 20 * time.Second}, func(c *Conn) {
		if _, err := c.ReadFrame(); err != nil {
			return
		}
		d := <-answerAfter
		time.Sleep(d)
		_ = c.WriteFrame([]byte("late"))
		_, _ = c.ReadFrame() // until the dialler closes
	})
	require.NoError(t, err)
	defer l.Close()
	dial := func(timeout time.Duration) *Conn {
		c, err := DialStream(context.Background(), l.LocalAddr(), StreamConfig{Timeout: timeout})
		require.NoError(t, err)
		require.NoError(t, c.WriteFrame([]byte("join")))
		return c
	}

	// Silent for 1 s: cut at the idle limit of 100 ms.
	c := dial(10 * time.Second)
	answerAfter <- time.Second
	t0 := time.Now()
	_, err = c.ReadFrameWithin(100 * time.Millisecond)
	took := time.Since(t0)
	require.ErrorIs(t, err, ErrStreamIdle)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.GreaterOrEqual(t, took, 100*time.Millisecond)
	assert.Less(t, took, 900*time.Millisecond, "cut at the idle limit, not at the answer or the Timeout")
	require.NoError(t, c.Close())

	// An answer within the limit is read; after it, the connection's own
	// deadline (10 s) holds again: a plain read waits past the idle limit.
	c = dial(10 * time.Second)
	answerAfter <- 50 * time.Millisecond
	b, err := c.ReadFrameWithin(300 * time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, "late", string(b))
	done := make(chan error, 1)
	go func() { _, err := c.ReadFrame(); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("the read after ReadFrameWithin ended at once: %v", err)
	case <-time.After(700 * time.Millisecond): // past the idle limit's instant

	}
	require.NoError(t, c.Close())
	<-done

	// The connection's Timeout (200 ms) before the idle limit (5 s): a
	// plain timeout, not ErrStreamIdle.
	c = dial(200 * time.Millisecond)
	answerAfter <- time.Second
	_, err = c.ReadFrameWithin(5 * time.Second)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.NotErrorIs(t, err, ErrStreamIdle)
	require.NoError(t, c.Close())
}
