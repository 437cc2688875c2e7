package main

import (
	"sync"
	"time"
)

// Recorder collects the "declared dead" events of every member.
type Recorder struct {
	mu   sync.Mutex
	dead []deadEvent
}

type deadEvent struct {
	at                time.Time
	observer, subject string
}

// Dead records that observer declared subject dead (failed, not left).
func (r *Recorder) Dead(observer, subject string) {
	r.mu.Lock()
	r.dead = append(r.dead, deadEvent{time.Now(), observer, subject})
	r.mu.Unlock()
}

func (r *Recorder) events() []deadEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]deadEvent(nil), r.dead...)
}
