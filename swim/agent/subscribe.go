package agent

import (
	"sync"
	"sync/atomic"

	"github.com/fdkit/fdkit/swim"
)

// Subscriptions: the channels of Subscribe (membership events) and Receive
// (application messages), and how the agent's goroutine hands them what
// the state machine produced, dropping or, with Config.BlockingDelivery,
// waiting.

// subscription is one subscriber's channel and the signal that it was
// cancelled, which frees a blocked delivery to it.
type subscription[T any] struct {
	ch   chan T
	done chan struct{}
}

// subscriptions is a set of subscribers of one kind, under the agent's
// subMu.
type subscriptions[T any] map[int]*subscription[T]

// add registers a channel of the given buffer (def when buffer <= 0) and
// returns it with its cancel function. A stopped agent gives a closed
// channel.
func add[T any](a *Agent, set *subscriptions[T], buffer, def int) (<-chan T, func()) {
	if buffer <= 0 {
		buffer = def
	}
	s := &subscription[T]{ch: make(chan T, buffer), done: make(chan struct{})}
	a.sub.mu.Lock()
	defer a.sub.mu.Unlock()
	if a.sub.closed {
		close(s.ch)
		return s.ch, func() {}
	}
	if *set == nil {
		*set = subscriptions[T]{}
	}
	id := a.sub.nextID
	a.sub.nextID++
	(*set)[id] = s
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			close(s.done) // first, without the lock: a delivery blocked on s holds it
			a.sub.mu.Lock()
			defer a.sub.mu.Unlock()
			if _, ok := (*set)[id]; ok {
				close(s.ch)
				delete(*set, id)
			}
		})
	}
}

// deliverAll hands every value to every subscriber of set, with subMu
// held. Without Config.BlockingDelivery a full channel drops the value
// (counted in dropped); with it the agent waits until the subscriber reads
// or cancels, or until the agent is told to stop (Shutdown, Leave, Close,
// Start's context), after which full channels drop as without it: a
// subscriber that stopped reading must not keep the agent from stopping.
func deliverAll[T any](a *Agent, set subscriptions[T], vals []T, dropped *atomic.Uint64) {
	for _, v := range vals {
		for _, s := range set {
			select {
			case s.ch <- v:
				continue
			default:
			}
			if !a.cfg.BlockingDelivery {
				dropped.Add(1)
				continue
			}
			select {
			case s.ch <- v:
			case <-s.done:
			case <-a.life.halt:
				dropped.Add(1)
			case <-a.life.leaving:
				dropped.Add(1)
			case <-a.life.ctxDone:
				dropped.Add(1)
			}
		}
	}
}

// closeAll closes every channel of set; with subMu held.
func closeAll[T any](set subscriptions[T]) {
	for id, s := range set {
		close(s.ch)
		delete(set, id)
	}
}

// Subscribe returns a channel of membership events with the given buffer
// (default 256 when buffer <= 0) and a function that cancels the
// subscription. By default the protocol never waits for a subscriber:
// events that find the channel full are dropped and counted in
// Stats.EventsDropped. With Config.BlockingDelivery the agent waits for
// the subscriber instead (memberlist's ChannelEventDelegate). The channel
// is closed when the agent stops or the subscription is cancelled.
func (a *Agent) Subscribe(buffer int) (<-chan swim.Event, func()) {
	return add(a, &a.sub.events, buffer, DefaultEventBuffer)
}

// Receive returns a channel of the application messages this member
// receives, broadcasts and direct messages (swim.Message), with the given
// buffer (default 256 when buffer <= 0), and a function that cancels the
// subscription. By default the protocol never waits: messages that find
// the channel full are dropped and counted in Stats.MessagesDropped; with
// Config.BlockingDelivery the agent waits for the subscriber (memberlist
// calls its Delegate.NotifyMsg on its own goroutine, which waits as long
// as the delegate takes). Each message goes to every subscriber; the
// channel is closed when the agent stops or the subscription is cancelled.
// The buffer counts messages, and a reliable message (SendReliable) is up
// to Config.MaxReliableSize bytes: an unread channel of the default 256
// can hold 256 MiB of them; give reliable traffic a smaller buffer or read
// it promptly.
func (a *Agent) Receive(buffer int) (<-chan swim.Message, func()) {
	return add(a, &a.sub.messages, buffer, DefaultMessageBuffer)
}
