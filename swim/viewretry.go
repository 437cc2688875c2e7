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
// viewAskRetries times in all.
//
// The budget. A sender's claimed address may be a victim's, and a forged
// packet must not make the member send that address more than twice its
// bytes. So each request to an unknown sender, asked or retried, is
// counted against the sender, keyed by its ID and address: the entry
// (viewAsk) holds the bytes received from that ID at that address, from
// the packet that drew the first request on, and the bytes of every
// request sent there since, and a request is sent only if it keeps the
// bytes sent within twice the bytes received. A new packet adds to the
// bytes received and never resets the count. An entry is dropped when its
// sender becomes known, when its retries are spent, or when a retry is
// due and not paid for; the next request to that sender then needs a
// packet of at least half a request's size (asksView), as the first one
// did. Within each entry's life, and before the first (no request is
// sent to a sender without an entry), the bytes sent to a sender stay
// within twice the bytes received from it, so they do over any span.
// A real joiner's packets (probes with piggybacked updates, its
// challenge's ping) pay for the retries; a forged one barely large enough
// to draw a request draws no retry. A packet received from another
// address than its sender claims (StepFromOtherSource) draws no request
// and pays for none. Every retry takes its place in the budget of one
// view request to an unknown sender per ProbeInterval (asksView), so that
// a flood of packets from ever new unknown senders makes a member send no
// more requests than before. Requests to members believed dead
// (isolated) are not retried here: they have their own back-off.

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

// viewAsk is a view request to an unknown sender, with the bytes that
// sender paid and was sent, awaiting its retry (antiEntropy.asks).
type viewAsk struct {
	to    Node          // the sender asked, at the address it was received from
	next  time.Duration // when it is asked again unless known by then
	tries int           // retries made
	recv  int           // bytes received from to since the entry was made (recvBytes)
	sent  int           // bytes sent to to since then, requests and acks (sentBytes)
	size  int           // the bytes of the last request (sentBytes)
}

// viewAskOf returns the entry of the sender to (its ID at its address),
// or nil.
func (m *Member) viewAskOf(to Node) *viewAsk {
	for i := range m.sync.asks {
		if a := &m.sync.asks[i]; a.to == to {
			return a
		}
	}
	return nil
}

// viewAskPaid reports whether a request of size bytes to to, drawn by a
// packet of recv bytes received from it at its own address, keeps the
// requests to it within twice the bytes received from it.
func (m *Member) viewAskPaid(to Node, recv, size int) bool {
	sent := size
	if a := m.viewAskOf(to); a != nil {
		recv += a.recv
		sent += a.sent
	}
	return sent <= 2*recv
}

// askedView records at now a view request of size bytes to the unknown
// sender to, drawn by a packet of recv bytes received from it at its own
// address. The next retry comes after the wait of the retries made.
func (m *Member) askedView(now time.Duration, to Node, recv, size int) {
	if a := m.viewAskOf(to); a != nil {
		a.recv += recv
		a.sent += size
		a.size = size
		a.next = now + mulTimer(m.cfg.ProbeInterval, viewAskWait<<a.tries)
		return
	}
	if len(m.sync.asks) >= viewAskSlots {
		m.sync.asks = m.sync.asks[1:]
	}
	m.sync.asks = append(m.sync.asks, viewAsk{to: to, next: now + mulTimer(m.cfg.ProbeInterval, viewAskWait), recv: recv, sent: size, size: size})
}

// heardFromAsked counts a packet of size bytes from the unknown sender
// from, received at its own address, that drew no request.
func (m *Member) heardFromAsked(from Node, size int) {
	if a := m.viewAskOf(from); a != nil {
		a.recv += size
	}
}

// paid reports whether a retry of a's last request keeps the requests to
// its sender within twice the bytes received from it. retryViewAsk checks
// again with the size the retry has when sent.
func (a *viewAsk) paid() bool {
	return a.sent+a.size <= 2*a.recv
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
	if a.size = m.askViewSize(a.to); !a.paid() {
		// This member's Alive grew since (its metadata): forgotten.
		m.sync.asks = slices.Delete(m.sync.asks, i, i+1)
		return
	}
	a.tries++
	a.sent += a.size
	a.next = now + mulTimer(m.cfg.ProbeInterval, viewAskWait<<a.tries)
	m.sync.nextAskView = now + m.cfg.ProbeInterval
	m.stats.ViewRequests++
	m.askView(a.to)
}
