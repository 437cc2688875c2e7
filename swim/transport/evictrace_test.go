package transport

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stream chosen for eviction whose frame completes before it is marked
// is not closed: ReadFrame claimed it first (connState.claim), so
// evictWaiting's claim fails and it takes the next stream. The frame is made to complete inside the
// scan (match runs under the listener's lock, as ReadFrame's mark would
// land between the scan and the close); over 64 listeners the scan meets
// the first-chosen stream first about half the time, which is the case
// that closed it before the re-check.
func TestEvictionSkipsStreamWhoseFrameCompleted(t *testing.T) {
	for range 64 {
		l, err := ListenStream(StreamConfig{}, func(*Conn) {})
		require.NoError(t, err)
		a, b := &connState{}, &connState{}
		a.idleSince.Store(100) // idle longer: the first choice
		b.idleSince.Store(200)
		ca, pa := net.Pipe()
		cb, pb := net.Pipe()
		require.NoError(t, pb.SetReadDeadline(time.Now().Add(2*time.Second))) // fails, not hangs, if kept
		l.mu.Lock()
		l.conns[ca], l.conns[cb] = a, b
		l.mu.Unlock()
		calls := 0
		evicted := l.evictWaiting(func(*connState) bool {
			if calls++; calls == 2 {
				a.idleSince.Store(0) // a's frame is now whole and handled (ReadFrame)
				a.claim.Store(claimFrame)
			}
			return true
		})
		assert.True(t, evicted)
		assert.False(t, a.isEvicted(), "the stream handling a frame is kept")
		assert.True(t, b.isEvicted(), "the next stream goes instead")
		_, err = pb.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF, "b's connection is closed")
		_ = pa.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err = pa.Read(make([]byte, 1))
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "a's connection is open")
		for _, c := range []net.Conn{ca, cb, pa, pb} {
			_ = c.Close()
		}
		require.NoError(t, l.Close())
		if t.Failed() {
			return
		}
	}
}

// A frame that completes on a stream already marked for eviction is not
// returned: its handler must not work on a stream closed to make room.
func TestReadFrameOnEvictedStream(t *testing.T) {
	st := &connState{}
	var frame bytes.Buffer
	frame.Write([]byte{0, 0, 0, 2, 'h', 'i'})
	frame.Write([]byte{0, 0, 0, 2, 'h', 'o'})
	c := &Conn{r: bufio.NewReader(&frame), maxFrame: 64, left: -1, state: st}
	b, err := c.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, "hi", string(b))
	st.claim.Store(claimEvicted)
	_, err = c.ReadFrame()
	assert.ErrorIs(t, err, ErrStreamEvicted)
}
