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
// loss it fails more often than not; the sender's next packet to this
// member, the next chance, comes with its next probe of it, a pass of the
// ring (n−1 periods) later. A request that brought nothing is therefore
// asked again, viewAskRetries times, viewAskWait periods after the
// previous one and then twice as long, while the sender is still unknown:
// each retry takes the place of the request the sender's next packet
// would have made, within the same budget (at most one request to an
// unknown sender per ProbeInterval, asksView), so that a flood of packets
// from ever new unknown senders, forged or not, makes a member send no
// more requests than before, and one packet from a forged sender makes it
// send at most 1 + viewAskRetries small MsgJoin packets, each carrying
// only this member's Alive. Requests to members believed dead (isolated)
// are not retried here: they have their own back-off.

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
}

// askedView records at now a view request to the unknown sender to.
func (m *Member) askedView(now time.Duration, to Node) {
	a := viewAsk{to: to, next: now + mulTimer(m.cfg.ProbeInterval, viewAskWait)}
	for i := range m.sync.asks {
		if m.sync.asks[i].to.ID == to.ID {
			m.sync.asks[i] = a
			return
		}
	}
	if len(m.sync.asks) >= viewAskSlots {
		m.sync.asks = m.sync.asks[1:]
	}
	m.sync.asks = append(m.sync.asks, a)
}

// viewAskDue reports when the next view request is asked again.
func (m *Member) viewAskDue() (time.Duration, bool) {
	if len(m.sync.asks) == 0 {
		return 0, false
	}
	at := m.sync.asks[0].next
	for _, a := range m.sync.asks[1:] {
		at = min(at, a.next)
	}
	return max(at, m.sync.nextAskView), true
}

// retryViewAsk forgets the view requests whose sender became known
// meanwhile (by its view, a gossip, a join: alive, suspected or dead) or
// whose retries are spent, and asks the one due first again once due.
func (m *Member) retryViewAsk(now time.Duration) {
	if len(m.sync.asks) == 0 {
		return
	}
	if m.st != running {
		m.sync.asks = m.sync.asks[:0]
		return
	}
	m.sync.asks = slices.DeleteFunc(m.sync.asks, func(a viewAsk) bool {
		return m.peers[a.to.ID] != nil || a.tries >= viewAskRetries
	})
	if len(m.sync.asks) == 0 || now < m.sync.nextAskView {
		return
	}
	i := 0
	for j := range m.sync.asks {
		if m.sync.asks[j].next < m.sync.asks[i].next {
			i = j
		}
	}
	a := &m.sync.asks[i]
	if now < a.next {
		return
	}
	a.tries++
	a.next = now + mulTimer(m.cfg.ProbeInterval, viewAskWait<<a.tries)
	m.sync.nextAskView = now + m.cfg.ProbeInterval
	m.stats.ViewRequests++
	m.askView(a.to)
}
