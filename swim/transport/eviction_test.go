package transport

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitingOnPeer waits until n served connections wait on their peers.
// A client's echo can return before the listener's handler has gone back
// to reading, so the order of eviction the tests assert holds only once
// every handler waits again, and the order of their waits is the order of
// their echoes only if each is awaited before the next connection's echo
// (on a loaded machine a handler can take a while to read again).
func waitingOnPeer(t *testing.T, l *StreamListener, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		waiting := 0
		for _, st := range l.conns {
			if st.idleSince.Load() != 0 && !st.isEvicted() {
				waiting++
			}
		}
		return waiting == n
	}, 10*time.Second, time.Millisecond, "%d connections waiting on their peers", n)
}

// dialerFrom returns a function dialling l from a loopback source address.
func dialerFrom(t *testing.T, l *StreamListener) func(src string) net.Conn {
	return func(src string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp", l.LocalAddr().String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
}

// When every slot is taken, a source holding more than two streams and
// more than a quarter of MaxConnsPerSource gives up one of its streams, although another
// source's stream has been idle longer: a flood from a few addresses
// displaces itself, not the member holding one stream.
func TestStreamEvictionPrefersCrowdedSource(t *testing.T) {
	l, dialFrom := listenEcho(t, StreamConfig{MaxConns: 4, MaxConnsPerSource: 3, Timeout: 20 * time.Second})
	roundTrip := func(c net.Conn) error { return pingEcho(c, 5*time.Second) }
	member := dialFrom("127.0.0.1")
	require.NoError(t, roundTrip(member)) // waits longest from here on
	waitingOnPeer(t, l, 1)
	var flood []net.Conn
	for range 3 {
		c := dialFrom("127.0.0.2")
		require.NoError(t, roundTrip(c))
		flood = append(flood, c)
		waitingOnPeer(t, l, 1+len(flood)) // in the order dialled
	}
	require.NoError(t, roundTrip(dialFrom("127.0.0.3")), "a third source is served")
	assert.True(t, closedByPeer(flood[0], 5*time.Second), "the crowded source's stream waiting longest was closed")
	require.NoError(t, roundTrip(member), "the member's stream is kept")
	assert.Equal(t, StreamStats{Accepted: 5, Evicted: 1}, l.Stats())
}

// idleClocks returns the idle clock of each served connection.
func idleClocks(l *StreamListener) map[*connState]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[*connState]int64{}
	for _, st := range l.conns {
		m[st] = st.idleSince.Load()
	}
	return m
}

// readSince waits until exactly n served connections have read bytes (or
// begun waiting for a next frame) since before was taken: their idle
// clock differs from before's, or, for one accepted since, from its
// accepting time. A test thus knows the order in which the listener saw
// its connections' bytes, not only the order it wrote them.
func readSince(t *testing.T, l *StreamListener, before map[*connState]int64, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		moved := 0
		for _, st := range l.conns {
			base, ok := before[st]
			if !ok {
				base = st.at
			}
			if v := st.idleSince.Load(); v != 0 && v != base && !st.isEvicted() {
				moved++
			}
		}
		return moved == n
	}, 10*time.Second, time.Millisecond, "%d connections read bytes", n)
}

// partialFrame is the start of a frame of n bytes: its length prefix and
// k bytes of its body.
func partialFrame(n, k int) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(n)), make([]byte, k)...)
}

// F1 of the attacker review (issue 27): stalled streams, one from each of
// several addresses, do not evict a member's two transfers in progress.
// The member holds two slots, not more than two, so its
// source does not count against it, and its streams received bytes after
// the flood's did: the new stream takes the place of the flood's stream
// idle longest. Before, the source holding the most slots went first and
// the member lost a transfer.
func TestStreamEvictionSparesMemberTransfers(t *testing.T) {
	l, dialFrom := listenEcho(t, StreamConfig{MaxConns: 4, MaxConnsPerSource: 4, MaxFrame: 100, Timeout: 20 * time.Second})
	send := func(src string, b []byte) net.Conn {
		c := dialFrom(src)
		writeSeen(t, l, c, b) // in the order written
		return c
	}
	stalled := send("127.0.0.2", partialFrame(100, 10))
	send("127.0.0.3", partialFrame(100, 10))
	member := []net.Conn{send("127.0.0.1", partialFrame(100, 40)), send("127.0.0.1", partialFrame(100, 40))}

	late := dialFrom("127.0.0.4")
	require.NoError(t, pingEcho(late, 10*time.Second), "a fourth source is served")
	assert.True(t, closedByPeer(stalled, 10*time.Second), "the flood's stream idle longest was closed")
	for i, c := range member {
		_, err := c.Write(make([]byte, 60))
		require.NoError(t, err)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadFull(c, make([]byte, 104))
		require.NoError(t, err, "the member's transfer %d is whole", i)
	}
	assert.Equal(t, StreamStats{Accepted: 5, Evicted: 1}, l.Stats())
}

// A large frame received slowly but steadily is not stalled: its idle
// clock moves with every read that returns bytes, so a stream that began
// its frame first but received bytes last is kept, and the one that has
// received nothing for longest makes room. Before, a stream waited from
// the start of its frame, so the slow transfer went first.
func TestStreamEvictionSparesSlowFrame(t *testing.T) {
	l, dialFrom := listenEcho(t, StreamConfig{MaxConns: 2, MaxConnsPerSource: 2, MaxFrame: 1000, Timeout: 20 * time.Second})
	slow := dialFrom("127.0.0.1")
	writeSeen(t, l, slow, partialFrame(1000, 100))
	stalled := dialFrom("127.0.0.1")
	writeSeen(t, l, stalled, partialFrame(1000, 100))
	for range 3 {
		writeSeen(t, l, slow, make([]byte, 100)) // steadily, one piece after another
	}

	late := dialFrom("127.0.0.2")
	require.NoError(t, pingEcho(late, 10*time.Second), "a new stream is served")
	assert.True(t, closedByPeer(stalled, 10*time.Second), "the stream that received nothing for longest was closed")
	_, err := slow.Write(make([]byte, 600))
	require.NoError(t, err)
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadFull(slow, make([]byte, 1004))
	require.NoError(t, err, "the slow frame arrived whole")
	assert.Equal(t, StreamStats{Accepted: 3, Evicted: 1}, l.Stats())
}

// A stream that has delivered a whole frame is kept before one that has
// not, although the latter received its last byte later: a flood of new
// streams that never complete a frame, redialled faster than a member's
// transfer sends its next bytes, displaces its own streams first.
func TestStreamEvictionKeepsFramedStream(t *testing.T) {
	l, dialFrom := listenEcho(t, StreamConfig{MaxConns: 3, MaxConnsPerSource: 3, MaxFrame: 100, Timeout: 20 * time.Second})
	member := dialFrom("127.0.0.1")
	require.NoError(t, pingEcho(member, 10*time.Second))
	waitingOnPeer(t, l, 1) // idle from here on
	var flood []net.Conn
	for _, src := range []string{"127.0.0.2", "127.0.0.3"} {
		c := dialFrom(src)
		writeSeen(t, l, c, partialFrame(100, 10)) // after the member's last byte
		flood = append(flood, c)
	}
	require.NoError(t, pingEcho(dialFrom("127.0.0.4"), 10*time.Second), "a fourth source is served")
	assert.True(t, closedByPeer(flood[0], 10*time.Second), "the flood's older stream without a frame was closed")
	require.NoError(t, pingEcho(member, 10*time.Second), "the member's stream is kept")
	assert.Equal(t, StreamStats{Accepted: 4, Evicted: 1}, l.Stats())
}

// listenEcho listens with cfg, echoing every frame, and returns the
// listener, closed when t ends, with a dialler from loopback sources.
func listenEcho(t *testing.T, cfg StreamConfig) (*StreamListener, func(src string) net.Conn) {
	t.Helper()
	l, err := ListenStream(cfg, echo(make(chan error, 16)))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l, dialerFrom(t, l)
}

// writeSeen writes b on c and waits until l has read bytes on exactly one
// stream since: l then saw the streams' bytes in the order of the calls.
func writeSeen(t *testing.T, l *StreamListener, c net.Conn, b []byte) {
	t.Helper()
	before := idleClocks(l)
	_, err := c.Write(b)
	require.NoError(t, err)
	readSince(t, l, before, 1)
}
