package main

import "time"

// jump is a heartbeat rejected for jumping too far, kept until a second
// heartbeat confirms it.
type jump struct{ inc, seq uint64 }

// plausible reports whether heartbeat p of the known sender s may reach the
// monitors. A heartbeat that moves the incarnation forward by more than
// MaxIncarnationJump, or the sequence number of the current incarnation by
// more than MaxSeqJump, is rejected and remembered; a later heartbeat of the
// same incarnation whose sequence number lies above the remembered one by at
// most MaxSeqJump confirms the jump and is accepted. A genuine restart or
// a long loss costs one heartbeat; one forged datagram (incarnation 2^64−1,
// or sequence number 10^12) costs nothing, since the monitors would
// otherwise treat every later genuine heartbeat as stale. A plausible
// heartbeat clears the remembered jump (see docs/algorithms.md, “fdbeat:
// authenticated heartbeats and plausibility bounds”). Called with r.eval
// held.
func (r *receiver) plausible(s *streamID, p packet, peer string, now time.Duration) bool {
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
	if j := s.pending; j != nil && j.inc == p.Incarnation && p.Seq > j.seq && p.Seq-j.seq <= r.cfg.MaxSeqJump {
		s.pending = nil
		r.count(&r.stats.Confirmed)
		r.log.Info("jump confirmed by a second heartbeat", "peer", peer, "incarnation", p.Incarnation, "seq", p.Seq,
			"was_incarnation", s.inc, "was_seq", s.seq)
		return true
	}
	s.pending = &jump{p.Incarnation, p.Seq}
	r.count(&r.stats.Implausible)
	r.warner().Warn(now, "heartbeat rejected: incarnation or sequence number jumps beyond the limit; a second heartbeat must confirm it",
		"peer", peer, "incarnation", p.Incarnation, "seq", p.Seq, "current_incarnation", s.inc, "current_seq", s.seq,
		"max_seq_jump", r.cfg.MaxSeqJump, "max_incarnation_jump", r.cfg.MaxIncarnationJump)
	return false
}

// evict forgets the senders silent for longer than EvictAfter: their
// monitors' state and stream; a later heartbeat starts them afresh. Their
// trace ids are freed too (so that forged names cannot grow the receiver's
// memory), so a returning sender continues under its old id.
func (r *receiver) evict() {
	if r.cfg.EvictAfter <= 0 {
		return
	}
	r.eval.Lock()
	defer r.eval.Unlock()
	now := r.clock.Now()
	var n uint64
	for peer, s := range r.streams {
		if now-s.last <= r.cfg.EvictAfter {
			continue
		}
		for _, nm := range r.mons {
			nm.m.Remove(peer)
		}
		delete(r.streams, peer)
		for _, id := range s.ids {
			delete(r.used, id)
		}
		n++
	}
	if n > 0 {
		r.mu.Lock()
		r.stats.Evicted += n
		total := r.stats.Evicted
		r.mu.Unlock()
		r.log.Info("silent senders evicted", "count", n, "silent_for", r.cfg.EvictAfter, "evicted_total", total, "senders", len(r.streams))
	}
}
