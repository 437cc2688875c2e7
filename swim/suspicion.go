package swim

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// suspicion is Lifeguard's dynamic suspicion timer (LHA-Suspicion,
// docs/algorithms.md, “Lifeguard suspicion timeout”) for one suspected member:
//
//	timeout(C) = max(Min, Max − (Max − Min)·log(C+1)/log(K+1))
//
// floored to the millisecond, C the number of independent confirmations
// received since the suspicion started (the first suspecter is not one).
// Plain SWIM uses Min = Max and K = 0.
type suspicion struct {
	start      time.Duration
	min, max   time.Duration
	k          int
	from       ID // who raised the suspicion first; not a confirmation
	confirmers []ID
	deadline   time.Duration
	// setAt is when deadline was last computed: a confirmation may put the
	// deadline in the past, and the timer is then due from setAt, not from
	// the deadline (the local-pause guard, pauseDue).
	setAt time.Duration
	// hearsay: the suspicion was made from hearsay or a view transfer
	// (suspectInstead), this member's timer but not its evidence: not
	// gossiped, until this member's own probe of the suspect fails
	// (failProbe).
	hearsay bool
}

func newSuspicion(now, minT, maxT time.Duration, k int, from ID) *suspicion {
	s := &suspicion{start: now, min: minT, max: maxT, k: k, from: from, setAt: now}
	s.deadline = now + s.timeout()
	return s
}

// timeout returns the suspicion timeout for the current confirmations.
func (s *suspicion) timeout() time.Duration {
	return suspicionTimeout(s.min, s.max, s.k, len(s.confirmers))
}

// suspicionTimeout is the LHA-Suspicion formula.
func suspicionTimeout(minT, maxT time.Duration, k, c int) time.Duration {
	if k < 1 || maxT <= minT {
		return minT
	}
	frac := math.Log(float64(c)+1) / math.Log(float64(k)+1)
	t := float64(maxT) - float64(maxT-minT)*frac
	to := time.Duration(math.Floor(t/float64(time.Millisecond))) * time.Millisecond
	return max(to, minT)
}

// maxConfirmers bounds the confirmations one suspicion records (see confirm).
const maxConfirmers = 1024

// confirm records an independent suspicion from id, heard at now. It
// reports whether id was new (not the first suspecter and not counted
// before); the deadline is then recomputed from the start with the new
// count, so the remaining time shrinks and may already be past (the timer
// is then due at now, setAt).
//
// At most maxConfirmers are recorded: past k they no longer shorten the
// timeout and serve only to tell the suspecters of a refutation at once
// (suspecters), so a member kept suspected cannot be made to grow the list,
// or the scan over it, without bound by updates from ever new sender ids.
func (s *suspicion) confirm(now time.Duration, id ID) bool {
	if id == s.from || len(s.confirmers) >= max(s.k, maxConfirmers) {
		return false
	}
	for _, c := range s.confirmers {
		if c == id {
			return false
		}
	}
	s.confirmers = append(s.confirmers, id)
	s.deadline = s.start + s.timeout()
	s.setAt = now
	return true
}

// suspicionMin returns Min = α·max(1, log10 n)·interval as memberlist
// computes it (the scale rounded down to 1/1000). The product is taken in
// 128 bits: in 64, α·1000·log10 n·interval overflowed for intervals above
// about 9 days at n = 1000, and a suspicion's deadline came out in the
// past. A Min above maxTimer (refused by New for n ≤ MaxMembers) is
// maxTimer.
func suspicionMin(alpha int, n int, interval time.Duration) time.Duration {
	scale := math.Max(1, math.Log10(math.Max(1, float64(n))))
	ahi, a := bits.Mul64(uint64(max(alpha, 0)), uint64(scale*1000))
	hi, lo := bits.Mul64(a, uint64(max(interval, 0)))
	if ahi != 0 || hi >= 1000 {
		return maxTimer
	}
	q, _ := bits.Div64(hi, lo, 1000)
	return time.Duration(min(q, uint64(maxTimer)))
}

// retransmitLimit returns λ·ceil(log10(n+1)), the number of times each
// update is piggybacked.
func retransmitLimit(lambda, n int) int {
	return lambda * int(math.Ceil(math.Log10(float64(n+1))))
}

func (m *Member) startSuspicion(now time.Duration, p *peer, from ID) {
	n := m.groupSize()
	minT := suspicionMin(m.cfg.SuspicionMult, n, m.cfg.ProbeInterval)
	maxT, k := minT, 0
	if m.cfg.Mode != ModeSWIM {
		maxT = mulTimer(minT, m.cfg.SuspicionMaxTimeoutMult)
		k = m.cfg.SuspicionConfirmations
		if n-2 < k {
			k = 0
		}
	}
	if p.state != StateSuspect {
		m.suspects = append(m.suspects, p)
	}
	p.state, p.since, p.retried = StateSuspect, now, false
	p.susp = newSuspicion(now, minT, maxT, k, from)
	m.emit(EventSuspect, p, from, now)
}

func (m *Member) tickSuspicions(now time.Duration) {
	if now < m.health.graceUntil {
		return
	}
	for i := 0; i < len(m.suspects); {
		p := m.suspects[i]
		if now < p.susp.deadline {
			i++
			continue
		}
		m.stats.Declarations++
		blind := m.probing.lastAck < p.susp.start
		u := Update{Kind: UpdateDead, Node: p.node, Incarnation: p.inc, From: m.self.ID}
		m.kill(now, p, u, true)
		p.blind = blind
		m.push(u, nil, m.cfg.GossipFanout)
		// kill removed p from m.suspects; i now holds the next one.
	}
}

func (m *Member) clearSuspicion(p *peer) {
	p.susp = nil
	if i := slices.Index(m.suspects, p); i >= 0 {
		m.suspects = slices.Delete(m.suspects, i, i+1)
	}
}
