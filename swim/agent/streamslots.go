package agent

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
)

// The agent's dialled streams come from pools of slots, one per use, so
// that a peer that holds the streams of one use open cannot take the
// slots of another (issue 27, F4, user43 F1 and session 23): stream
// pings (pings, streamOutMax, at most streamOutPerAddr to one address);
// views (views, the same bounds: a view larger than a datagram, the
// request that ends an exchange's, read back by readAnswer); reliable
// messages (reliable, the same bounds: SendReliable); and joins resent
// to seeds (streamjoinslots.go: streamJoinMax, one per seed). A pool's
// per-address bound is per ip:port (slotKey).

// streamOutPerAddr bounds the streams of one pool dialled at once to one
// address (ip:port), a quarter of streamOutMax as the listener's default
// MaxStreamConnsPerSource is a quarter of its MaxStreamConns. A member
// has at most a few in flight to one member at once (its stream ping,
// the view of an exchange), and a member that accepts streams and never
// answers them holds at most this many of a pool (issue 27, F4;
// docs/experiments.md, “SWIM: a silent seed and the dialling slots
// (F4)”). Beyond it a stream ping is skipped (Stats.StreamPingsSkipped),
// a view goes as datagrams, both counted in Stats.StreamsAddrBusy, and
// SendReliable waits for the address's turn within its context (failing
// with ErrReliableBusy and the context's error when it ends before the
// message's stream is connected). Many
// members share one IP address (a host's tenants, a test's group on
// loopback), so the limit
// is per ip:port: a host with many ports can take a pool's every slot
// with that many members' streams, but only that pool's.
const streamOutPerAddr = streamOutMax / 4

// slotPool is a pool of dialled streams: at most cap(slots) open at
// once, at most perAddr to one address (slotKey).
type slotPool struct {
	mu    sync.Mutex
	slots chan struct{}
	to    map[netip.AddrPort]int
	// held counts, per address, the reservations that hold one of the
	// pool's slots (the streams in flight); the others wait for a slot.
	held    map[netip.AddrPort]int
	perAddr int
	// turn holds, for an address at its bound with takers waiting
	// (takeWithin), the channel closed when one of its slots is given
	// back: at most one per address waited for.
	turn map[netip.AddrPort]chan struct{}
	// addrBusy counts the takes refused for the address's bound, nil for
	// none.
	addrBusy *atomic.Uint64
}

func newSlotPool(n, perAddr int, addrBusy *atomic.Uint64) *slotPool {
	return &slotPool{slots: make(chan struct{}, n), to: make(map[netip.AddrPort]int), held: make(map[netip.AddrPort]int),
		turn: make(map[netip.AddrPort]chan struct{}), perAddr: perAddr, addrBusy: addrBusy}
}

// take takes a slot for a stream to to without waiting: false when to
// holds perAddr of the pool's slots or every slot is taken.
func (p *slotPool) take(to netip.AddrPort) bool {
	to = slotKey(to)
	if !p.reserve(to) {
		return false
	}
	select {
	case p.slots <- struct{}{}:
		p.hold(to)
		return true
	default:
		p.forget(to)
		return false
	}
}

// takeWithin takes a slot for a stream to to, waiting until ctx is done
// first for to's turn (while to holds perAddr of the pool's slots),
// then for a slot. A taker waiting for its address's turn holds none of
// the pool's slots, so the others' streams are not held up by it.
// waitedTurn says that the taker found to at its bound with perAddr
// streams to to in flight (each holding a slot), at one look or more,
// and so waited for to's turn, whether it then had the turn or its
// context ended first (SendReliable's ErrReliableBusy); while some of
// to's takers wait for a slot themselves, the pool is what is busy, and
// that wait does not count. ok is false only when ctx ended.
func (p *slotPool) takeWithin(ctx context.Context, to netip.AddrPort) (ok, waitedTurn bool) {
	to = slotKey(to)
	ok, waitedTurn = p.reserveWithin(ctx, to)
	if !ok {
		return false, waitedTurn
	}
	if ctx.Err() != nil {
		p.forget(to) // ended before the wait: no slot, whatever the select would pick
		return false, waitedTurn
	}
	select {
	case p.slots <- struct{}{}:
		p.hold(to)
		return true, waitedTurn
	case <-ctx.Done():
		p.forget(to)
		return false, waitedTurn
	}
}

// reserveWithin is reserve, waiting for to's turn until ctx is done:
// false when ctx ended while it waited (or had ended with to at its
// bound), with waitedTurn saying whether to's perAddr streams all held
// slots at one of its looks (takeWithin). Each forget of to wakes its
// waiters, who try again, and so does the hold that brings to's streams
// in flight to perAddr.
func (p *slotPool) reserveWithin(ctx context.Context, to netip.AddrPort) (ok, waitedTurn bool) {
	for waited := false; ; waited = true {
		p.mu.Lock()
		if waited && ctx.Err() != nil {
			p.mu.Unlock()
			return false, waitedTurn
		}
		if p.to[to] < p.perAddr {
			p.to[to]++
			p.mu.Unlock()
			return true, waitedTurn
		}
		if p.held[to] >= p.perAddr {
			waitedTurn = true
		}
		if ctx.Err() != nil {
			p.mu.Unlock()
			return false, waitedTurn
		}
		turn := p.turn[to]
		if turn == nil {
			turn = make(chan struct{})
			p.turn[to] = turn
		}
		p.mu.Unlock()
		select {
		case <-turn:
		case <-ctx.Done():
		}
	}
}

// reserve counts a stream to to (a slotKey), before its slot is taken,
// so that to's takers do not pass its bound while waiting: false when to
// holds perAddr (counted in addrBusy).
func (p *slotPool) reserve(to netip.AddrPort) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.to[to] >= p.perAddr {
		if p.addrBusy != nil {
			p.addrBusy.Add(1)
		}
		return false
	}
	p.to[to]++
	return true
}

// hold counts a reservation of to (a slotKey) that now holds a slot; when
// that brings to's streams in flight to its bound, to's waiters look again
// (reserveWithin's inFlight).
func (p *slotPool) hold(to netip.AddrPort) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[to]++; p.held[to] >= p.perAddr {
		p.wake(to)
	}
}

// release gives back a slot take(to) took.
func (p *slotPool) release(to netip.AddrPort) {
	to = slotKey(to)
	p.mu.Lock()
	if p.held[to]--; p.held[to] <= 0 {
		delete(p.held, to)
	}
	p.mu.Unlock()
	p.forget(to)
	<-p.slots
}

// forget lowers to's count (to is a slotKey).
func (p *slotPool) forget(to netip.AddrPort) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.to[to]--; p.to[to] <= 0 {
		delete(p.to, to)
	}
	p.wake(to)
}

// wake wakes to's waiters for its turn; p.mu held.
func (p *slotPool) wake(to netip.AddrPort) {
	if turn := p.turn[to]; turn != nil {
		close(turn)
		delete(p.turn, to)
	}
}

// open returns the pool's streams open now.
func (p *slotPool) open() int { return len(p.slots) }

// slotKey is the address whose slots a pool counts: an IPv4 address
// written as IPv4-mapped IPv6 (::ffff:a.b.c.d) is the same host and port,
// and counts as one.
func slotKey(to netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
}
