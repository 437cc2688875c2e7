package agent

import (
	"net/netip"
	"time"
)

// The protocol's dialled streams (stream pings, views, joins resent over
// a stream): at most streamOutMax at once, at most streamOutPerAddr to
// one address, and the answer to a join read with an idle limit.

// streamOutPerAddr bounds the protocol's streams dialled at once to one
// address (ip:port), a quarter of streamOutMax as the listener's default
// MaxStreamConnsPerSource is a quarter of its MaxStreamConns. A member
// has at most a few in flight to one member at once (its stream ping,
// the view of an exchange, a join resent while the last one's answer is
// read), and a seed that accepts streams and never answers them held one
// slot per join resent, one every ProbeInterval, for StreamTimeout: up
// to all 16, and stream pings and joins to every other member were
// skipped or sent as datagrams meanwhile (issue 27, F4;
// docs/experiments.md, “SWIM: a silent seed and the dialling slots
// (F4)”). Beyond it a stream ping is skipped (Stats.StreamPingsSkipped)
// and a view or join goes as datagrams, as when every slot is taken;
// both counted in Stats.StreamsAddrBusy.
const streamOutPerAddr = streamOutMax / 4

// answerIdleMin is the least answerIdle: a member writes a join's answer
// as soon as its goroutine has the join, which a loaded host delays by
// more than a short ProbeInterval.
const answerIdleMin = time.Second

// answerIdle is how long readAnswer waits for each frame of a join's
// answer: two ProbeIntervals (the join is resent over a new stream after
// one), at least answerIdleMin. A member that answers on the stream
// writes its view at once and its frames back to back, and one that
// answers at the joiner's address, or predates answers on the stream,
// closes it: a longer wait is a seed that accepted the stream and sends
// nothing.
func answerIdle(probeInterval time.Duration) time.Duration {
	return max(2*probeInterval, answerIdleMin)
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
