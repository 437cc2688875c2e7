package swim

import (
	"slices"
	"time"
)

// Retried view requests. A member that hears a protocol packet from a
// sender it does not know asks it for its view (noteSender, asksView):
// that is how a member that missed a joiner's announcement, and every
// copy of it, learns of the joiner before the next anti-entropy exchange.
// The exchange takes four datagrams when the sender challenges the
// request (the request, a ping back, its ack, the view), so with 20 %
// loss it fails often, and the sender's next packet large enough to draw
// a request (asksView) may come a pass of the ring (n−1 periods) later. A
// request whose sender is still unknown viewAskWait periods later is
// therefore asked again, then once more twice as long after,
// viewAskRetries times in all, as long as the requests to that sender
// stay within twice the bytes received from it since the first one
// (asksView's rule for one request, extended to its retries): a sender's
// claimed address may be a victim's, and a forged packet must not make
// the member send it more than twice its bytes. A real joiner's packets
// (probes with piggybacked updates, its challenge's ping) pay for the
// retries; a forged one barely large enough to draw a request draws no
// retry. Every retry takes its place in the budget of one view request to
// an unknown sender per ProbeInterval (asksView), so that a flood of
// packets from ever new unknown senders makes a member send no more
// requests than before. Requests to members believed dead (isolated) are
// not retried here: they have their own back-off.

// viewAskRetries is how many times a view request to an unknown sender is
// asked again.
const viewAskRetries = 2

// viewAskWait is the wait, in protocol periods, before the first retry; it
// doubles for the next.
const viewAskWait = 2

// viewAskSlots bounds the view requests awaiting a retry: a newer one
// takes the place of the oldest. More than one, because while a group
// forms a member asks several joiners in turn, and the request to one
// that failed must not be forgotten for the next joiner's.
const viewAskSlots = 4

// viewAsk is a view request to an unknown sender awaiting its retry
// (antiEntropy.asks).
type viewAsk struct {
	to    Node          // the sender asked
	next  time.Duration // when it is asked again unless known by then
	tries int           // retries made
	recv  int           // bytes received from the sender since the first request (Packet.Size)
	size  int           // the bytes of one request (Packet.Size)
}

// askedView records at now a view request to the unknown sender to,
// drawn by a packet of recv bytes.
func (m *Member) askedView(now time.Duration, to Node, recv int) {
	a := viewAsk{to: to, next: now + mulTimer(m.cfg.ProbeInterval, viewAskWait), recv: recv, size: m.askViewSize(to)}
	for i := range m.sync.asks {
		if m.sync.asks[i].to.ID == to.ID {
			a.recv += m.sync.asks[i].recv
			m.sync.asks[i] = a
			return
		}
	}
	if len(m.sync.asks) >= viewAskSlots {
		m.sync.asks = m.sync.asks[1:]
	}
	m.sync.asks = append(m.sync.asks, a)
}

// heardFromAsked counts a packet of size bytes from the unknown sender
// from, from its own address, for a view request to it awaiting a retry.
func (m *Member) heardFromAsked(from Node, size int) {
	for i := range m.sync.asks {
		if a := &m.sync.asks[i]; a.to.ID == from.ID && a.to.Addr == from.Addr {
			a.recv += size
		}
	}
}

// paid reports whether a's next retry keeps the requests to its sender
// within twice the bytes received from it.
func (a *viewAsk) paid() bool {
	return (a.tries+2)*a.size <= 2*a.recv
}

// viewAskDue reports when the next view request is asked again
// (retryViewAsk; one not paid for is forgotten at any Tick past its time).
func (m *Member) viewAskDue() (at time.Duration, ok bool) {
	for i := range m.sync.asks {
		if a := &m.sync.asks[i]; a.paid() && (!ok || a.next < at) {
			at, ok = a.next, true
		}
	}
	return max(at, m.sync.nextAskView), ok
}

// retryViewAsk forgets the view requests whose sender became known
// meanwhile (by its view, a gossip, a join: alive, suspected or dead),
// whose retries are spent, or that are due and not paid for, and asks
// the paid one due first again once due.
func (m *Member) retryViewAsk(now time.Duration) {
	if len(m.sync.asks) == 0 {
		return
	}
	if m.st != running {
		m.sync.asks = m.sync.asks[:0]
		return
	}
	m.sync.asks = slices.DeleteFunc(m.sync.asks, func(a viewAsk) bool {
		return m.peers[a.to.ID] != nil || a.tries >= viewAskRetries || now >= a.next && !a.paid()
	})
	if now < m.sync.nextAskView {
		return
	}
	i := -1
	for j := range m.sync.asks {
		if a := &m.sync.asks[j]; a.paid() && (i < 0 || a.next < m.sync.asks[i].next) {
			i = j
		}
	}
	if i < 0 || now < m.sync.asks[i].next {
		return
	}
	a := &m.sync.asks[i]
	a.tries++
	a.next = now + mulTimer(m.cfg.ProbeInterval, viewAskWait<<a.tries)
	m.sync.nextAskView = now + m.cfg.ProbeInterval
	m.stats.ViewRequests++
	m.askView(a.to)
}
