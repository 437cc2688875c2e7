package agent

import (
	"net/netip"
	"time"
)

// The protocol's dialled streams (stream pings, views): at most
// streamOutMax at once, at most streamOutPerAddr to one address; joins
// resent over a stream to a seed apart: at most streamJoinMax at once, one
// per seed address; and the answer to a join read with an idle limit and
// a limit on the whole.

// streamOutPerAddr bounds the protocol's streams dialled at once to one
// address (ip:port), a quarter of streamOutMax as the listener's default
// MaxStreamConnsPerSource is a quarter of its MaxStreamConns. A member
// has at most a few in flight to one member at once (its stream ping,
// the view of an exchange, a join resent while the last one's answer is
// read), and a member that accepts streams and never answers them holds
// at most this many (issue 27, F4; docs/experiments.md, “SWIM: a silent
// seed and the dialling slots (F4)”). Beyond it a stream ping is skipped
// (Stats.StreamPingsSkipped) and a view goes as datagrams, as when every
// slot is taken; both counted in Stats.StreamsAddrBusy. Many members
// share one IP address (a host's tenants, a test's group on loopback), so
// the limit is per ip:port, and a host with many ports can take every
// slot only with that many members' streams, not with joins to seeds
// (streamJoinMax).
const streamOutPerAddr = streamOutMax / 4

// answerIdleMin is the least answerIdle: a member writes a join's answer
// as soon as its goroutine has the join, which a loaded host delays by
// more than a short ProbeInterval.
const answerIdleMin = time.Second

// answerIdle is how long readAnswer waits for the first frame of a
// join's answer from the member dialled, and for each next one: two
// ProbeIntervals (the join is resent after one), at least answerIdleMin.
// A member that answers on the stream writes its view at once and its
// frames back to back, and one that answers at the joiner's address, or
// predates answers on the stream, closes it: a longer wait is a seed that
// accepted the stream and sends nothing, or only frames readAnswer drops,
// which do not restart the wait (issue 27, user43 F1). The whole answer
// must come within answerWhole of the join.
func answerIdle(probeInterval time.Duration) time.Duration {
	return max(2*probeInterval, answerIdleMin)
}

// answerWhole bounds a join's whole answer, counted from the join's
// writing: twice answerIdle, so a seed that writes one frame of its own
// just inside each idle limit holds the stream for that long, not for the
// whole StreamTimeout (issue 27, user43 F1).
func answerWhole(idle time.Duration) time.Duration { return 2 * idle }

// streamJoinMax bounds the streams of joins resent to seeds
// (joinOverStream) open at once, apart from the protocol's streamOutMax:
// a seed that accepts them and answers slowly, or with frames readAnswer
// drops, cannot take the slots of stream pings and views, whatever the
// number of its ports or addresses (issue 27, user43 F1). At most one is
// open to one seed address: a join resent while the last one's answer is
// still read there goes as a datagram (Stats.StreamJoinsBusy), as does
// one that finds all streamJoinMax open. A joiner needs one seed's
// answer; the resends of the latest Join go first to its own addresses.
const streamJoinMax = 4

// takeJoinSlot takes a slot for a join's stream to the seed to: false when
// one to to is open, or streamJoinMax are (Stats.StreamJoinsBusy).
func (a *Agent) takeJoinSlot(to netip.AddrPort) bool {
	to = slotKey(to)
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	if a.stream.joinTo[to] || len(a.stream.joinTo) >= streamJoinMax {
		a.sctr.streamJoinsBusy.Add(1)
		return false
	}
	a.stream.joinTo[to] = true
	return true
}

// releaseJoinSlot gives back a slot takeJoinSlot(to) took.
func (a *Agent) releaseJoinSlot(to netip.AddrPort) {
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	delete(a.stream.joinTo, slotKey(to))
}

// slotKey is the address whose slots takeOutSlot counts: an IPv4 address
// written as IPv4-mapped IPv6 (::ffff:a.b.c.d) is the same host and port,
// and counts as one.
func slotKey(to netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
}

// takeOutSlot takes a dialling slot for a stream to to: false when all
// streamOutMax are taken, or streamOutPerAddr are to to
// (Stats.StreamsAddrBusy).
func (a *Agent) takeOutSlot(to netip.AddrPort) bool {
	to = slotKey(to)
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	if a.stream.outTo[to] >= streamOutPerAddr {
		a.sctr.streamsAddrBusy.Add(1)
		return false
	}
	select {
	case a.stream.outSlots <- struct{}{}:
		a.stream.outTo[to]++
		return true
	default:
		return false
	}
}

// releaseOutSlot gives back a slot takeOutSlot(to) took.
func (a *Agent) releaseOutSlot(to netip.AddrPort) {
	to = slotKey(to)
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	if a.stream.outTo[to]--; a.stream.outTo[to] <= 0 {
		delete(a.stream.outTo, to)
	}
	<-a.stream.outSlots
}
