package main

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Impair is the user-space impairment placed between one member and the
// network, identical for both libraries: it drops a fraction of datagrams in
// each direction (a lossy member), holds everything while paused (a
// SIGSTOP-like pause: the member's sends block, so its protocol goroutines
// stop at their next send, and received datagrams wait as they would in a
// stopped process's socket buffer), and black-holes everything once killed.
// It also counts what the member sends.
type Impair struct {
	mu     sync.Mutex
	resume chan struct{} // nil when running; closed on resume
	loss   float64
	rng    *rand.Rand
	killed atomic.Bool

	msgs, bytes atomic.Uint64
}

// NewImpair returns a pass-through impairment with its own seeded source.
func NewImpair(seed uint64) *Impair {
	return &Impair{rng: rand.New(rand.NewPCG(seed, 7))}
}

// SetLoss sets the drop probability of every datagram in and out.
func (i *Impair) SetLoss(p float64) {
	i.mu.Lock()
	i.loss = p
	i.mu.Unlock()
}

// Pause holds the member for d, returning immediately.
func (i *Impair) Pause(d time.Duration) {
	i.mu.Lock()
	if i.resume == nil {
		ch := make(chan struct{})
		i.resume = ch
		time.AfterFunc(d, func() {
			i.mu.Lock()
			i.resume = nil
			i.mu.Unlock()
			close(ch)
		})
	}
	i.mu.Unlock()
}

// Kill black-holes the member for good, as if its process died.
func (i *Impair) Kill() { i.killed.Store(true) }

// Killed reports whether Kill was called.
func (i *Impair) Killed() bool { return i.killed.Load() }

// wait blocks while the member is paused.
func (i *Impair) wait() {
	i.mu.Lock()
	ch := i.resume
	i.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// drop decides the fate of one datagram.
func (i *Impair) drop() bool {
	if i.killed.Load() {
		return true
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.loss > 0 && i.rng.Float64() < i.loss
}

// sent counts one outgoing message of n bytes.
func (i *Impair) sent(n int) {
	i.msgs.Add(1)
	i.bytes.Add(uint64(n))
}

// Counts returns messages and bytes sent so far.
func (i *Impair) Counts() (msgs, bytes uint64) { return i.msgs.Load(), i.bytes.Load() }
