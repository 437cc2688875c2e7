package agent

import (
	"net/netip"

	"github.com/fdkit/fdkit/swim"
)

// Known sources: the stream listener evicts streams from the IP addresses
// of live members after those of every other address of the same crowding
// (transport.StreamListener.SetKnownSource), so a flood of stalled streams
// from many addresses, which a TCP handshake binds to addresses the
// attacker holds, displaces its own streams before a member's whose first
// frame has not arrived whole (docs/algorithms.md, “SWIM: stream fallback
// probe”).
//
// A member's address is marked while it is alive or suspected, from the
// state machine's events: a suspected member may be slow, not gone, and
// its refutation or view may come over a stream. A dead or left member's
// is unmarked: it owes this member no transfer, its address may pass to
// another host, and one wrongly declared dead comes back by refuting over
// datagrams (its Alive raises EventJoin, which marks it again). Members
// behind one address (one host, one NAT) share its mark, which goes when
// the last of them is dead or gone. A member dials its streams from the
// address it binds, or, bound to a wildcard address, from the one it
// advertises when that is local (streamSource), so its streams come from
// the address it is held at. One whose streams come from another address
// (behind a NAT that translates them to another address than the one it
// advertises, or with its own Config.Transport, when the kernel picks the
// stream's address) is not recognised: its streams are ranked as any
// unknown source's, as before this mark existed. The mark
// holds against a flood from addresses that are no member's: in plain
// mode anyone can join from an address it holds or announce unverified
// members there, and a key holder can in any mode, and its streams then
// rank as a member's.

// knownSources is what the agent marked in its listener: the address of
// each live member and how many live members have each address. Agent
// goroutine only. A live member the state machine forgets without an
// event (one evicted to make room for a newcomer under
// swim.Config.MaxMembers) stays marked until a sweep (sweepSources), made once the marks
// outnumber twice the live members by knownSlack: the marks stay within
// that bound, and a flood of newcomers evicting each other costs a sweep
// per as many evictions as the view holds.
type knownSources struct {
	byID map[swim.ID]netip.Addr
	refs map[netip.Addr]int
}

// markSources updates the listener's known sources from events. Agent
// goroutine.
func (a *Agent) markSources(events []swim.Event) {
	if a.stream.listener == nil {
		return
	}
	for _, e := range events {
		if e.Node.ID == a.self.ID {
			continue
		}
		switch e.Kind {
		case swim.EventJoin, swim.EventAlive, swim.EventSuspect, swim.EventUpdate:
			ap, err := netip.ParseAddrPort(e.Node.Addr)
			if err != nil {
				a.unmarkSource(e.Node.ID) // not an address a stream comes from
				continue
			}
			a.markSource(e.Node.ID, ap.Addr().Unmap())
		case swim.EventDead, swim.EventLeave:
			a.unmarkSource(e.Node.ID)
		}
	}
	if len(a.stream.known.byID) > 2*a.m.NumAlive()+knownSlack {
		a.sweepSources()
	}
}

// knownSlack is how many marks beyond twice the live members start a
// sweep (knownSources), so that a small view is not swept on every event.
const knownSlack = 16

// sweepSources unmarks the members no longer alive or suspected in the
// view. Agent goroutine.
func (a *Agent) sweepSources() {
	for id := range a.stream.known.byID {
		if s := a.m.State(id); s != swim.StateAlive && s != swim.StateSuspect {
			a.unmarkSource(id)
		}
	}
}

// markSource marks ip as the address of member id, in place of the one it
// had.
func (a *Agent) markSource(id swim.ID, ip netip.Addr) {
	k := &a.stream.known
	if old, ok := k.byID[id]; ok {
		if old == ip {
			return
		}
		a.unmarkSource(id)
	}
	if k.byID == nil {
		k.byID, k.refs = map[swim.ID]netip.Addr{}, map[netip.Addr]int{}
	}
	k.byID[id] = ip
	if k.refs[ip]++; k.refs[ip] == 1 {
		a.stream.listener.SetKnownSource(ip, true)
	}
}

// unmarkSource takes member id's address away, and the listener's mark
// with it when no other live member has that address.
func (a *Agent) unmarkSource(id swim.ID) {
	k := &a.stream.known
	ip, ok := k.byID[id]
	if !ok {
		return
	}
	delete(k.byID, id)
	if k.refs[ip]--; k.refs[ip] <= 0 {
		delete(k.refs, ip)
		a.stream.listener.SetKnownSource(ip, false)
	}
}
