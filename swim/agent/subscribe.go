package agent

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// Subscriptions: the channels of Subscribe (membership events) and Receive
// (application messages), and how the agent's goroutine hands them what
// the state machine produced, dropping or waiting: for events with
// Config.BlockingDelivery, for messages with Config.BlockingMessages
// (only for those a member sent from its address, blockOn).
//
// Locks: the agent's sub.mu guards the sets of subscribers and is held
// only to add, remove or copy them, never while a value is sent; each
// subscription's mu is held by whoever sends on or closes its channel
// (the agent's goroutine delivering, a cancel or the agent's stop closing
// it), so a channel is never sent on once closed. While the agent waits
// for one subscriber (BlockingDelivery, BlockingMessages), that
// subscriber, or any other goroutine, may Subscribe, Receive or cancel any other subscription; a
// cancel of the one waited on frees the wait first (done), then takes its
// mu.

// subscription is one subscriber's channel and the signal that it was
// cancelled, which frees a blocked delivery to it. With limit > 0 the
// bytes of the values waiting unread (size of each) stay within limit:
// sizes holds the size of each value sent and not yet known to be read,
// oldest first, and queued their sum (agent's goroutine only).
type subscription[T any] struct {
	ch     chan T
	done   chan struct{}
	limit  int
	size   func(T) int
	sizes  []int
	queued int
	// mu is held while ch is sent on or closed; closed is set, under
	// it, once ch is closed.
	mu     sync.Mutex
	closed bool
}

// close closes s's channel unless it is closed already.
func (s *subscription[T]) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// fits reports whether a value of n bytes may be sent now without the
// values waiting unread exceeding limit. The channel is first-in first-out
// and only the agent's goroutine sends on it, so of the values sent, all
// but the last len(ch) were read. A value larger than limit fits an empty
// channel, so that every value can be delivered.
func (s *subscription[T]) fits(n int) bool {
	if s.limit <= 0 {
		return true
	}
	for len(s.sizes) > len(s.ch) {
		s.queued -= s.sizes[0]
		s.sizes = s.sizes[1:]
	}
	return len(s.sizes) == 0 || s.queued+n <= s.limit
}

// sent records a value of n bytes sent on the channel.
func (s *subscription[T]) sent(n int) {
	if s.limit > 0 {
		s.sizes = append(s.sizes, n)
		s.queued += n
	}
}

// sizeOf returns v's size for the byte limit (0 without one).
func (s *subscription[T]) sizeOf(v T) int {
	if s.limit <= 0 {
		return 0
	}
	return s.size(v)
}

// subscriptions is a set of subscribers of one kind, under the agent's
// sub.mu.
type subscriptions[T any] map[int]*subscription[T]

// MaxSubscribeBuffer bounds the buffer of a Subscribe or Receive channel:
// a larger one is taken as this. Go allocates a channel's whole buffer at
// once, so a buffer of 2^31 would exhaust memory, a fatal error that no
// recover catches, for room no subscriber needs.
const MaxSubscribeBuffer = 1 << 16

// add registers a channel of the given buffer (def when buffer <= 0, at
// most MaxSubscribeBuffer), whose values waiting unread hold at most limit bytes by size (no bound
// when limit is 0), and returns it with its cancel function. A stopped
// agent gives a closed channel.
func add[T any](a *Agent, set *subscriptions[T], buffer, def, limit int, size func(T) int) (<-chan T, func()) {
	if buffer <= 0 {
		buffer = def
	}
	buffer = min(buffer, MaxSubscribeBuffer)
	s := &subscription[T]{ch: make(chan T, buffer), done: make(chan struct{}), limit: limit, size: size}
	a.sub.mu.Lock()
	defer a.sub.mu.Unlock()
	if a.sub.closed {
		s.close()
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
			close(s.done) // first: it frees a delivery blocked on s, which holds s.mu
			s.close()
			a.sub.mu.Lock()
			defer a.sub.mu.Unlock()
			delete(*set, id)
		})
	}
}

// deliverAll hands every value to every subscriber of *set: those
// subscribed when it is called (copied to *snap under sub.mu, which is
// then released), less those cancelled meanwhile; a subscription added
// meanwhile gets the values of later calls. A full channel drops a value
// (counted in dropped) unless wait, when not nil, says to wait for it:
// then the agent waits until the subscriber reads or cancels, or until
// the agent is told to stop (Shutdown, Leave, Close, Start's context),
// after which full channels drop: a subscriber that stopped reading must
// not keep the agent from stopping. Agent goroutine.
func deliverAll[T any](a *Agent, set *subscriptions[T], snap *[]*subscription[T], vals []T, wait func(T) bool, dropped *atomic.Uint64) {
	a.sub.mu.Lock()
	subs := (*snap)[:0]
	for _, s := range *set {
		subs = append(subs, s)
	}
	a.sub.mu.Unlock()
	for _, v := range vals {
		for _, s := range subs {
			deliver(a, s, v, wait != nil && wait(v), dropped)
		}
	}
	clear(subs) // keep no cancelled subscription reachable
	*snap = subs[:0]
}

// deliver hands v to s, with s.mu held: nothing to a cancelled s, else as
// deliverAll says (wait: wait for room rather than drop).
func deliver[T any](a *Agent, s *subscription[T], v T, wait bool, dropped *atomic.Uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	n := s.sizeOf(v)
	if s.fits(n) {
		select {
		case s.ch <- v:
			s.sent(n)
			return
		default:
		}
	}
	if !wait || !block(a, s, v, n) {
		dropped.Add(1)
	}
}

// block waits until s has room for v (n bytes) and sends it, or until s
// is cancelled (true: not a drop) or the agent is told to stop (false);
// with s.mu held and no other lock, so that the subscriber may subscribe
// or cancel meanwhile.
// Room by count is waited for in the send; room by bytes is polled every
// millisecond, as the channel says nothing when a value is read. Calls of
// the agent's methods are served meanwhile: a subscriber that calls
// Members for each event it reads would otherwise wait for the agent
// while the agent waits for it (memberlist's ChannelEventDelegate
// deadlocks so).
func block[T any](a *Agent, s *subscription[T], v T, n int) bool {
	a.sub.waiting.Store(true)
	defer a.sub.waiting.Store(false)
	for {
		var send chan T // nil while v does not fit by bytes: never ready
		var poll <-chan time.Time
		if s.fits(n) {
			send = s.ch
		} else {
			poll = time.After(time.Millisecond)
		}
		select {
		case send <- v:
			s.sent(n)
			return true
		case <-poll:
		case <-s.done:
			return true
		case <-a.life.halt:
			return false
		case <-a.life.leaving:
			return false
		case <-a.life.ctxDone:
			return false
		case f := <-a.life.reqs:
			f()
			a.sendServed() // its packets now, its events with the next flush
		}
	}
}

// closeAll closes every channel of set; with sub.mu held, on the agent's
// goroutine once it no longer delivers.
func closeAll[T any](set subscriptions[T]) {
	for id, s := range set {
		s.close()
		delete(set, id)
	}
}

// Subscribe returns a channel of membership events with the given buffer
// (default 256 when buffer <= 0, at most MaxSubscribeBuffer) and a function that cancels the
// subscription. By default the protocol never waits for a subscriber:
// events that find the channel full are dropped and counted in
// Stats.EventsDropped. With Config.BlockingDelivery the agent waits for
// the subscriber instead (memberlist's ChannelEventDelegate). The channel
// is closed when the agent stops or the subscription is cancelled.
func (a *Agent) Subscribe(buffer int) (<-chan swim.Event, func()) {
	return add(a, &a.sub.events, buffer, DefaultEventBuffer, 0, nil)
}

// Receive returns a channel of the application messages this member
// receives, broadcasts and direct messages (swim.Message), with the given
// buffer (default 256 when buffer <= 0, at most MaxSubscribeBuffer), and
// a function that cancels the subscription. By default the protocol never
// waits: messages that find
// the channel full are dropped and counted in Stats.MessagesDropped
// (memberlist hands datagram messages to its Delegate.NotifyMsg through
// a bounded queue that drops when full); with Config.BlockingMessages the
// agent waits for the subscriber, for the messages that config field
// names (not a stranger's direct messages). Config.BlockingDelivery
// concerns events only. Each message goes to every subscriber; the
// channel is closed when the agent stops or the subscription is cancelled.
// The buffer counts messages; the messages waiting unread also hold at
// most Config.MaxReceiveBytes bytes of data and keys (default 8 MiB), as a
// reliable message (SendReliable) is up to Config.MaxReliableSize: a
// message over either bound is dropped, or waited for with
// BlockingMessages. One message larger than MaxReceiveBytes is delivered
// to an empty channel.
func (a *Agent) Receive(buffer int) (<-chan swim.Message, func()) {
	return add(a, &a.sub.messages, buffer, DefaultMessageBuffer, a.cfg.MaxReceiveBytes, messageSize)
}

// messageSize is a message's size for Config.MaxReceiveBytes: its data
// and key.
func messageSize(m swim.Message) int { return len(m.Data) + len(m.Key) }
