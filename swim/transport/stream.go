package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The stream path: TCP connections carrying length-prefixed frames, for
// what a datagram cannot carry (the stream fallback ping, a view larger
// than one datagram; docs/algorithms.md, “SWIM: stream fallback probe”).
// Like the UDP transport it knows nothing about frame contents: the agent
// seals every frame with the wire package, as it seals datagrams.
//
// A frame is a 4-byte big-endian length n, 1 <= n <= MaxFrame, followed by n
// bytes. The length is checked against MaxFrame before anything is
// allocated, and an inbound connection may read at most MaxBytes in all and
// lives at most Timeout (a read and write deadline set when it is accepted),
// so that a peer that announces a huge frame, sends without end, or trickles
// bytes (slowloris) holds bounded memory for a bounded time. At most
// MaxConns inbound connections are served at once, at most MaxConnsPerSource
// from one IP address. When a new connection finds them taken, it takes the
// place of a served connection that is waiting on its peer (the handler is
// blocked reading: no frame yet, a frame begun and not finished, or the next
// frame after one that was handled), chosen by evictionOrder: first from a
// source holding more than two and more than a quarter of MaxConnsPerSource
// (the most first), then one from a source not marked known
// (StreamListener.SetKnownSource: the agent marks its live members'
// addresses) before one from a known peer's, then one that has not delivered
// a whole frame before one that has, then the one idle longest, that is
// whose last byte arrived earliest (or that was accepted, or began waiting
// for its next frame, earliest, when that is later). A genuine peer sends
// its frames as soon as it has connected, and the next as soon as the last
// is written, and a large frame arriving slowly still arrives byte by byte,
// so streams that stall, whether before their first frame, inside one or
// after a valid one, cannot hold every slot and shut out the fallback probe,
// reliable messages and views, and a flood of streams that never complete a
// frame, one from each of many addresses, displaces its own streams rather
// than a member's transfer that has delivered frames. The TCP handshake
// proves a stream's source address, so such a flood, from addresses that are
// not known peers', displaces its own streams before a known peer's even
// before that peer's first frame is whole. A stream from an unknown address
// (a joiner, a member whose streams come from another address than the one
// it is known at) is ranked with the flood's by its last byte alone until
// its first frame is whole, so a flood redialled faster than that frame
// arrives can still cut it; it still takes the place of a known peer's
// stream when no other is waiting. A connection whose handler is working on
// a frame is never evicted. When no served connection is waiting on its
// peer, the new one is closed at once. A peer that keeps trickling bytes is
// not idle: it holds its slot until Timeout or MaxBytes, as a key holder
// sending valid frames does.

// Defaults of StreamConfig.
const (
	DefaultStreamTimeout  = 10 * time.Second // memberlist's TCPTimeout
	DefaultStreamMaxConns = 64
	DefaultStreamMaxBytes = 8 << 20
	// MaxFrameLimit is the largest MaxFrame allowed (16 MiB).
	MaxFrameLimit = 1 << 24
	// FrameHeaderSize is the size of a frame's length prefix.
	FrameHeaderSize = 4
)

// Stream errors. ReadFrame's errors wrap one of them, or io.EOF for a
// stream that ended cleanly between two frames, or a net.Error whose
// Timeout() is true for a deadline that passed.
var (
	// ErrFrameTooLarge: a frame's length prefix exceeds MaxFrame.
	ErrFrameTooLarge = errors.New("transport: stream frame longer than the limit")
	// ErrFrameEmpty: a frame's length prefix is 0.
	ErrFrameEmpty = errors.New("transport: empty stream frame")
	// ErrFrameTruncated: the stream ended inside a frame.
	ErrFrameTruncated = errors.New("transport: stream ended inside a frame")
	// ErrStreamBudget: an inbound stream read more than MaxBytes.
	ErrStreamBudget = errors.New("transport: stream longer than its byte budget")
	// ErrStreamEvicted: the inbound stream was closed to make room for
	// another (MaxConns, MaxConnsPerSource) while its frame completed;
	// the frame is not returned.
	ErrStreamEvicted = errors.New("transport: stream closed to make room for another")
	// ErrStreamIdle: no whole frame came within the limit given to
	// ReadFrameWithin, before the connection's deadline. The error wraps
	// os.ErrDeadlineExceeded too.
	ErrStreamIdle = errors.New("transport: no frame from the stream's peer within the idle limit")
)

// StreamConfig configures a stream listener and the connections it dials.
// The zero value of every field means its default.
type StreamConfig struct {
	// Bind is the TCP address to listen on, ip:port. Default
	// "127.0.0.1:0".
	Bind string
	// MaxFrame is the largest frame, in bytes, read or written (default
	// DefaultMaxPacketSize, 1,400; at most MaxFrameLimit).
	MaxFrame int
	// MaxBytes bounds what one inbound connection may send, length
	// prefixes included (default 8 MiB). At least MaxFrame+4.
	MaxBytes int
	// MaxConns bounds the inbound connections served at once (default 64).
	// A connection beyond it takes the place of a served one waiting on its
	// peer: from a source holding more than two and more than a quarter of
	// MaxConnsPerSource first, then one from a source not marked known
	// (StreamListener.SetKnownSource; none is by default), then one that
	// has not delivered a whole frame, then the one idle longest
	// (evictionOrder; counted in Evicted), or is
	// closed as soon as it is accepted when none is (counted in Refused).
	// On Linux a connection whose handler has read nothing yet while its
	// whole first frame waits in the kernel is not waiting on its peer and
	// is kept (StreamStats.Spared).
	MaxConns int
	// MaxConnsPerSource bounds the inbound connections served at once from
	// one source IP address (default MaxConns/4, at least 1; at most
	// MaxConns). A connection beyond it takes the place of one from the
	// same source that is waiting on its peer (the one idle longest), or is
	// closed as soon as it
	// is accepted when none is (counted in Refused): one peer cannot hold
	// every slot, and one source's new streams displace its own stalled
	// ones before another source's.
	MaxConnsPerSource int
	// Timeout bounds a connection's whole life, dial included: an inbound
	// connection gets it as its read and write deadline when accepted, a
	// dialled one when dialling starts (default 10 s).
	Timeout time.Duration
	// Wrap, when set, is applied to every connection once accepted
	// (inbound true) or dialled, before any frame is read or written, and
	// may return a connection wrapping it (TLS, accounting, a test's
	// impairment); an error closes the connection (an inbound one is then
	// counted in Refused). The deadline is set before Wrap is called.
	Wrap func(conn net.Conn, inbound bool) (net.Conn, error)
	// Source, when set, is the local IP address DialStream dials from (a
	// port chosen by the kernel), as Config.Source is for datagrams: a
	// member bound to a wildcard address dials from the address it
	// advertises rather than the route's. On Linux the port is taken when
	// the stream connects (IP_BIND_ADDRESS_NO_PORT), so streams to
	// different peers share ports as they do without Source. The listener
	// ignores it.
	Source netip.Addr
}

func (c StreamConfig) withDefaults() (StreamConfig, error) {
	if c.Bind == "" {
		c.Bind = "127.0.0.1:0"
	}
	if c.MaxFrame == 0 {
		c.MaxFrame = DefaultMaxPacketSize
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultStreamMaxBytes
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultStreamMaxConns
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultStreamTimeout
	}
	if c.MaxConnsPerSource == 0 {
		c.MaxConnsPerSource = max(c.MaxConns/4, 1)
	}
	switch {
	case c.MaxFrame < 1 || c.MaxFrame > MaxFrameLimit:
		return c, fmt.Errorf("transport: stream MaxFrame %d out of range [1, %d]", c.MaxFrame, MaxFrameLimit)
	case c.MaxBytes < c.MaxFrame+FrameHeaderSize:
		return c, fmt.Errorf("transport: stream MaxBytes %d below one frame (MaxFrame %d + %d)", c.MaxBytes, c.MaxFrame, FrameHeaderSize)
	case c.MaxConns < 1:
		return c, fmt.Errorf("transport: stream MaxConns %d is below 1", c.MaxConns)
	case c.Timeout < 0:
		return c, fmt.Errorf("transport: stream Timeout %v is negative", c.Timeout)
	case c.MaxConnsPerSource < 1 || c.MaxConnsPerSource > c.MaxConns:
		return c, fmt.Errorf("transport: stream MaxConnsPerSource %d out of range [1, MaxConns %d]", c.MaxConnsPerSource, c.MaxConns)
	}
	return c, nil
}

// AppendFrame appends body as one frame to dst. It returns an error for an
// empty body or one longer than MaxFrameLimit.
func AppendFrame(dst, body []byte) ([]byte, error) {
	if len(body) == 0 {
		return dst, ErrFrameEmpty
	}
	if len(body) > MaxFrameLimit {
		return dst, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, len(body), MaxFrameLimit)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...), nil
}

// ReadFrame reads one frame of at most maxFrame bytes from r. It returns
// io.EOF when r ends before the first byte of a frame, an error wrapping
// ErrFrameTruncated when it ends inside one, ErrFrameEmpty for a zero
// length and ErrFrameTooLarge for a length above maxFrame (then nothing is
// allocated or read beyond the prefix).
func ReadFrame(r io.Reader, maxFrame int) ([]byte, error) {
	var h [FrameHeaderSize]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF && n == 0 {
			return nil, io.EOF
		}
		return nil, truncated(err, fmt.Sprintf("length prefix: %d of %d bytes", n, FrameHeaderSize))
	}
	n := binary.BigEndian.Uint32(h[:])
	switch {
	case n == 0:
		return nil, ErrFrameEmpty
	case uint64(n) > uint64(max(maxFrame, 0)):
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n, maxFrame)
	}
	body := make([]byte, n)
	if got, err := io.ReadFull(r, body); err != nil {
		return nil, truncated(err, fmt.Sprintf("body: %d of %d bytes", got, n))
	}
	return body, nil
}

// truncated wraps an end of stream inside a frame as ErrFrameTruncated and
// passes other errors (a deadline, a reset) through.
func truncated(err error, where string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %s", ErrFrameTruncated, where)
	}
	return err
}

// StreamStats counts a stream listener's connections.
type StreamStats struct {
	// Accepted counts inbound connections served; Refused those closed at
	// once because MaxConns were being served (and none could make room),
	// or MaxConnsPerSource from their source address, or Wrap refused
	// them. Each connection counts in one of the two, except one closed to
	// make room while Wrap ran: it counts in Evicted alone.
	Accepted, Refused uint64
	// Evicted counts served connections closed to make room for a new one
	// when MaxConns were being served, or MaxConnsPerSource from the new
	// one's source (evictionOrder says which goes). Like Timeouts, it says
	// how a served connection ended, and such a connection is not counted
	// in Refused: each connection is counted once.
	Evicted uint64
	// Timeouts counts inbound connections cut at their deadline
	// (Timeout), Oversize those that announced a frame above MaxFrame or
	// sent more than MaxBytes, Malformed those with an empty frame or that
	// ended inside one.
	Timeouts, Oversize, Malformed uint64
	// Spared counts the times a served connection chosen for eviction was
	// kept because its handler had read nothing yet and its whole first
	// frame was waiting in the kernel's receive buffer (Linux only, and
	// without Wrap): its handler was behind, not its peer. Another
	// connection is evicted instead, or the new one refused.
	Spared uint64
}

// StreamListener accepts stream connections and hands each to a handler
// in a goroutine of its own.
type StreamListener struct {
	ln     *net.TCPListener
	addr   netip.AddrPort
	cfg    StreamConfig
	slots  chan struct{}
	done   chan struct{}
	closed sync.Once
	wg     sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]*connState
	sources map[netip.Addr]int      // connections served (or being admitted) per source address
	freed   chan struct{}           // signalled (capacity 1) when a source's count comes down
	known   map[netip.Addr]struct{} // known peers' addresses (SetKnownSource)

	accepted, refused, evicted, timeouts, oversize, malformed, spared atomic.Uint64
}

// ListenStream opens a TCP listener on cfg.Bind and serves every accepted
// connection with handle, in a goroutine of its own, under the limits of
// cfg; the connection is closed when handle returns. handle must return
// when the Conn's reads and writes fail.
func ListenStream(cfg StreamConfig, handle func(*Conn)) (*StreamListener, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ap, err := netip.ParseAddrPort(cfg.Bind)
	if err != nil {
		return nil, fmt.Errorf("transport: stream Bind %q: want ip:port: %w", cfg.Bind, err)
	}
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(ap))
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	local := ln.Addr().(*net.TCPAddr).AddrPort()
	l := &StreamListener{
		ln: ln, addr: netip.AddrPortFrom(local.Addr().Unmap(), local.Port()), cfg: cfg,
		slots: make(chan struct{}, cfg.MaxConns), done: make(chan struct{}), conns: map[net.Conn]*connState{},
		sources: map[netip.Addr]int{}, freed: make(chan struct{}, 1), known: map[netip.Addr]struct{}{},
	}
	l.wg.Add(1)
	go l.acceptLoop(handle)
	return l, nil
}

func (l *StreamListener) acceptLoop(handle func(*Conn)) {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond) // EMFILE and the like: do not spin
			continue
		}
		src := sourceOf(c)
		if !l.sourceFor(src) {
			l.refused.Add(1)
			_ = c.Close()
			continue
		}
		if !l.slotFor() {
			l.releaseSource(src)
			l.refused.Add(1)
			_ = c.Close()
			continue
		}
		st := &connState{at: monoNow(), src: src}
		st.idleSince.Store(st.at)
		l.mu.Lock()
		l.conns[c] = st
		l.mu.Unlock()
		deadline := time.Now().Add(l.cfg.Timeout)
		_ = c.SetDeadline(deadline)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() {
				// The slot is free before the peer sees the close: a peer
				// that opens its next stream on seeing it is not refused.
				l.mu.Lock()
				delete(l.conns, c)
				l.mu.Unlock()
				<-l.slots
				l.releaseSource(src) // after the slot: one admitted on it finds the slot free
				_ = c.Close()
			}()
			conn := c
			if l.cfg.Wrap != nil {
				w, err := l.cfg.Wrap(c, true)
				if err != nil {
					if !st.isEvicted() { // an evicted one is counted already
						l.refused.Add(1)
					}
					return
				}
				conn = w
			}
			l.accepted.Add(1)
			nc := newConn(conn, l.cfg, l, st, deadline)
			handle(nc)
		}()
	}
}

// LocalAddr returns the bound address (with the kernel-chosen port).
func (l *StreamListener) LocalAddr() netip.AddrPort { return l.addr }

// Stats returns the connection counters.
func (l *StreamListener) Stats() StreamStats {
	return StreamStats{
		Accepted: l.accepted.Load(), Refused: l.refused.Load(), Evicted: l.evicted.Load(),
		Timeouts: l.timeouts.Load(), Oversize: l.oversize.Load(), Malformed: l.malformed.Load(),
		Spared: l.spared.Load(),
	}
}

// Close stops accepting, closes the connections being served and waits
// for their handlers to return. It is safe to call more than once.
func (l *StreamListener) Close() error {
	var err error
	l.closed.Do(func() {
		close(l.done)
		err = l.ln.Close()
		l.mu.Lock()
		for c := range l.conns {
			_ = c.Close()
		}
		l.mu.Unlock()
		l.wg.Wait()
	})
	return err
}

// Conn is one stream connection, inbound (from a StreamListener) or
// dialled (DialStream).
type Conn struct {
	c        net.Conn
	r        *bufio.Reader
	maxFrame int
	left     int // bytes this inbound connection may still read; -1 unbounded
	l        *StreamListener
	state    *connState // inbound: the listener's record, whose idle clock reads move
	deadline time.Time  // the read and write deadline set when accepted or dialled
}

// newConn wraps c; l and st are the listener and its record for an
// inbound connection, nil for a dialled one.
func newConn(c net.Conn, cfg StreamConfig, l *StreamListener, st *connState, deadline time.Time) *Conn {
	left := -1
	var r io.Reader = c
	if l != nil {
		left = cfg.MaxBytes
		r = progressReader{r: c, st: st}
	}
	return &Conn{c: c, r: bufio.NewReaderSize(r, 4096), maxFrame: cfg.MaxFrame, left: left, l: l, state: st, deadline: deadline}
}

// DialStream connects to a stream listener at to. The connection's read
// and write deadline is the earlier of ctx's deadline and cfg.Timeout from
// now; it dials from cfg.Source when set; cfg.Bind, MaxBytes and MaxConns
// are not used.
func DialStream(ctx context.Context, to netip.AddrPort, cfg StreamConfig) (*Conn, error) {
	cfg.Bind = ""
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var d net.Dialer
	if cfg.Source.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(cfg.Source, 0))
		d.Control = bindNoPort
	}
	c, err := d.DialContext(ctx, "tcp", to.String())
	if err != nil {
		return nil, fmt.Errorf("transport: stream to %s: %w", to, err)
	}
	_ = c.SetDeadline(deadline)
	if cfg.Wrap != nil {
		w, err := cfg.Wrap(c, false)
		if err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("transport: stream to %s: %w", to, err)
		}
		c = w
	}
	return newConn(c, cfg, nil, nil, deadline), nil
}

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() netip.AddrPort {
	if a, ok := c.c.RemoteAddr().(*net.TCPAddr); ok {
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// ReadFrame reads the next frame (see the package's ReadFrame). On an
// inbound connection it also enforces MaxBytes (ErrStreamBudget) and
// counts refusals in the listener's StreamStats.
func (c *Conn) ReadFrame() ([]byte, error) {
	r := io.Reader(c.r)
	if c.left >= 0 {
		r = &budgetReader{r: c.r, left: &c.left}
	}
	if c.state != nil {
		// Waiting on the peer from here (or from accepting, for the
		// first frame) until the frame is whole: evictable meanwhile,
		// idle since the last byte read (progressReader).
		c.state.claim.CompareAndSwap(claimFrame, claimNone)
		c.state.idleSince.CompareAndSwap(0, monoNow())
	}
	b, err := ReadFrame(r, c.maxFrame)
	if err == nil && c.state != nil {
		c.state.framed.Store(true)
		c.state.idleSince.Store(0)
		if !c.state.claim.CompareAndSwap(claimNone, claimFrame) {
			// Closed to make room as the frame completed (evictWaiting):
			// not handled on a closed stream.
			return nil, ErrStreamEvicted
		}
	}
	if err != nil && c.l != nil {
		var ne net.Error
		switch {
		case errors.Is(err, ErrStreamBudget), errors.Is(err, ErrFrameTooLarge):
			c.l.oversize.Add(1)
		case errors.Is(err, ErrFrameEmpty), errors.Is(err, ErrFrameTruncated):
			c.l.malformed.Add(1)
		case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
			c.l.timeouts.Add(1)
		}
	}
	return b, err
}

// ReadFrameWithin reads the next frame as ReadFrame does, but fails
// when the frame is not whole within idle of the call (idle > 0) with an
// error wrapping ErrStreamIdle and os.ErrDeadlineExceeded, so that a
// peer that sends nothing holds the connection for idle, not for its
// whole Timeout. The connection's own deadline still applies when it
// comes first (a plain timeout), and is restored for the reads and
// writes after. After an error the connection is to be closed: a frame
// cut by the limit leaves the stream inside it. An idle limit of 0 or
// less is none.
func (c *Conn) ReadFrameWithin(idle time.Duration) ([]byte, error) {
	at := time.Now().Add(idle)
	if idle <= 0 || !at.Before(c.deadline) {
		return c.ReadFrame()
	}
	_ = c.c.SetReadDeadline(at)
	b, err := c.ReadFrame()
	_ = c.c.SetReadDeadline(c.deadline)
	var ne net.Error
	if err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		return nil, fmt.Errorf("%w (%v): %w", ErrStreamIdle, idle, os.ErrDeadlineExceeded)
	}
	return b, err
}

// WriteFrame writes body as one frame (at most MaxFrame bytes).
func (c *Conn) WriteFrame(body []byte) error {
	if len(body) > c.maxFrame {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, len(body), c.maxFrame)
	}
	b, err := AppendFrame(make([]byte, 0, FrameHeaderSize+len(body)), body)
	if err != nil {
		return err
	}
	_, err = c.c.Write(b)
	return err
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// budgetReader fails with ErrStreamBudget once more than *left bytes
// would be read.
type budgetReader struct {
	r    io.Reader
	left *int
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if *b.left <= 0 {
		return 0, ErrStreamBudget
	}
	if len(p) > *b.left {
		p = p[:*b.left]
	}
	n, err := b.r.Read(p)
	*b.left -= n
	return n, err
}
