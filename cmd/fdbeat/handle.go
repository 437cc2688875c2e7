package main

import (
	"container/list"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/trace"
)

// streamID names a peer's current incarnation in the trace: the peer for its
// first incarnation seen, "peer#2", "peer#3", ... after restarts, so that
// replay treats each incarnation as its own stream.
type streamID struct {
	inc uint64
	n   int
	id  string
	ids []string // every trace id this peer was given (at most maxPeerIDs), freed when it is evicted
	seq uint64   // largest sequence number accepted in inc
	// recorded: bit i set = sequence number seq−i of inc was recorded
	// (i < recordWindow); see firstCopy.
	recorded uint64
	last     time.Duration // monitor clock of the last accepted heartbeat
	pending  []jump        // unconfirmed jumps, at most pendingSlots; see plausible
	peer     string        // the sender's key in receiver.streams
	beats    uint64        // heartbeats recorded for the first time, every incarnation
	// incBeats and incFirst: those of the current incarnation, and the
	// arrival of its first (see revert).
	incBeats uint64
	incFirst time.Duration
	// probation: the sender's element in receiver.probation while it has
	// sent fewer than probationBeats heartbeats; nil after.
	probation *list.Element
	// staleWarned: 1 + the stale incarnation last warned about; 0: none.
	staleWarned uint64
}

// recordWindow is how many sequence numbers below the largest one recv
// remembers having recorded: a heartbeat arriving later than 64 newer ones
// (6.4 s at 100 ms) is not recorded. The window is the anti-replay window of
// IPsec (RFC 4303, section 3.4.3).
const recordWindow = 64

// firstCopy reports whether sequence number seq of the stream's incarnation
// is recorded for the first time, and marks it recorded: a heartbeat
// replayed by someone who captured it (its MAC verifies) or duplicated by
// the network is recorded once, whatever the number of copies.
func (s *streamID) firstCopy(seq uint64) bool {
	switch {
	case s.recorded == 0: // the incarnation's first heartbeat
		s.seq, s.recorded = seq, 1
		return true
	case seq > s.seq:
		if d := seq - s.seq; d < recordWindow {
			s.recorded = s.recorded<<d | 1
		} else {
			s.recorded = 1
		}
		s.seq = seq
		return true
	}
	d := s.seq - seq
	if d >= recordWindow || s.recorded&(1<<d) != 0 {
		return false
	}
	s.recorded |= 1 << d
	return true
}

// handle processes one datagram that arrived at now (monitor clock). Called
// with r.eval held, so arrivals reach the monitors in clock order: the
// monotonic clock is read under the lock, and no arrival is earlier than the
// one before (no backward sample can come from this path).
func (r *receiver) handle(b []byte, from net.Addr, now time.Duration) {
	r.count(&r.stats.Packets)
	if r.cfg.onPacket != nil {
		r.cfg.onPacket()
	}
	p, ok := r.authentic(b, from, now)
	if !ok {
		return
	}
	peer := p.Name
	if peer == "" {
		peer = from.String()
	}
	if r.aheadOfClock(p, peer, now) || !r.admit(p, peer, from, now) || !r.feed(p, peer, now) {
		return
	}
	r.recordBeat(p, peer, now)
}

// authentic decodes a datagram and, with keys set, checks that it is
// signed under one of them; it counts and logs what it refuses.
func (r *receiver) authentic(b []byte, from net.Addr, now time.Duration) (packet, bool) {
	p, err := decodePacket(b)
	if err != nil {
		r.count(&r.stats.Bad)
		r.log.Debug("bad packet", "from", from.String(), "err", err)
		return p, false
	}
	kr := r.cfg.Keys
	switch {
	case kr == nil:
	case !p.Signed:
		r.count(&r.stats.Unauthenticated)
		r.warner().Warn(now, "plain heartbeat refused: keys are set, heartbeats must be authenticated", "from", from.String(), "name", p.Name)
		return p, false
	case !verifyPacket(b, kr.Keys()):
		r.count(&r.stats.AuthFailed)
		r.warner().Warn(now, "heartbeat failed authentication with every key", "from", from.String(), "name", p.Name)
		return p, false
	}
	return p, true
}

// admit says whether a heartbeat of peer is followed: a tracked sender's
// must be plausible (or revert it to an older incarnation, which forgets
// it), and a new sender needs room under MaxSenders.
func (r *receiver) admit(p packet, peer string, from net.Addr, now time.Duration) bool {
	s := r.streams[peer]
	if s != nil && r.cfg.Keys == nil && p.Incarnation < s.inc && r.revert(s, p, peer, now) {
		return true // forgotten: taken as a new sender, in its incarnation
	}
	if s != nil {
		return r.plausible(s, p, peer, from, now)
	}
	if !r.makeRoom(now) {
		r.count(&r.stats.Refused)
		r.warner().Warn(now, "heartbeat from a new sender ignored: --max-senders reached and every tracked sender is past probation",
			"peer", peer, "max_senders", r.cfg.MaxSenders, "probation_beats", probationBeats)
		return false
	}
	return true
}

// feed hands the heartbeat to every monitor. It says false when the
// monitors refused it: from an older incarnation (stale), or from a new
// sender beyond MaxSenders.
func (r *receiver) feed(p packet, peer string, now time.Duration) bool {
	beat := monitor.Beat{Incarnation: p.Incarnation, Seq: p.Seq, HasSeq: true, Sent: p.Sent, HasSent: true}
	stale := false
	for _, nm := range r.mons {
		if err := nm.m.HeartbeatAt(peer, beat, now); err != nil {
			if errors.Is(err, monitor.ErrStaleIncarnation) {
				stale = true
				continue
			}
			if errors.Is(err, monitor.ErrTooManyPeers) {
				r.count(&r.stats.Refused)
				r.warner().Warn(now, "heartbeat from a new sender ignored: --max-senders reached", "peer", peer, "max_senders", r.cfg.MaxSenders)
				return false
			}
			r.log.Error("monitor refused a heartbeat", "detector", nm.name, "peer", peer, "err", err)
		}
	}
	if !stale {
		return true
	}
	r.count(&r.stats.Stale)
	// A sender restarted with a smaller --incarnation (or a wall clock
	// stepped back) is otherwise ignored for good with no word.
	if s := r.streams[peer]; s != nil && s.staleWarned != p.Incarnation+1 {
		s.staleWarned = p.Incarnation + 1
		r.warner().Warn(now, "heartbeats from an older incarnation ignored: the sender restarted with a smaller --incarnation or a clock stepped back, or the current incarnation was forged (docs/live.md); the sender is followed again once the current incarnation has been silent for 5 s",
			"peer", peer, "incarnation", p.Incarnation, "current", s.inc, "current_ahead_of_clock", time.Duration(int64(s.inc)-int64(r.wall+now)))
	}
	return false
}

// recordBeat notes that peer was heard and writes the heartbeat to the
// trace, unless it is a copy of one already recorded or the sender has no
// trace id left.
func (r *receiver) recordBeat(p packet, peer string, now time.Duration) {
	id := r.stream(peer, p.Incarnation)
	s := r.streams[peer]
	if !s.firstCopy(p.Seq) {
		// A replayed capture (it verifies under the key) or a copy made
		// by the network: the monitors ignored it, the trace must not
		// grow with it, and it must not keep a silent sender from
		// eviction.
		r.count(&r.stats.Duplicates)
		r.warner().Warn(now, "heartbeat not recorded: a copy of a heartbeat already recorded (replayed or duplicated) or older than the last 64",
			"peer", peer, "incarnation", p.Incarnation, "seq", p.Seq, "current_seq", s.seq)
		return
	}
	r.heard(s, now)
	if id == "" {
		// The sender used up its trace ids (maxPeerIDs): the monitors have the
		// heartbeat, the trace cannot name its stream without merging two
		// incarnations, so it is counted and left out, not mixed in.
		r.count(&r.stats.NoTraceID)
		r.warner().Warn(now, "heartbeat not recorded: the sender restarted more than 16 times while tracked (trace sender ids used up)",
			"peer", peer, "incarnation", p.Incarnation, "ids", len(r.used))
		return
	}
	rec := trace.Record{Sender: id, Seq: p.Seq, HasSeq: true, Sent: p.Sent, HasSent: true,
		Arrival: r.wall + now, HasArrival: true}
	if err := r.record(rec); err != nil {
		// A recorder that cannot record stops (the read loop returns it)
		// rather than go on losing heartbeats with a log line each.
		r.recErr = err
	}
}

// stream returns the trace sender id of peer's incarnation inc, a new one
// for a new peer or a larger incarnation.
func (r *receiver) stream(peer string, inc uint64) string {
	s := r.streams[peer]
	switch {
	case s == nil:
		s = &streamID{inc: inc, n: 1, id: r.freeID(peer), peer: peer}
		s.ids = []string{s.id}
		r.streams[peer] = s
	case inc > s.inc:
		s.inc, s.n, s.seq, s.recorded, s.incBeats = inc, s.n+1, 0, 0, 0
		s.id = ""
		if len(s.ids) < maxPeerIDs {
			s.id = r.freeID(peer + "#" + strconv.Itoa(s.n))
			s.ids = append(s.ids, s.id)
		}
		r.log.Info("sender restarted", "peer", peer, "incarnation", inc, "trace_sender", s.id)
	}
	return s.id
}

// maxPeerIDs bounds the trace sender ids one tracked sender is given, one
// per incarnation: a sender that restarts more often while tracked is
// still monitored, but its further incarnations are counted and not
// recorded. An id is not reused while its sender is tracked (a reused id
// would merge two incarnations' records in the trace), and all of a
// sender's ids are freed when it is evicted, so at most maxPeerIDs ×
// --max-senders ids are held, and a forger stepping one name through
// incarnations blinds the trace to that name only.
const maxPeerIDs = 16

// freeID returns id, or id+"#k" for the smallest free k ≥ 2, whichever is
// not yet a trace sender id, and marks it used: a sender really named "a#2"
// and the second incarnation of "a" must not share a stream in the trace
// (replay would merge them while the live monitors keep them apart).
func (r *receiver) freeID(id string) string {
	if r.used == nil {
		r.used = map[string]bool{}
	}
	for k, base := 2, id; r.used[id]; k++ {
		id = base + "#" + strconv.Itoa(k)
	}
	r.used[id] = true
	return id
}
