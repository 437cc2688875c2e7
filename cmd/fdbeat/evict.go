package main

import (
	"container/list"
	"time"
)

// probationBeats is how many heartbeats a new sender sends before it holds
// its place in a full table: until then it is on probation, and a heartbeat
// from a sender not yet tracked, arriving when --max-senders are, makes room
// by forgetting the probationary sender heard from least recently. Forged
// names that send a heartbeat or two each (a flood of 20,000 at a 10,000
// cap) then displace one another instead of locking out a genuine newcomer,
// which keeps its place as long as it is heard from more often than the
// flood cycles through the table (10,000 names at 50,000 a second: every
// 200 ms) and stays for good after probationBeats heartbeats (1 s at 100 ms).
// A forger sending probationBeats heartbeats per name does fill the table;
// only keys stop it (docs/live.md).
const probationBeats = 10

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
		r.forget(peer, s)
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

// forget removes peer: its monitors' state, its stream, its trace ids and
// its place on probation. Called with r.eval held.
func (r *receiver) forget(peer string, s *streamID) {
	for _, nm := range r.mons {
		nm.m.Remove(peer)
	}
	delete(r.streams, peer)
	for _, id := range s.ids {
		delete(r.used, id)
	}
	if s.probation != nil {
		r.probation.Remove(s.probation)
		s.probation = nil
	}
}

// makeRoom reports whether a sender not yet tracked may be: there is room
// under MaxSenders, or a probationary sender was forgotten to make it (and
// counted as displaced). Called with r.eval held.
func (r *receiver) makeRoom(now time.Duration) bool {
	if r.cfg.MaxSenders <= 0 || len(r.streams) < r.cfg.MaxSenders {
		return true
	}
	if r.probation == nil || r.probation.Len() == 0 {
		return false
	}
	s := r.probation.Front().Value.(*streamID)
	r.forget(s.peer, s)
	r.count(&r.stats.Displaced)
	r.warner().Warn(now, "table full (--max-senders): a sender still on probation (few heartbeats) forgotten to make room for a new one",
		"forgotten", s.peer, "heartbeats", s.beats, "probation_beats", probationBeats, "silent_for", now-s.last, "max_senders", r.cfg.MaxSenders)
	return true
}

// heard counts a first-copy heartbeat of s at now and keeps the probation
// list in order of the last heartbeat; s leaves probation at
// probationBeats. Called with r.eval held.
func (r *receiver) heard(s *streamID, now time.Duration) {
	s.last = now
	s.beats++
	if s.incBeats == 0 {
		s.incFirst = now
	}
	s.incBeats++
	switch {
	case s.beats >= probationBeats:
		if s.probation != nil {
			r.probation.Remove(s.probation)
			s.probation = nil
		}
	case s.probation != nil:
		r.probation.MoveToBack(s.probation)
	default:
		if r.probation == nil {
			r.probation = list.New()
		}
		s.probation = r.probation.PushBack(s)
	}
}
