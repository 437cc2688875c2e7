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
// pass, and a flood of asks under a joiner's ID drops the joiner's own
// ask only when more than maxChalAsks asks for that member come within
// one pass.

// maxChalAsks is how many asks one challenge answers at most: 32, a
// datagram of 1 + 32·16 + 16 = 529 bytes of data.
const maxChalAsks = 32

// pendingChal is the challenge waiting to be sent to a member: the
// address, the challenge in force when the last ask came, and the nonces
// of the asks it answers.
type pendingChal struct {
	addr string
	chal [challengeLen]byte
	asks [][askNonceLen]byte
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
// of the asks from id at addr queued before it and not yet sent.
// errChalsOutFull when id has maxChalAsks asks waiting, or maxPullers
// other members have.
func (o *chalsOut) add(id swim.ID, addr string, chal [challengeLen]byte, ask [askNonceLen]byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.m[id]
	if p == nil {
		if len(o.m) >= maxPullers {
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
		p.asks = p.asks[:0]
	}
	if len(p.asks) >= maxChalAsks {
		return errChalsOutFull
	}
	p.addr, p.chal, p.asks = addr, chal, append(p.asks, ask)
	select {
	case o.ready <- struct{}{}:
	default:
	}
	return nil
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
