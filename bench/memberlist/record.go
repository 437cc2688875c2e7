package main

import (
	"sync"
	"time"
)

// Recorder collects the "declared dead" events of every member.
type Recorder struct {
	mu   sync.Mutex
	dead []deadEvent
	// onDead, when set, is also given every event as it is recorded (a
	// member process passes them to its parent, procs.go).
	onDead func(deadEvent)
}

type deadEvent struct {
	at                time.Time
	observer, subject string
}

// Dead records that observer declared subject dead (failed, not left).
func (r *Recorder) Dead(observer, subject string) {
	r.add(deadEvent{time.Now(), observer, subject})
}

// add records e.
func (r *Recorder) add(e deadEvent) {
	r.mu.Lock()
	r.dead = append(r.dead, e)
	r.mu.Unlock()
	if r.onDead != nil {
		r.onDead(e)
	}
}

func (r *Recorder) events() []deadEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]deadEvent(nil), r.dead...)
}
