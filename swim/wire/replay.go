package wire

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// Replay protection of sealed packets (see docs/algorithms.md, “SWIM:
// replay protection for sealed packets”). Inside the authenticated
// encryption every sealed payload starts with the sealer's timestamp, 8
// bytes big-endian of Unix nanoseconds, strictly increasing per Codec. A
// decoding Codec accepts a sealed packet only when its timestamp is
//
//   - not before the receiving Codec was created (a packet captured before
//     this member started, in this life or an earlier one, is refused),
//   - within MaxSkew of the receiver's clock either way, and
//   - new for its sender (the claimed From.ID; for an ack bound to this
//     member without it, the member its ping with that number went
//     to, Codec.DecodeDatagram): not among the last
//     timestamps accepted from that sender, and above the floor, the
//     largest timestamp forgotten from them. Like IPsec's anti-replay
//     window (RFC 4303 §3.4.3), over timestamps instead of sequence
//     numbers, so that a sender's restart needs no handshake (its clock
//     has moved on); unlike it, the window does not slide up to the
//     highest timestamp seen. Every holder of the group key can seal a
//     packet under any sender ID with any timestamp within MaxSkew, and a
//     window anchored at the highest let one packet stamped 30 s ahead
//     under a victim's ID make the victim's own packets look replayed for
//     30 s. Here the remembered set forgets its smallest timestamp first,
//     and the floor rises at most to the receiver's clock less Window, so
//     forged future timestamps never lift it over the genuine packets of
//     a sender whose clock agrees with the receiver's within Window.
//
// A refused packet returns an error wrapping ErrReplay; the caller drops it
// and sends nothing in answer. Plain packets carry no timestamp and have no
// such protection (anyone can forge them anyway).

// ErrReplay is wrapped by the error for a sealed packet that fails the
// replay check.
var ErrReplay = errors.New("wire: replayed or stale packet")

// Defaults of ReplayConfig.
const (
	DefaultReplayMaxSkew    = 30 * time.Second
	DefaultReplayWindow     = 2 * time.Second
	DefaultReplayMaxSenders = 16384
	// replayRemembered is how many timestamps below the highest are
	// remembered per sender to refuse duplicates inside the window.
	replayRemembered = 64
	// timestampSize is the sealed timestamp's size in bytes.
	timestampSize = 8
)

// ReplayConfig configures the replay check of sealed packets. The zero
// value of every field means its default.
type ReplayConfig struct {
	// MaxSkew bounds how far a packet's timestamp may be from the
	// receiver's clock, either way (default 30 s): the clocks of the
	// members must agree within it (NTP), and a packet captured longer ago
	// is refused.
	MaxSkew time.Duration
	// Window is how far behind the receiver's clock a sender's floor
	// stays (default 2 s): forgetting a timestamp raises the floor at most
	// to the clock less Window, so that forged future timestamps cannot
	// lift it over the genuine packets of a sender whose clock and delay
	// are within Window of the receiver's. The price: a genuine packet
	// forgotten less than Window after it was sealed (more than
	// replayRemembered packets of one sender within Window; within
	// Window plus its lead for a sender whose clock is ahead) can be
	// replayed, any number of times, until the floor passes it.
	Window time.Duration
	// MaxSenders bounds the senders tracked (default 16,384); beyond it the
	// least recently heard is forgotten.
	MaxSenders int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// replayGuard is the receiving side's state; the sealing side's is last.
type replayGuard struct {
	cfg ReplayConfig

	mu sync.Mutex
	// start is the instant of creation, Unix ns, in the frame of the
	// clock's latest reading: nothing sealed earlier is accepted. When the
	// clock steps back (a member booted with its clock ahead, then
	// corrected by NTP) start moves back by the step, so the member does
	// not refuse its peers for the size of the step.
	start   int64
	read    int64 // the clock's latest reading (Unix ns)
	last    int64 // last timestamp sealed
	senders map[swim.ID]*senderWindow
}

// senderWindow is one sender's window: the timestamps accepted most
// recently (at most replayRemembered; when full the smallest is forgotten)
// and a floor, the largest timestamp forgotten, at or below which nothing
// is accepted. Every timestamp accepted and no longer remembered is at or
// below the floor, so nothing is accepted twice.
type senderWindow struct {
	floor int64
	ts    [replayRemembered]int64
	n     int
	used  int64 // receiver clock at the last accepted packet
}

func newReplayGuard(cfg ReplayConfig) (*replayGuard, error) {
	if cfg.MaxSkew == 0 {
		cfg.MaxSkew = DefaultReplayMaxSkew
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultReplayWindow
	}
	if cfg.MaxSenders == 0 {
		cfg.MaxSenders = DefaultReplayMaxSenders
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxSkew < 0 || cfg.Window < 0 || cfg.MaxSenders < 0 {
		return nil, fmt.Errorf("wire: ReplayConfig: MaxSkew %v, Window %v and MaxSenders %d must not be negative",
			cfg.MaxSkew, cfg.Window, cfg.MaxSenders)
	}
	now := cfg.Now().UnixNano()
	return &replayGuard{cfg: cfg, start: now, read: now, senders: map[swim.ID]*senderWindow{}}, nil
}

// clock reads the clock and follows a backward step of it (see start);
// g.mu must be held.
func (g *replayGuard) clock() int64 {
	now := g.cfg.Now().UnixNano()
	if now < g.read {
		g.start -= g.read - now
	}
	g.read = now
	return now
}

// stamp returns the timestamp for the next sealed packet: the clock, or
// one more than the previous stamp when the clock has not moved on (or
// stepped back by less than MaxSkew, so that receivers that accepted the
// earlier stamps keep accepting). A previous stamp more than MaxSkew ahead
// of the clock was refused by every receiver with a right clock; carrying
// it on would silence this member for as long as the clock was ahead (a
// single bad reading a day ahead: a day), so the stamp returns to the
// clock.
func (g *replayGuard) stamp() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock()
	if g.last-now >= int64(g.cfg.MaxSkew) {
		g.last = now
		return now
	}
	g.last = max(now, g.last+1)
	return g.last
}

// check accepts ts from sender once, or returns an error wrapping
// ErrReplay.
func (g *replayGuard) check(sender swim.ID, ts int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock()
	if err := g.inBounds(ts, now); err != nil {
		return err
	}
	w := g.senders[sender]
	if w == nil {
		if g.cfg.MaxSenders > 0 && len(g.senders) >= g.cfg.MaxSenders {
			g.evict()
		}
		w = &senderWindow{}
		g.senders[sender] = w
	}
	switch {
	case ts <= w.floor:
		return fmt.Errorf("%w: from %q, %v at or below its window's floor", ErrReplay, sender, time.Duration(w.floor-ts))
	case w.seen(ts):
		return fmt.Errorf("%w: from %q, timestamp already accepted", ErrReplay, sender)
	}
	w.remember(ts, now-int64(g.cfg.MaxSkew), now-int64(g.cfg.Window), now+int64(g.cfg.Window))
	w.used = now
	return nil
}

// checkAfter accepts ts of a stream's frame that follows one stamped prev
// (Codec.DecodeFrame): above prev, not before this member started, within
// MaxSkew of the clock; the sender's window is neither read nor changed.
func (g *replayGuard) checkAfter(ts, prev int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ts <= prev {
		return fmt.Errorf("%w: a stream's frame stamped %v at or before the frame it follows", ErrReplay, time.Duration(prev-ts))
	}
	return g.inBounds(ts, g.clock())
}

// inBounds refuses ts sealed before this member started or more than
// MaxSkew away from now; g.mu must be held.
func (g *replayGuard) inBounds(ts, now int64) error {
	skew := int64(g.cfg.MaxSkew)
	switch {
	case ts < g.start:
		return fmt.Errorf("%w: sealed %v before this member started", ErrReplay, time.Duration(g.start-ts))
	case ts < now-skew || ts > now+skew:
		return fmt.Errorf("%w: timestamp %v away from this member's clock, more than MaxSkew %v",
			ErrReplay, time.Duration(ts-now), g.cfg.MaxSkew)
	}
	return nil
}

func (w *senderWindow) seen(ts int64) bool {
	for _, t := range w.ts[:w.n] {
		if t == ts {
			return true
		}
	}
	return false
}

// remember records ts. Timestamps older than expired (refused by the skew
// bound anyway) are dropped first. When the set is still full, one is
// forgotten: the smallest of those above ahead (the receiver's clock plus
// Window: stamped by a clock ahead of the receiver's, or forged) if any,
// so that a flood of forged future stamps does not push the sender's
// genuine ones out; else the smallest. It raises the floor, never above
// ceil (the receiver's clock less Window): timestamps above it may be
// forged, and a floor raised to them would refuse the sender's genuine
// packets.
func (w *senderWindow) remember(ts, expired, ceil, ahead int64) {
	if w.n == len(w.ts) {
		k := 0
		for _, t := range w.ts[:w.n] {
			if t >= expired {
				w.ts[k] = t
				k++
			} else {
				w.floor = max(w.floor, t)
			}
		}
		w.n = k
	}
	if w.n == len(w.ts) {
		// first reports whether a is forgotten before b.
		first := func(a, b int64) bool {
			fa, fb := a > ahead, b > ahead
			return fa && !fb || fa == fb && a < b
		}
		i := 0
		for j, t := range w.ts[:w.n] {
			if first(t, w.ts[i]) {
				i = j
			}
		}
		if first(ts, w.ts[i]) { // ts itself goes: accepted, forgotten at once
			w.floor = max(w.floor, min(ts, ceil))
			return
		}
		w.floor = max(w.floor, min(w.ts[i], ceil))
		w.ts[i] = ts
		return
	}
	w.ts[w.n] = ts
	w.n++
}

// evict forgets the sender heard least recently.
func (g *replayGuard) evict() {
	var oldest swim.ID
	var at int64
	first := true
	for id, w := range g.senders {
		if first || w.used < at {
			oldest, at, first = id, w.used, false
		}
	}
	delete(g.senders, oldest)
}
