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
//   - new for its sender (the authenticated From.ID): above the highest
//     timestamp seen from that sender, or within Window below it and not
//     seen before (an IPsec-style sliding window, RFC 4303 §3.4.3, over
//     timestamps instead of sequence numbers, so that a sender's restart
//     needs no handshake: its clock has moved on).
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
	// Window is the reordering accepted below a sender's highest
	// timestamp (default 2 s): a later-sealed packet may overtake an
	// earlier one by up to Window and both are accepted once.
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

// senderWindow is one sender's sliding window: the highest timestamp, the
// most recent ones below it, and a floor below which nothing is accepted
// (the largest timestamp forgotten from the ring).
type senderWindow struct {
	high  int64
	floor int64
	ring  [replayRemembered]int64
	n     int
	pos   int
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
	skew := int64(g.cfg.MaxSkew)
	switch {
	case ts < g.start:
		return fmt.Errorf("%w: sealed %v before this member started", ErrReplay, time.Duration(g.start-ts))
	case ts < now-skew || ts > now+skew:
		return fmt.Errorf("%w: timestamp %v away from this member's clock, more than MaxSkew %v",
			ErrReplay, time.Duration(ts-now), g.cfg.MaxSkew)
	}
	w := g.senders[sender]
	if w == nil {
		if g.cfg.MaxSenders > 0 && len(g.senders) >= g.cfg.MaxSenders {
			g.evict()
		}
		w = &senderWindow{high: ts, used: now}
		g.senders[sender] = w
		return nil
	}
	if ts > w.high {
		w.remember(w.high)
		w.high, w.used = ts, now
		return nil
	}
	if ts <= w.floor || ts <= w.high-int64(g.cfg.Window) || ts == w.high || w.seen(ts) {
		return fmt.Errorf("%w: from %q, %v below its newest", ErrReplay, sender, time.Duration(w.high-ts))
	}
	w.remember(ts)
	w.used = now
	return nil
}

func (w *senderWindow) seen(ts int64) bool {
	for i := range w.n {
		if w.ring[i] == ts {
			return true
		}
	}
	return false
}

// remember records ts; the entry it overwrites raises the floor.
func (w *senderWindow) remember(ts int64) {
	if w.n == len(w.ring) {
		w.floor = max(w.floor, w.ring[w.pos])
	} else {
		w.n++
	}
	w.ring[w.pos] = ts
	w.pos = (w.pos + 1) % len(w.ring)
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
