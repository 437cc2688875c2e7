package swim

import (
	"time"
)

// Local health (Lifeguard's LHA-Probe): the local health multiplier that
// scales the protocol period and probe timeouts, and the reaction to a
// pause of this member itself (Config.PauseGuard).

// localPause reacts to a Tick far later than announced (see
// Config.PauseGuard).
func (m *Member) localPause(now time.Duration) {
	m.stats.LocalPauses++
	if m.st == running {
		m.inc = m.inc.Next()
		m.enqueue(m.selfAlive())
		m.announceAlive("", nil)
	}
	if m.pr.active && now >= m.pr.endAt {
		m.pr.active = false
	}
	kept := m.probing.relays[:0]
	for _, r := range m.probing.relays {
		if now < r.deadline {
			kept = append(kept, r)
		}
	}
	m.probing.relays = kept
	m.adjustHealth(1)
	m.health.graceUntil = now + m.cfg.ProbeInterval
}

// pauseDue is the earliest instant a Tick was due for the timers whose
// lateness reveals a pause of this member (Config.PauseGuard): the next
// probe, and each suspicion timer (not before the grace that holds it, nor
// before the confirmation that moved its deadline: Lifeguard's timeout is
// recomputed from the suspicion's start, so a late confirmation puts the
// deadline in the past without any Tick being late,
// TestPauseGuardIgnoresDeadlineShortenedIntoPast).
// The probe timer alone misses a pause that a long period hides: with the
// local health multiplier at 5 the period is 6 s, and a member paused
// 4.8 s just after a probe started resumes before its next probe is due,
// then declares dead, on its late Tick, a suspect whose refutation waits
// unread in its socket (TestPauseGuardSeesOverdueSuspicion).
func (m *Member) pauseDue() time.Duration {
	due := m.probing.next
	for _, p := range m.suspects {
		due = min(due, max(p.susp.deadline, p.susp.setAt, m.health.graceUntil))
	}
	return due
}

// period returns the current protocol period ProbeInterval·(LHM+1).
func (m *Member) period() time.Duration {
	return m.cfg.ProbeInterval * time.Duration(m.health.multiplier+1)
}

// chargeRefutation counts a refutation at now of an update of the given
// kind against the local health (Lifeguard §IV-A, LHA-Probe: +1 for
// refuting a suspect message about itself, which says that some member's
// probe of this one failed). held says that the accusing packet is that
// evidence: its sender was held alive or suspect at the address it claims
// and the transport received it from there (inbound.liveSender), or it is
// a part of the join seed's view (seedView). That covers Lifeguard's buddy
// system (the prober's ping carries its suspicion), gossip relayed by any
// live member (the accuser need not be the sender), and the seed's answer
// to a join; in a sealed group every member's packet from its own address
// is held too. An accusation from a sender not held (a stranger, a member
// held down, a packet naming a member but sent from elsewhere:
// StepFromOtherSource) is still refuted, and counted in
// Stats.RefutationsUncharged: a forger flooding Suspect or Dead updates
// by datagram kept the multiplier between 0 and 1 on every member it
// reached, and slowed their detection of a real crash up to 2.5× (issue
// 27, user43 F2). A suspicion and a declaration (Dead) are
// counted, as memberlist's refute does, at most one in the protocol period
// (of the length after the raise) that the last counted one began; the
// others, and every refuted Alive, are counted in
// Stats.RefutationsUncharged. A declaration is the suspicion run out, so
// it is the same evidence, not more of it. An Alive above the current
// incarnation accuses nobody: it is a previous life's or a forger's. A
// probe of this member fails at most once per probe of it, each prober
// probing once per period (with the ring order, one prober per round),
// and this member's successful probes lower the multiplier by one per
// period: more than one accusation refuted per period adds no evidence of
// slowness, and no honest group produces it (one refutation answers every
// accusation of the incarnation it leaves). Forged accusations at rising
// incarnations therefore raise the multiplier once per period at most
// (issue 27, F3; docs/algorithms.md, “Lifeguard local health”).
func (m *Member) chargeRefutation(now time.Duration, kind UpdateKind, held bool) {
	if m.cfg.Mode == ModeSWIM {
		return
	}
	if kind == UpdateAlive || !held || now < m.health.refuteUntil || m.health.refuteSpent {
		m.stats.RefutationsUncharged++
		return
	}
	m.adjustHealth(1)
	m.health.refuteUntil = now + m.period()
	m.health.refuteSpent = true
}

// probeVerdict applies a probe's verdict on this member's health: delta
// −1 for a success, the failure's raise otherwise. A success, or a failure
// that raised the multiplier, lets the next refutation count again
// (chargeRefutation): the multiplier comes down once per successful probe,
// so refutations counted at most once per such verdict cannot outnumber
// the decrements.
func (m *Member) probeVerdict(delta int) {
	m.adjustHealth(delta)
	if delta != 0 {
		m.health.refuteSpent = false
	}
}

func (m *Member) adjustHealth(delta int) {
	if m.cfg.Mode == ModeSWIM {
		return
	}
	m.health.multiplier = min(max(m.health.multiplier+delta, 0), m.cfg.MaxLocalHealthMultiplier-1)
}
