package agent

import (
	"context"
	"net/netip"
	"time"
)

// Joins resent over a stream to seeds (joinOverStream): their own slots,
// streamJoinMax at once, one per seed address, taken over from a seed
// that stalls by a seed that has had fewer streams (takeJoinSlot); and
// the answer to a join read with an idle limit and a limit on the whole
// (readAnswer).

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

// joinStall is how long a join's stream to a seed must have held its slot
// (dialling, writing the join, reading the answer) before a join to a
// seed that has had fewer streams may take it over (takeJoinSlot): half
// a ProbeInterval, the time between two resends less the jitter of the
// agent's ticks. A seed answers a join on its stream at once; one slower
// than that loses its stream only to seeds that have had fewer, so once
// the seeds resent to have had as many it keeps its stream up to the
// answer's limits (answerIdle, answerWhole).
func joinStall(probeInterval time.Duration) time.Duration { return probeInterval / 2 }

// streamJoinMax bounds the streams of joins resent to seeds
// (joinOverStream) open at once, apart from the other pools (stream
// pings, views, reliable messages: streamslots.go): a seed that accepts
// them and answers slowly, or with frames readAnswer drops, cannot take
// the slots of those, whatever the number of its ports or addresses
// (issue 27, user43 F1). At most one is open to one seed address: a join
// resent while the last one's answer is still read there goes as a
// datagram (Stats.StreamJoinsBusy).
//
// When all streamJoinMax are open, a join to a seed that has had fewer
// streams than the seed of an open one, and none open, takes over the
// slot of the oldest such stream open for at least joinStall (half a
// ProbeInterval): that stream is closed unanswered
// (Stats.StreamJoinsYielded) and its join is resent with the others. The
// joins of one resend take their slots in the order of the streams their
// seeds have had, fewest first, then in the order of the addresses (the
// latest Join's first: joinUnion). Seeds that stall, or refuse streams,
// thus take turns with the others instead of keeping the slots by
// coming first (issue 27, session 23): joins are resent every
// ProbeInterval, each resend gives streamJoinMax more seeds their first
// stream, taking over the slots of streams opened at an earlier resend,
// so the address at index k (from 0) of a Join whose seeds have had no
// stream gets its first stream at the latest at the ⌊k/4⌋+1-th resend,
// about (⌊k/4⌋+1)·ProbeInterval after the Join, however many of the
// addresses before it stall (accept the stream and send nothing, or
// trickle frames), refuse streams, or were joined through by earlier
// Join calls still waiting. A seed that answers writes its view on that
// stream at once. The counts of streams are kept for the seeds of the
// Join calls waiting (pruneJoinTurns).
const streamJoinMax = 4

// joinStream is a join's stream to a seed in its slot.
type joinStream struct {
	ctx    context.Context
	cancel context.CancelFunc // closes the stream, or stops its dial: its slot is taken over, or released
	opened time.Time
}

// takeJoinSlot takes a slot for a join's stream to the seed to, taking
// one over from a stalled seed's stream when all are open (streamJoinMax);
// nil when one to to is open or no slot can be had
// (Stats.StreamJoinsBusy). The stream's context ends when its slot is
// taken over or released.
func (a *Agent) takeJoinSlot(to netip.AddrPort) *joinStream {
	to = slotKey(to)
	now := time.Now()
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	if a.stream.joinTo[to] != nil {
		a.sctr.streamJoinsBusy.Add(1)
		return nil
	}
	turns := a.stream.joinTurns[to]
	if len(a.stream.joinTo) >= streamJoinMax {
		var victim *joinStream
		var at netip.AddrPort
		for addr, s := range a.stream.joinTo {
			if now.Sub(s.opened) < a.stream.joinStall || a.stream.joinTurns[addr] <= turns {
				continue
			}
			if victim == nil || s.opened.Before(victim.opened) || s.opened.Equal(victim.opened) && addr.Compare(at) < 0 {
				victim, at = s, addr
			}
		}
		if victim == nil {
			a.sctr.streamJoinsBusy.Add(1)
			return nil
		}
		victim.cancel()
		delete(a.stream.joinTo, at)
		a.sctr.streamJoinsYielded.Add(1)
	}
	ctx, cancel := context.WithCancel(a.stream.ctx)
	s := &joinStream{ctx: ctx, cancel: cancel, opened: now}
	a.stream.joinTo[to] = s
	a.stream.joinTurns[to] = turns + 1
	return s
}

// releaseJoinSlot gives back the slot takeJoinSlot(to) took for s, unless
// it was taken over.
func (a *Agent) releaseJoinSlot(to netip.AddrPort, s *joinStream) {
	s.cancel()
	to = slotKey(to)
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	if a.stream.joinTo[to] == s {
		delete(a.stream.joinTo, to)
	}
}

// joinTurnsOf returns the streams each seed of tos has had (takeJoinSlot).
func (a *Agent) joinTurnsOf(tos []netip.AddrPort) []int {
	out := make([]int, len(tos))
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	for i, to := range tos {
		out[i] = a.stream.joinTurns[slotKey(to)]
	}
	return out
}

// pruneJoinTurns forgets the counts of streams (takeJoinSlot) of the
// seeds not in keep, the addresses of the Join calls waiting, with no
// stream open. Agent goroutine.
func (a *Agent) pruneJoinTurns(keep []string) {
	set := make(map[netip.AddrPort]bool, len(keep))
	for _, s := range keep {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			set[slotKey(ap)] = true
		}
	}
	a.stream.outMu.Lock()
	defer a.stream.outMu.Unlock()
	for addr := range a.stream.joinTurns {
		if !set[addr] && a.stream.joinTo[addr] == nil {
			delete(a.stream.joinTurns, addr)
		}
	}
}
