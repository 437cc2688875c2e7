package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf []byte
	var err error
	for _, body := range [][]byte{{1}, bytes.Repeat([]byte{7}, 300), []byte("hello")} {
		buf, err = AppendFrame(buf, body)
		require.NoError(t, err)
	}
	assert.Equal(t, []byte{0, 0, 0, 1, 1}, buf[:5])
	r := bytes.NewReader(buf)
	for _, want := range []int{1, 300, 5} {
		b, err := ReadFrame(r, 300)
		require.NoError(t, err)
		assert.Len(t, b, want)
	}
	_, err = ReadFrame(r, 300)
	assert.Equal(t, io.EOF, err, "a clean end between frames")
	_, err = AppendFrame(nil, nil)
	assert.ErrorIs(t, err, ErrFrameEmpty)
}

// countingReader records how many bytes were taken from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Hostile frames: each refused with its own error, and a huge length is
// refused from its prefix alone, before anything is allocated or read.
func TestReadFrameHostile(t *testing.T) {
	huge := binary.BigEndian.AppendUint32(nil, 0xFFFFFFFF)
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"zero length", []byte{0, 0, 0, 0, 9}, ErrFrameEmpty},
		{"length above the cap", append(binary.BigEndian.AppendUint32(nil, 101), make([]byte, 101)...), ErrFrameTooLarge},
		{"4 GiB length", append(huge, 1, 2, 3), ErrFrameTooLarge},
		{"cut in the prefix", []byte{0, 0}, ErrFrameTruncated},
		{"cut in the body", []byte{0, 0, 0, 10, 1, 2, 3}, ErrFrameTruncated},
	} {
		cr := &countingReader{r: bytes.NewReader(c.in)}
		_, err := ReadFrame(cr, 100)
		assert.ErrorIs(t, err, c.want, c.name)
		if errors.Is(c.want, ErrFrameTooLarge) || errors.Is(c.want, ErrFrameEmpty) {
			assert.Equal(t, FrameHeaderSize, cr.n, "%s: nothing read past the prefix", c.name)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		_, _ = ReadFrame(bytes.NewReader(huge), 1400)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(100<<10), "a 4 GiB length prefix allocates only its error")
}

// FuzzReadFrame: whatever the bytes, ReadFrame never panics, never returns
// a frame longer than the cap or empty, and the frames it returns
// re-encode to exactly the bytes it consumed.
func FuzzReadFrame(f *testing.F) {
	good, _ := AppendFrame(nil, []byte("sealed packet"))
	f.Add(good)
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 3, 1, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		const maxFrame = 64
		r := bytes.NewReader(in)
		var again []byte
		for {
			b, err := ReadFrame(r, maxFrame)
			if err != nil {
				break
			}
			if len(b) == 0 || len(b) > maxFrame {
				t.Fatalf("frame of %d bytes with cap %d", len(b), maxFrame)
			}
			if again, err = AppendFrame(again, b); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.HasPrefix(in, again) {
			t.Fatalf("re-encoded frames %x are not a prefix of the input %x", again, in)
		}
	})
}

// echo serves frames back until the stream fails, recording the error.
func echo(errs chan<- error) func(*Conn) {
	return func(c *Conn) {
		for {
			b, err := c.ReadFrame()
			if err != nil {
				errs <- err
				return
			}
			if err := c.WriteFrame(b); err != nil {
				errs <- err
				return
			}
		}
	}
}

// pingEcho writes a "ping" frame on c and reads its echo, waiting at most
// wait for it; the error is the write's or the read's.
func pingEcho(c net.Conn, wait time.Duration) error {
	f, _ := AppendFrame(nil, []byte("ping"))
	if _, err := c.Write(f); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.ReadFull(c, make([]byte, len(f)))
	return err
}

func TestStreamEcho(t *testing.T) {
	errs := make(chan error, 4)
	l, err := ListenStream(StreamConfig{}, echo(errs))
	require.NoError(t, err)
	defer l.Close()
	c, err := DialStream(context.Background(), l.LocalAddr(), StreamConfig{})
	require.NoError(t, err)
	require.NoError(t, c.WriteFrame([]byte("ping")))
	b, err := c.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, "ping", string(b))
	assert.ErrorIs(t, c.WriteFrame(make([]byte, DefaultMaxPacketSize+1)), ErrFrameTooLarge)
	require.NoError(t, c.Close())
	assert.Equal(t, io.EOF, <-errs)
	assert.Equal(t, StreamStats{Accepted: 1}, l.Stats())
}

// Hostile connections over real sockets: a slow sender is cut at the
// deadline, an announced frame above the cap and a stream over its byte
// budget are refused; each is counted.
func TestStreamListenerLimits(t *testing.T) {
	errs := make(chan error, 16)
	cfg := StreamConfig{MaxFrame: 100, MaxBytes: 250, MaxConns: 1, Timeout: 300 * time.Millisecond}
	l, err := ListenStream(cfg, echo(errs))
	require.NoError(t, err)
	defer l.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", l.LocalAddr().String())
		require.NoError(t, err)
		return c
	}

	// Slowloris: one frame, then two bytes of a prefix and silence.
	slow := dial()
	first, err := AppendFrame(nil, []byte("hi"))
	require.NoError(t, err)
	_, err = slow.Write(first)
	require.NoError(t, err)
	_, err = io.ReadFull(slow, make([]byte, len(first))) // the echo
	require.NoError(t, err)
	_, err = slow.Write([]byte{0, 0})
	require.NoError(t, err)
	err = <-errs
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "slow sender cut at the deadline")
	_ = slow.Close()
	require.Eventually(t, func() bool { return len(l.slots) == 0 }, 5*time.Second, time.Millisecond)

	// An announced 1 MiB frame.
	big := dial()
	_, err = big.Write(binary.BigEndian.AppendUint32(nil, 1<<20))
	require.NoError(t, err)
	assert.ErrorIs(t, <-errs, ErrFrameTooLarge)
	_ = big.Close()
	require.Eventually(t, func() bool { return len(l.slots) == 0 }, 5*time.Second, time.Millisecond)

	// Frames within the cap, but more than 250 bytes in all.
	long := dial()
	go func() {
		frame, _ := AppendFrame(nil, make([]byte, 100))
		for range 4 {
			if _, err := long.Write(frame); err != nil {
				return
			}
		}
	}()
	go func() { _, _ = io.Copy(io.Discard, long) }()
	assert.ErrorIs(t, <-errs, ErrStreamBudget)
	_ = long.Close()

	st := l.Stats()
	assert.Equal(t, StreamStats{Accepted: 3, Timeouts: 1, Oversize: 2}, st)
}

// closedByPeer reports whether the listener closed c: a read ends with EOF
// or a reset, not with the read deadline (wait).
func closedByPeer(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// Stalled connections cannot hold every slot: with MaxConns taken, a new
// connection takes the place of the one waiting on its peer that has been
// idle longest: since it was accepted when it has sent nothing, since its
// last frame, or since the last byte of a frame it began. Each connection counts once: the
// evicted ones were served (Accepted) and ended evicted, as a timed-out
// one ends in Timeouts, and none counts in Refused.
func TestStreamStalledConnectionsMakeRoom(t *testing.T) {
	errs := make(chan error, 16)
	l, err := ListenStream(StreamConfig{MaxConns: 2, MaxConnsPerSource: 2, Timeout: 20 * time.Second}, echo(errs))
	require.NoError(t, err)
	defer l.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", l.LocalAddr().String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	roundTrip := func(c net.Conn) error { return pingEcho(c, 10*time.Second) }
	idle1 := dial()
	require.Eventually(t, func() bool { return l.Stats().Accepted == 1 }, 5*time.Second, time.Millisecond)
	idle2 := dial()
	require.Eventually(t, func() bool { return l.Stats().Accepted == 2 }, 5*time.Second, time.Millisecond)

	genuine := dial()
	require.NoError(t, roundTrip(genuine), "a genuine peer is served although idle connections held every slot")
	waitingOnPeer(t, l, 2) // genuine waits from before idle2's echo
	assert.True(t, closedByPeer(idle1, 10*time.Second), "the oldest idle connection was closed")
	require.NoError(t, roundTrip(idle2), "the younger idle one is still served")

	// Both served connections have delivered a frame and wait for the
	// next: genuine since its echo, idle2 since its later one. A new
	// connection takes genuine's place (the longer wait), not idle2's.
	waitingOnPeer(t, l, 2)
	late := dial()
	require.NoError(t, roundTrip(late), "served although both slots were held by streams that delivered a frame")
	assert.True(t, closedByPeer(genuine, 10*time.Second), "the stream waiting longest was closed")
	// A frame begun and not finished: idle2 waits inside it from its last
	// byte, which arrived before late's next echo; the next connection
	// takes its place.
	waitingOnPeer(t, l, 2) // late's handler reads again before the clocks are taken
	before := idleClocks(l)
	_, err = idle2.Write([]byte{0, 0, 0})
	require.NoError(t, err)
	readSince(t, l, before, 1)
	require.NoError(t, roundTrip(late))
	waitingOnPeer(t, l, 2)
	next := dial()
	require.NoError(t, roundTrip(next))
	assert.True(t, closedByPeer(idle2, 10*time.Second), "the stream stalled inside a frame was closed")
	require.NoError(t, roundTrip(late), "the stream that keeps sending is still served")
	assert.Equal(t, StreamStats{Accepted: 5, Evicted: 3}, l.Stats())
}

// A connection whose handler is working on a frame (not waiting on its
// peer) is never evicted: with every slot so held, a new connection is
// closed at once and counted in Refused.
func TestStreamBusyConnectionsKept(t *testing.T) {
	release := make(chan struct{})
	got := make(chan struct{}, 4)
	l, err := ListenStream(StreamConfig{MaxConns: 2, MaxConnsPerSource: 2, Timeout: 20 * time.Second}, func(c *Conn) {
		b, err := c.ReadFrame()
		if err != nil {
			return
		}
		got <- struct{}{}
		<-release // working on the frame
		_ = c.WriteFrame(b)
	})
	require.NoError(t, err)
	defer l.Close()
	var busy []net.Conn
	f, _ := AppendFrame(nil, []byte("work"))
	for range 2 {
		c, err := net.Dial("tcp", l.LocalAddr().String())
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write(f)
		require.NoError(t, err)
		<-got
		busy = append(busy, c)
	}
	late, err := net.Dial("tcp", l.LocalAddr().String())
	require.NoError(t, err)
	defer late.Close()
	assert.True(t, closedByPeer(late, 10*time.Second), "refused at once")
	require.Eventually(t, func() bool { return l.Stats().Refused == 1 }, 5*time.Second, time.Millisecond)
	close(release)
	for _, c := range busy {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.ReadFull(c, make([]byte, len(f)))
		assert.NoError(t, err, "a busy stream was kept and answered")
	}
	assert.Equal(t, StreamStats{Accepted: 2, Refused: 1}, l.Stats())
}

// A connection evicted while Wrap runs on it (a handshake that never
// finishes) counts in Evicted alone, not also in Refused when its Wrap
// then fails on the closed connection.
func TestStreamEvictedDuringWrapCountedOnce(t *testing.T) {
	var n atomic.Int32
	wrap := func(c net.Conn, inbound bool) (net.Conn, error) {
		if n.Add(1) == 1 {
			// The first connection's handshake waits for a byte that
			// never comes: it ends when the connection is closed.
			if _, err := c.Read(make([]byte, 1)); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	errs := make(chan error, 16)
	l, err := ListenStream(StreamConfig{MaxConns: 1, Timeout: 20 * time.Second, Wrap: wrap}, echo(errs))
	require.NoError(t, err)
	defer l.Close()
	first, err := net.Dial("tcp", l.LocalAddr().String())
	require.NoError(t, err)
	defer first.Close()
	require.Eventually(t, func() bool { return n.Load() == 1 }, 5*time.Second, time.Millisecond)
	second, err := net.Dial("tcp", l.LocalAddr().String())
	require.NoError(t, err)
	defer second.Close()
	f, _ := AppendFrame(nil, []byte("ping"))
	_, err = second.Write(f)
	require.NoError(t, err)
	_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadFull(second, make([]byte, len(f)))
	require.NoError(t, err, "the new connection is served in the evicted one's slot")
	assert.Equal(t, StreamStats{Accepted: 1, Evicted: 1}, l.Stats())
}

func TestStreamConfigErrors(t *testing.T) {
	for _, c := range []StreamConfig{
		{MaxFrame: -1}, {MaxFrame: MaxFrameLimit + 1}, {MaxFrame: 100, MaxBytes: 103},
		{MaxConns: -1}, {Timeout: -time.Second}, {Bind: "localhost"}, {MaxConns: 4, MaxConnsPerSource: 5}, {MaxConnsPerSource: -1},
	} {
		_, err := ListenStream(c, func(*Conn) {})
		assert.Error(t, err, "%+v", c)
	}
	_, err := DialStream(context.Background(), netipLoopbackClosedPort(t), StreamConfig{Timeout: time.Second})
	assert.Error(t, err, "nobody listens")
}

// netipLoopbackClosedPort returns a loopback TCP address nobody listens on.
func netipLoopbackClosedPort(t *testing.T) netip.AddrPort {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ap := ln.Addr().(*net.TCPAddr).AddrPort()
	require.NoError(t, ln.Close())
	return ap
}

// Wrap sees every connection, inbound and dialled, and may refuse one:
// a refused inbound connection is closed and counted in Refused.
func TestStreamWrap(t *testing.T) {
	var inbound, dialled atomic.Int32
	refuse := atomic.Bool{}
	wrap := func(c net.Conn, in bool) (net.Conn, error) {
		if in {
			inbound.Add(1)
			if refuse.Load() {
				return nil, errors.New("refused by the test")
			}
		} else {
			dialled.Add(1)
		}
		return c, nil
	}
	errs := make(chan error, 4)
	l, err := ListenStream(StreamConfig{Wrap: wrap}, echo(errs))
	require.NoError(t, err)
	defer l.Close()
	c, err := DialStream(context.Background(), l.LocalAddr(), StreamConfig{Wrap: wrap})
	require.NoError(t, err)
	require.NoError(t, c.WriteFrame([]byte("x")))
	_, err = c.ReadFrame()
	require.NoError(t, err)
	_ = c.Close()
	assert.Equal(t, io.EOF, <-errs)

	refuse.Store(true)
	c, err = DialStream(context.Background(), l.LocalAddr(), StreamConfig{})
	require.NoError(t, err)
	_, err = c.ReadFrame()
	assert.Error(t, err, "refused by Wrap: closed")
	_ = c.Close()
	assert.Equal(t, int32(2), inbound.Load())
	assert.Equal(t, int32(1), dialled.Load())
	assert.Equal(t, StreamStats{Accepted: 1, Refused: 1}, l.Stats())

	_, err = DialStream(context.Background(), l.LocalAddr(), StreamConfig{Wrap: func(net.Conn, bool) (net.Conn, error) {
		return nil, errors.New("no")
	}})
	assert.ErrorContains(t, err, "no")
}

// BenchmarkReadFrame: reading 1,400-byte frames from memory.
func BenchmarkReadFrame(b *testing.B) {
	frame, _ := AppendFrame(nil, make([]byte, DefaultMaxPacketSize))
	buf := bytes.Repeat(frame, 64)
	r := bytes.NewReader(buf)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if r.Len() == 0 {
			r.Reset(buf)
		}
		if _, err := ReadFrame(r, DefaultMaxPacketSize); err != nil {
			b.Fatal(err)
		}
	}
}

// One source cannot hold every slot: from 127.0.0.1, MaxConnsPerSource 2
// of MaxConns 4 are served, and a third takes the place of the one of
// them idle longest on its peer, while a connection from another source
// is served; a source's connection that has sent nothing since it was
// accepted gives its place to a new one from it before one that delivered
// a frame later.
func TestStreamConnsPerSource(t *testing.T) {
	errs := make(chan error, 16)
	l, err := ListenStream(StreamConfig{MaxConns: 4, MaxConnsPerSource: 2, Timeout: 20 * time.Second}, echo(errs))
	require.NoError(t, err)
	defer l.Close()
	dialFrom := dialerFrom(t, l)
	roundTrip := func(c net.Conn) error { return pingEcho(c, 5*time.Second) }
	var own []net.Conn
	for range 2 {
		c := dialFrom("127.0.0.1")
		require.NoError(t, roundTrip(c), "within the source's bound")
		own = append(own, c)
		waitingOnPeer(t, l, len(own)) // own[0] waits from before own[1] is dialled
	}
	third := dialFrom("127.0.0.1")
	require.NoError(t, roundTrip(third), "a third from the same source is served")
	assert.True(t, closedByPeer(own[0], 5*time.Second), "in the place of the source's stream waiting longest")
	require.NoError(t, roundTrip(own[1]), "the source's other stream is kept")
	idle := dialFrom("127.0.0.2")
	require.Eventually(t, func() bool { return l.Stats().Accepted == 4 }, 5*time.Second, time.Millisecond)
	require.NoError(t, roundTrip(dialFrom("127.0.0.2")), "another source is served")
	waitingOnPeer(t, l, 4) // idle since it was accepted, before the echo
	require.NoError(t, roundTrip(dialFrom("127.0.0.2")), "the source's connection idle longest makes room")
	assert.True(t, closedByPeer(idle, 5*time.Second), "the idle one was closed")
	assert.Equal(t, StreamStats{Accepted: 6, Evicted: 2}, l.Stats())
}
