package kvstore

import (
	"errors"
	"sync"

	"github.com/fdkit/fdkit/swim"
)

// The challenges that answer asks wait here for the goroutine that sends
// them (sendChals), not sent by the receiving goroutine: each send waits
// for the agent, and asks forged under a live member's ID, each answered
// (challenges.go), at 50,000 to 90,000 a second slowed the receiving
// goroutine so that its buffer overflowed, and more than half of the
// writes another member made meanwhile were lost (docs/experiments.md).
// The asks for one member that come while the sender is busy are
// answered together, in one datagram carrying each ask's nonce (up to
// maxChalAsks), so the sender sends at most one challenge per member per
// pass. An ask that came from the address the view holds for its sender
// (swim.Message.FromHeldAddr: the joiner's own, unless a forger spoofs
// that address) has a place kept for it: the other asks under that ID
// fill at most maxChalAsks−1, and when maxPullers members wait, it takes
// the place of a member none of whose asks came from there. Before, more
// than maxChalAsks asks forged under a joiner's ID within one pass
// refused the joiner's own ask.

// maxChalAsks is how many asks one challenge answers at most: 32, a
// datagram of 1 + 32·16 + 16 = 529 bytes of data.
const maxChalAsks = 32

// pendingChal is the challenge waiting to be sent to a member: the
// address, the challenge in force when the last ask came, the nonces of
// the asks it answers, and own, 1 + the index in asks of the last ask
// that came from the member's held address (0: none).
type pendingChal struct {
	addr string
	chal [challengeLen]byte
	asks [][askNonceLen]byte
	own  int
}

// chalsOut is the challenges waiting, at most one per member and
// maxPullers members; ready is signalled when one is added. free holds
// the entries of the challenges sent last, reused by add (take).
type chalsOut struct {
	mu    sync.Mutex
	m     map[swim.ID]*pendingChal
	free  []*pendingChal
	ready chan struct{}
}

func (o *chalsOut) init() {
	o.m = map[swim.ID]*pendingChal{}
	o.ready = make(chan struct{}, 1)
}

// errChalsOutFull is the error of add for an ask that does not fit.
var errChalsOutFull = errors.New("too many asks waiting for their challenge")

// add queues the answer to ask, from id, at addr: chal, with the nonces
// of the asks from id at addr queued before it and not yet sent. own
// reports that the ask came from addr (swim.Message.FromHeldAddr): it
// replaces id's earlier own ask waiting, if any, and is refused only
// when maxPullers members wait, each with an own ask. errChalsOutFull for
// another ask when id has maxChalAsks−1 others waiting, or maxPullers
// other members wait.
func (o *chalsOut) add(id swim.ID, addr string, chal [challengeLen]byte, ask [askNonceLen]byte, own bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.m[id]
	if p == nil {
		if len(o.m) >= maxPullers && !(own && o.evictOthers()) {
			return errChalsOutFull
		}
		if n := len(o.free); n > 0 {
			p, o.free = o.free[n-1], o.free[:n-1]
		} else {
			p = &pendingChal{}
		}
		o.m[id] = p
	}
	if p.addr != addr { // the asks waiting came under id at another address
		p.asks, p.own = p.asks[:0], 0
	}
	switch {
	case own && p.own > 0:
		p.asks[p.own-1] = ask
	case own:
		p.asks = append(p.asks, ask)
		p.own = len(p.asks)
	case len(p.asks)-min(p.own, 1) >= maxChalAsks-1:
		return errChalsOutFull
	default:
		p.asks = append(p.asks, ask)
	}
	p.addr, p.chal = addr, chal
	select {
	case o.ready <- struct{}{}:
	default:
	}
	return nil
}

// evictOthers removes a member waiting with no own ask (add), keeping its
// entry for reuse, and reports whether there was one.
func (o *chalsOut) evictOthers() bool {
	for id, p := range o.m {
		if p.own == 0 {
			delete(o.m, id)
			*p = pendingChal{asks: p.asks[:0]}
			o.free = append(o.free, p)
			return true
		}
	}
	return false
}

// take returns the challenges waiting and empties the queue. sent is
// the map an earlier take returned, its challenges sent (nil: none): it
// becomes the queue's, emptied, and its entries are kept for add, so
// that a pass of the sender (sendChals) allocates nothing here under a
// flood of asks; before, each pass made a new map, and an entry per
// member and its asks.
func (o *chalsOut) take(sent map[swim.ID]*pendingChal) map[swim.ID]*pendingChal {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.m
	if sent == nil {
		sent = make(map[swim.ID]*pendingChal, len(m))
	}
	for _, p := range sent {
		*p = pendingChal{asks: p.asks[:0]}
		o.free = append(o.free, p)
	}
	clear(sent)
	o.m = sent
	return m
}

// sendChals sends the challenges queued (chalsOut) until the store
// stops; one that cannot be sent is counted in Rejected.
func (s *Store) sendChals() {
	var sent map[swim.ID]*pendingChal
	for {
		select {
		case <-s.pull.out.ready:
			sent = s.pull.out.take(sent)
			for _, p := range sent {
				if s.sendTo(p.addr, chalMsg(p.asks, p.chal)) != nil {
					s.rejected.Add(1)
				}
			}
		case <-s.pull.done:
			return
		}
	}
}
