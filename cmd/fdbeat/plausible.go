package main

import (
	"math"
	"net"
	"time"
)

// Bounds of a confirming heartbeat's timing (see plausibleGap).
const (
	// minJumpStep is the least send interval, per sequence step, of two
	// heartbeats that confirm a jump: two datagrams sent back to back
	// confirm nothing. A sender faster than one heartbeat a millisecond
	// cannot confirm a jump in plain mode.
	minJumpStep = time.Millisecond
	// jumpSlack is the delay variation allowed between the two: the
	// arrival gap may exceed twice the send gap by this much (a loaded
	// receiver, a queue on the path).
	jumpSlack = time.Second
	// pendingSlots is how many unconfirmed jumps one sender keeps, one per
	// source address, the oldest replaced first: a forger sending from its
	// own address cannot push out a genuine restart waiting for its second
	// heartbeat.
	pendingSlots = 4
)

// jump is a heartbeat rejected for jumping too far, kept until a second
// heartbeat from the same source address confirms it.
type jump struct {
	inc, seq uint64
	sent     time.Duration // its send instant (sender's clock)
	at       time.Duration // its arrival (monitor clock)
	from     string        // its source address
}

// aheadOfClock reports whether p's incarnation lies beyond the receiver's
// wall clock (now on the monitor clock) plus MaxIncarnationAhead, and if so
// counts and logs it. fdbeat send's incarnation is its start time in Unix
// ns, so such an incarnation is forged, corrupt, or from a sender whose
// clock is far ahead; accepted, it would make every later heartbeat of the
// name stale until the receiver's clock passed it (2^64−1: for ever). It is
// refused outright, with no confirmation possible, for known and new
// senders alike. Called with r.eval held.
func (r *receiver) aheadOfClock(p packet, peer string, now time.Duration) bool {
	wallNow := r.wall + now
	limit := uint64(max(wallNow, 0)) + uint64(r.cfg.MaxIncarnationAhead)
	if p.Incarnation <= limit {
		return false
	}
	r.count(&r.stats.AheadOfClock)
	ahead := "more than 292 years"
	if d := p.Incarnation - uint64(max(wallNow, 0)); d <= math.MaxInt64 {
		ahead = time.Duration(d).String()
	}
	r.warner().Warn(now, "heartbeat refused: its incarnation is ahead of this receiver's clock by more than --max-incarnation-ahead (fdbeat send's incarnation is its start time in Unix ns): forged or corrupt, or the sender's clock is ahead (synchronise the clocks)",
		"peer", peer, "incarnation", p.Incarnation, "ahead", ahead, "max_incarnation_ahead", r.cfg.MaxIncarnationAhead)
	return true
}

// plausible reports whether heartbeat p of the known sender s, from source
// address from, may reach the monitors. A heartbeat that moves the
// incarnation forward by more than MaxIncarnationJump, or the sequence
// number of the current incarnation by more than MaxSeqJump, is rejected
// and remembered. A later heartbeat confirms the jump and is accepted when
// it comes from the same source address, carries the same incarnation and
// a sequence number at most MaxSeqJump above the remembered one, and
// arrives at a plausible interval after it (plausibleGap). A genuine
// restart or a long loss costs one heartbeat; forged datagrams from another
// address, or sent back to back, cost nothing, since the monitors would
// otherwise treat every later genuine heartbeat as stale. A plausible
// heartbeat clears the remembered jumps (see docs/algorithms.md, “fdbeat:
// authenticated heartbeats and plausibility bounds”, and docs/live.md for
// what this cannot stop). Called with r.eval held.
func (r *receiver) plausible(s *streamID, p packet, peer string, from net.Addr, now time.Duration) bool {
	var far bool
	switch {
	case p.Incarnation > s.inc:
		far = p.Incarnation-s.inc > r.cfg.MaxIncarnationJump
	case p.Incarnation == s.inc && p.Seq > s.seq:
		far = p.Seq-s.seq > r.cfg.MaxSeqJump
	}
	if !far {
		s.pending = nil
		return true
	}
	src := from.String()
	slot := -1
	for i, j := range s.pending {
		if j.from == src {
			slot = i
			break
		}
	}
	if slot >= 0 {
		j := s.pending[slot]
		if j.inc == p.Incarnation && p.Seq > j.seq && p.Seq-j.seq <= r.cfg.MaxSeqJump {
			if plausibleGap(p.Seq-j.seq, p.Sent-j.sent, now-j.at) {
				s.pending = nil
				r.count(&r.stats.Confirmed)
				r.log.Info("jump confirmed by a second heartbeat", "peer", peer, "incarnation", p.Incarnation, "seq", p.Seq,
					"was_incarnation", s.inc, "was_seq", s.seq, "from", src)
				return true
			}
			r.count(&r.stats.BadInterval)
		}
	} else {
		for _, j := range s.pending {
			if j.inc == p.Incarnation && p.Seq > j.seq && p.Seq-j.seq <= r.cfg.MaxSeqJump {
				r.count(&r.stats.OtherSource)
				break
			}
		}
	}
	nj := jump{inc: p.Incarnation, seq: p.Seq, sent: p.Sent, at: now, from: src}
	switch {
	case slot >= 0:
		s.pending[slot] = nj
	case len(s.pending) < pendingSlots:
		s.pending = append(s.pending, nj)
	default:
		oldest := 0
		for i, j := range s.pending {
			if j.at < s.pending[oldest].at {
				oldest = i
			}
		}
		s.pending[oldest] = nj
	}
	r.count(&r.stats.Implausible)
	r.warner().Warn(now, "heartbeat rejected: incarnation or sequence number jumps beyond the limit; a second heartbeat from the same address must confirm it",
		"peer", peer, "incarnation", p.Incarnation, "seq", p.Seq, "current_incarnation", s.inc, "current_seq", s.seq,
		"from", src, "max_seq_jump", r.cfg.MaxSeqJump, "max_incarnation_jump", r.cfg.MaxIncarnationJump)
	return false
}

// plausibleGap reports whether a heartbeat k sequence steps after a
// remembered jump, sent d later on the sender's clock and arriving g later
// on the receiver's, is a plausible successor: the send gap is at least
// minJumpStep per step, and the arrival gap agrees with it, from half of it
// to twice it plus jumpSlack. A genuine sender's two heartbeats agree
// whatever its rate (the receiver need not know it, so a restart at a new
// rate is confirmed as fast); two forged datagrams sent back to back do
// not, whatever they claim.
func plausibleGap(k uint64, d, g time.Duration) bool {
	if d <= 0 || k > uint64(d/minJumpStep) {
		return false
	}
	return g >= d/2 && (g <= d || g-d <= d+jumpSlack)
}

// revertAfter is the least silence of a sender's current incarnation after
// which a heartbeat of an older one makes recv follow the older one again
// (see revert).
const revertAfter = 5 * time.Second

// revert reports whether heartbeat p, of an incarnation older than the
// known sender s's, is to be followed: the current incarnation has been
// silent for longer than revertAfter and than three of its mean
// inter-arrival times, while the older one still sends. A genuine restart
// ends the older incarnation (only heartbeats reordered by the network
// follow, within milliseconds), so this is a newer incarnation that was
// forged, accepted (from the sender's address at a plausible interval: a
// forger on the path, or spoofing) and then left silent, or a newer process
// that died while the older runs on. s is then forgotten (counted as
// reverted), and the heartbeat starts the sender afresh. Plain mode only:
// with keys no incarnation is forged, and a replayed capture of an older
// incarnation must not bring a crashed sender back. Called with r.eval
// held.
func (r *receiver) revert(s *streamID, p packet, peer string, now time.Duration) bool {
	silent := now - s.last
	if silent <= revertAfter {
		return false
	}
	if s.incBeats >= 2 && silent <= 3*((s.last-s.incFirst)/time.Duration(s.incBeats-1)) {
		return false
	}
	r.forget(peer, s)
	r.count(&r.stats.Reverted)
	r.warner().Warn(now, "sender followed again in an older incarnation: the newer one fell silent while the older kept sending (the newer was forged, or died)",
		"peer", peer, "incarnation", p.Incarnation, "newer", s.inc, "newer_silent_for", silent)
	return true
}
