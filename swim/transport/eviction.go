package transport

// Eviction: what the stream listener knows of each served connection, and
// which one a new connection displaces when every slot, or its source's
// share, is taken (the rule is the package's, stream.go).

import (
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// connState is what the listener knows of a served connection: when it
// was accepted, its source, whether a frame has arrived on it, and since
// when it has been idle.
type connState struct {
	at     int64 // accepted (monoNow)
	src    netip.Addr
	framed atomic.Bool // a whole frame was read, and its handler read on
	// began is set once the handler has read a byte (progressReader):
	// before, the kernel's receive buffer starts with the first frame.
	began atomic.Bool
	// idleSince is when the connection last made progress while its
	// handler waits on the peer (monoNow): the latest of the
	// accepting time, the start of the read of the current frame and the
	// last read that returned bytes (progressReader); 0 while the handler
	// works on a frame it has read, when the connection cannot be evicted.
	idleSince atomic.Int64
	// claim settles who has the stream when its frame completes as it is
	// chosen for eviction: the reader (ReadFrame) and the evictor
	// (evictWaiting) each swap it from claimNone, and the one that
	// loses gives way. claimFrame holds until the next ReadFrame;
	// claimEvicted for good.
	claim atomic.Int32
}

// connState.claim's values.
const (
	claimNone    = iota // waiting on the peer
	claimFrame          // a whole frame read, its handler at work
	claimEvicted        // closed to make room (slotFor, sourceFor)
)

// isEvicted reports whether the connection was closed to make room.
func (st *connState) isEvicted() bool { return st.claim.Load() == claimEvicted }

// monoEpoch and monoNow give the idle clocks a monotonic time: nanoseconds
// since the package was loaded, plus one so that no clock reads 0 (which
// idleSince keeps for "handling a frame"). A wall clock stepped back or
// forth would reorder evictions.
var monoEpoch = time.Now()

func monoNow() int64 { return int64(time.Since(monoEpoch)) + 1 }

// progressReader reads from a served connection and moves its idle clock
// on every read that returns bytes: a stream receiving a large frame
// slowly is not stalled. It sits under the Conn's bufio.Reader, so it
// runs once per read from the connection, not per byte.
type progressReader struct {
	r  io.Reader
	st *connState
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.st.idleSince.Store(monoNow())
		p.st.began.Store(true)
	}
	return n, err
}

// slotFor takes a serving slot for a new connection, closing a served
// connection waiting on its peer (evictionOrder) when all slots are
// taken; it reports false when there is none to close or its slot does
// not come free within a second.
func (l *StreamListener) slotFor() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	if !l.evictWaiting(func(*connState) bool { return true }) {
		return false
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-l.done:
	}
	return false
}

// sourceFor counts a new connection from src, closing a served connection
// from src waiting on its peer (evictionOrder) when MaxConnsPerSource are
// served from it; it reports false when there is none to close or its
// count does not come down within a second.
func (l *StreamListener) sourceFor(src netip.Addr) bool {
	if l.takeSource(src) {
		return true
	}
	if !l.evictWaiting(func(st *connState) bool { return st.src == src }) {
		return false
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return false
		case <-t.C:
			return false
		case <-l.freed:
		}
		if l.takeSource(src) {
			return true
		}
	}
}

// standing is what evictionOrder weighs of a served connection's source
// (l.mu held): how crowded it is, and whether it is a known peer's.
type standing struct {
	crowding int  // crowding(src)
	known    bool // src was marked with SetKnownSource
}

// standing returns src's standing (l.mu held).
func (l *StreamListener) standing(src netip.Addr) standing {
	_, known := l.known[src]
	return standing{crowding: l.crowding(src), known: known}
}

// evictionOrder reports whether a served connection a should be evicted
// before b, given their sources' standing: one from the more crowded
// source goes first (a flood from a few addresses displaces itself), then
// one from a source not marked known (SetKnownSource) before one from a
// known peer's address (a flood of streams from many addresses displaces
// its own streams, not a member's whose first frame has not yet arrived
// whole; a joiner, not yet known, still displaces a member's stream when
// there is no other), then one that has not delivered a whole frame (a
// handler that ends a stream on a frame it refuses, as the agent's does
// on one that fails authentication, makes the others streams whose frames
// it accepted), then the one idle longest. Only a source above its share
// counts against its streams: a member with two transfers at once, or a
// few members behind one address, are not ranked below a flood of one
// stalled stream from each of many addresses. Idle is counted from the
// last byte received, not from the start of a frame, so that a flood of
// new streams redialled faster than a slow frame arrives displaces its
// own older ones first, and a transfer in progress after them.
func evictionOrder(a, b *connState, as, bs standing) bool {
	if as.crowding != bs.crowding {
		return as.crowding > bs.crowding
	}
	if as.known != bs.known {
		return !as.known
	}
	if af, bf := a.framed.Load(), b.framed.Load(); af != bf {
		return !af
	}
	return a.idleSince.Load() < b.idleSince.Load()
}

// SetKnownSource marks ip as the address of a known peer (known true),
// whose streams are evicted after those of every other source of the same
// crowding (evictionOrder), or takes the mark away (false). The TCP
// handshake proves a stream's source address, so a flood cannot claim a
// known peer's address without holding it. The caller keeps the set
// bounded (the agent marks the addresses of its live members); an
// IPv4-mapped IPv6 address is the IPv4 address, and the zero Addr is
// ignored. Safe for concurrent use; it takes the listener's lock briefly.
func (l *StreamListener) SetKnownSource(ip netip.Addr, known bool) {
	if !ip.IsValid() {
		return
	}
	ip = ip.Unmap()
	l.mu.Lock()
	defer l.mu.Unlock()
	if known {
		l.known[ip] = struct{}{}
	} else {
		delete(l.known, ip)
	}
}

// IsKnownSource reports whether ip is marked with SetKnownSource.
func (l *StreamListener) IsKnownSource(ip netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.known[ip.Unmap()]
	return ok
}

// evictWaiting closes the served connection that match accepts, that is
// waiting on its peer and that comes first in evictionOrder; false when
// there is none. Its handler then returns and frees its slot and its
// source's count.
func (l *StreamListener) evictWaiting(match func(*connState) bool) bool {
	l.mu.Lock()
	var victim net.Conn
	var skip map[*connState]bool // chosen, then found handling a frame
	for victim == nil {
		var vst *connState
		var vs standing
		for c, st := range l.conns {
			if !match(st) || skip[st] || st.claim.Load() != claimNone || st.idleSince.Load() == 0 {
				continue
			}
			if s := l.standing(st.src); victim == nil || evictionOrder(st, vst, s, vs) {
				victim, vst, vs = c, st, s
			}
		}
		if victim == nil {
			break
		}
		// A stream whose handler has not read yet but whose whole first
		// frame waits in the kernel is not waiting on its peer: its
		// handler is behind. When one source's streams are admitted
		// faster than their handlers run (a flood of streams from a
		// member's own IP address, each sending a bare length prefix),
		// every stream of that source is unread and the member's is the
		// oldest about as often as not: it would be reset with its
		// message in the buffer (user46 M2). Skipped, with a wrapped
		// stream (Wrap: the kernel holds the wrapper's bytes) excepted;
		// one that sends whole frames of junk is read and ended by its
		// handler. One kernel look per stream chosen, not per stream.
		if !vst.framed.Load() && !vst.began.Load() && l.cfg.Wrap == nil && firstFrameWaiting(victim, l.cfg.MaxFrame) {
			if skip == nil {
				skip = make(map[*connState]bool)
			}
			skip[vst], victim = true, nil
			l.spared.Add(1)
			continue
		}
		// ReadFrame claims a whole frame without the lock: the frame
		// completed since the scan when this swap fails; look again
		// without this stream.
		if !vst.claim.CompareAndSwap(claimNone, claimEvicted) {
			if skip == nil {
				skip = make(map[*connState]bool)
			}
			skip[vst], victim = true, nil
		}
	}
	l.mu.Unlock()
	if victim == nil {
		return false
	}
	l.evicted.Add(1)
	_ = victim.Close()
	return true
}

// crowding is how many connections src holds when that is more than two
// and more than a quarter of MaxConnsPerSource, else 0 (l.mu held): a
// member holds one or two streams at once (a reliable message beside a
// view or a ping), and a flood from a few addresses many more.
func (l *StreamListener) crowding(src netip.Addr) int {
	if n := l.sources[src]; n > max(2, l.cfg.MaxConnsPerSource/4) {
		return n
	}
	return 0
}

// sourceOf returns the IP address an accepted connection comes from (the
// zero Addr when it is not TCP, as a test's listener may give).
func sourceOf(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// takeSource counts a new connection from src, unless MaxConnsPerSource
// are served from it already.
func (l *StreamListener) takeSource(src netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sources[src] >= l.cfg.MaxConnsPerSource {
		return false
	}
	l.sources[src]++
	return true
}

// releaseSource uncounts a connection from src.
func (l *StreamListener) releaseSource(src netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sources[src]--; l.sources[src] <= 0 {
		delete(l.sources, src)
	}
	select {
	case l.freed <- struct{}{}:
	default:
	}
}
