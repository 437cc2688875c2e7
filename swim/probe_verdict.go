// A failed probe's verdict: the detector gate, suspicion and its retry.

package swim

import (
	"math"
	"slices"
	"time"
)

// detectorSuspects reports whether p's failure detector has an opinion and
// it is suspicion. A detector that has heard nothing from p, or is still
// warming up (detector.Detector.WarmingUp: its τ rests on too few
// inter-arrival times), has none: in a group of n members a member hears a
// given peer only about every (n−1)/2 periods, and a detector on its
// bootstrap or on two or three intervals then suspects healthy peers (half
// of them 20 s after a group of 32 formed, in swim/sim).
//
// late is the host's lateness (Member.SetHostLateness): the detector is
// asked about now − late, so that a freshness point passed by no more than
// the host's own lateness is not held against p.
func detectorSuspects(p *peer, now, late time.Duration) bool {
	at := now - late
	if at > now {
		at = math.MinInt64 // saturate
	}
	return p.det != nil && !p.det.WarmingUp() && p.det.Suspected(at)
}

// gated reports whether the detector gate defers a first failure of the
// alive peer t (see failProbe). An unverified peer (verify.go) is never
// gated: the gate spares members this member has heard from a false
// suspicion, and a retry of one never heard from would take a second
// probe turn from the known members (a forged one's detector holds only
// the heartbeat of the gossip that announced it). One heard from at its
// address gets its retry from its ledger instead (receipt.go), charged to
// the probe budget of unverified members (nextTarget).
func (m *Member) gated(t *peer, now time.Duration) bool {
	return m.cfg.Mode == ModeDetector && !m.cfg.DisableSuspicionGate && t.verified && !t.retried && t.det != nil && !detectorSuspects(t, now, m.health.hostLateness)
}

// failProbe ends a period whose probe got no ack.
func (m *Member) failProbe(now time.Duration) {
	if m.pr.streamAcked {
		m.endStreamOnly(now)
		return
	}
	m.pr.active = false
	m.stats.ProbesFailed++
	t := m.pr.target
	if t.node.Addr != m.pr.addr {
		// t moved while probed (readdress: it restarted elsewhere, or
		// gossip moved it): the silence was its old address's, and says
		// nothing of t where it is now, nor of this member's health. Not
		// verified there, t would be suspected, not told (no push), and
		// not probed again while suspect.
		return
	}
	switch {
	case !t.verified:
		// A member never heard from that does not answer says nothing
		// of this member's health: it may never have existed, and its
		// relays, with no round trip of it to go by, nack late.
	case m.pr.expectNacks > 0:
		m.probeVerdict(max(m.pr.expectNacks-m.pr.nacks, 0))
	default:
		m.probeVerdict(1)
	}
	if t.state != StateAlive && t.state != StateSuspect {
		return
	}
	if t.state == StateSuspect && t.susp.hearsay {
		// This member's timer from hearsay (suspectInstead) is now its
		// own evidence too: its suspicion as if its probe had started
		// it, gossiped, at the timer already running.
		t.susp.hearsay = false
		m.stats.Suspicions++
		m.ownSuspicion(t)
		return
	}
	if t.state == StateSuspect {
		if t.susp.confirm(now, m.self.ID) && len(t.susp.confirmers) <= t.susp.k {
			u := Update{Kind: UpdateSuspect, Node: t.node, Incarnation: t.inc, From: m.self.ID}
			m.enqueue(u)
			m.push(u, m.suspecters(t), m.cfg.GossipFanout)
		}
		return
	}
	// An unverified member heard from at its address gets one more probe,
	// at once, when its ledger pays for the ping (receipt.go): a real
	// joiner's lost ping or ack is not a suspicion, and a ghost's
	// spoofed packets pay for its retry as for its challenge.
	if !t.verified && !t.retried && t.direct {
		if _, bytes := m.bareNoncePing(t); pays(t, bytes) {
			t.retried = true
			m.probing.forceNext = t
			m.stats.UnverifiedRetries++
			return
		}
	}
	// The gate re-checks a first failure once, at once and over every path,
	// unless t's detector has an opinion and it is suspicion, or t's port
	// refused the stream ping (refused: its process is gone, not paused).
	// That holds when every intermediate nacked too: the retry costs about
	// a relay's probe timeout on a crash, and a member paused or cut off
	// for just longer than the suspicion timeout is declared less often
	// (docs/experiments.md, “The detector gate, warm-up and the retry”).
	// A peer never heard from (no detector) is not gated.
	if m.gated(t, now) && !m.refused(t) {
		t.retried = true
		m.probing.forceNext = t
		f := &m.probing.failed
		f.ok, f.seq, f.sent, f.asked = true, m.pr.seq, m.pr.sent, f.asked[:0]
		for _, a := range m.probing.asked {
			f.asked = append(f.asked, a.id)
		}
		m.stats.GateDeferrals++
		return
	}
	m.stats.Suspicions++
	m.startSuspicion(now, t, m.self.ID)
	m.ownSuspicion(t)
}

// ownSuspicion gossips this member's own suspicion of t, from its failed
// probe, and sends it to t at once.
func (m *Member) ownSuspicion(t *peer) {
	u := Update{Kind: UpdateSuspect, Node: t.node, Incarnation: t.inc, From: m.self.ID}
	m.enqueue(u)
	if t.verified {
		// The suspect hears it at once and can refute. One not verified
		// hears it with the notice of any packet from the members that
		// verified it (send), this member's too once it probes this
		// member: it is suspected on one or two lost pings (the retry
		// its ledger pays for, above), with no ping-reqs (sendPingReqs),
		// and is not probed again while suspect (nextTarget); a ghost at
		// a victim's address drew the push there from every member.
		m.push(u, []*peer{t}, 0)
	}
}

// answersProbe reports whether an ack numbered seq from from answers the
// current probe, and when the ping it answers left: an ack of the probe's
// ping from its target or from a member asked to relay it (ping-req), or,
// in the gate's retry, a late one of the failed first probe's ping, from
// the target or from one of that probe's intermediates (probe.first): the
// retry re-checks the same failure, and an answer to either ping shows
// the target alive.
func (m *Member) answersProbe(from ID, seq uint32) (bool, time.Duration) {
	if !m.pr.active {
		return false, 0
	}
	target := from == m.pr.target.node.ID
	if seq == m.pr.seq {
		return target || m.pr.indirect && slices.ContainsFunc(m.probing.asked, func(a asked) bool { return a.id == from }), m.pr.sent
	}
	if f := &m.pr.first; f.ok && seq == f.seq {
		return target || slices.Contains(f.asked, from), f.sent
	}
	return false, 0
}

// onAck takes an ack of the current probe, or of a ping this member
// relays. An ack from another host than the one its sender is held at
// (StepFromOtherSource; a transport passes an ack from the same IP
// address and another port to Step) answers no probe and completes no
// relay (Stats.AcksFromOtherHost). A probe's number is predictable (the
// round, probeorder.go), so anyone who learns the round from the probes
// it receives could answer for a crashed member from its own socket, and
// did: an insider's acks sent in a crashed member's name kept it alive
// at every member for as long as it sent them (issue 27, user38 F1).
// Before, such an ack answered the probe and verified no member
// (verify.go): it had verified members announced at another host's
// address, which answered for them from its own, beyond the unverified
// quota. A relayed ack comes from the intermediate, from its own address.
func (m *Member) onAck(in *inbound, from Node, pkt *Packet) {
	now := in.now
	if in.otherSource {
		m.stats.AcksFromOtherHost++
		return
	}
	seq := pkt.Ack.Seq
	if ok, sent := m.answersProbe(pkt.From.ID, seq); ok {
		t := m.pr.target
		if pkt.From.ID == t.node.ID {
			t.answered = true
			if !m.pr.silent && !m.pr.older { // else the ping answered may have left before the probe
				m.observeRTT(t, now-sent)
				if m.cfg.PingComplete != nil {
					m.cfg.PingComplete(t.node, now-sent, pkt.AckPayload)
				}
			}
			if m.pr.nonce && seq == m.pr.seq && t.node.Addr == m.pr.addr && from.Addr == m.pr.addr {
				m.verify(t) // it received the nonce at its address (receipt.go)
			}
		} else {
			m.heard(now, t) // relayed: evidence that t is alive
			m.verify(t)     // the intermediate vouches for t
		}
		m.pr.active = false
		t.retried = false
		m.probeVerdict(-1)
		m.acked(now)
		return
	}
	if s := m.peers[pkt.From.ID]; s != nil && s.chal != 0 && s.chal == seq && s.node.Addr == from.Addr {
		m.challengeAcked(s)
		return
	}
	m.relayAck(in, pkt)
}

// ackPayload is the payload of an ack this member sends in answer to a
// ping (Config.AckPayload): nil without one, or when it is too large.
func (m *Member) ackPayload() []byte {
	if m.cfg.AckPayload == nil {
		return nil
	}
	b := m.cfg.AckPayload()
	if len(b) > MaxAckPayloadLen {
		m.stats.AckPayloadsTooLarge++
		return nil
	}
	return b
}

// onNack counts a nack for the current probe once per intermediate that was
// asked for one: a duplicated nack, or one from anybody else, must not make
// a failed probe look healthier than it was.
func (m *Member) onNack(now time.Duration, pkt *Packet) {
	if !m.pr.active || !m.pr.indirect || m.pr.expectNacks == 0 || pkt.Nack.Seq != m.pr.seq {
		return
	}
	for i := range m.probing.asked {
		if a := &m.probing.asked[i]; a.id == pkt.From.ID && !a.nacked {
			a.nacked = true
			m.pr.nacks++
			m.pathsDone(now)
			return
		}
	}
}

// pathsDone ends the current probe before the end of its period once
// every path has failed (every intermediate asked nacked; for the gate's
// retry, the stream fallback, if asked, failed too) and the least direct
// wait has passed, in three cases:
//
//   - the detector gate's retry: it suspects;
//   - a first probe the gate would retry, with evidence of death (its
//     stream ping refused or reset, refused: nothing listens on the
//     target's port, as when its process died): it suspects, without a
//     retry. The retry spares a member that is paused (its kernel accepts
//     the connection), cut off or on a host gone down (nothing answers)
//     a false suspicion; one whose port refuses is none of these, and a
//     retry would only send the ping, the ping-reqs, the relayed pings,
//     their nacks and a stream ping again (bench/memberlist's kills of a
//     process at N = 8, docs/experiments.md, “SWIM: no gate's retry after
//     a refused stream ping”);
//   - a first probe the gate will retry, without evidence (no stream
//     ping, or one still waiting, as for a paused process, a host that
//     went down or a hung process; or a member heard from after refusing
//     a stream ping before, peer.noStream: one that runs without a stream
//     listener refuses every stream ping, dead or alive): the retry starts
//     at once and runs in what is left of the failed probe's period, and
//     gives its verdict at that period's end (probe.holdUntil; later only
//     by what is left of the retry's own direct probe timeout,
//     startProbe), or as soon as its own stream ping is refused: the
//     re-check over every path costs no time beyond the period, where
//     memberlist suspects too.
//
// The least direct wait, from the ping, is the probe timeout and at least
// the peer's own RTT estimate, or ProbeTimeout before its first sample
// (failTimeout), times LHM+1: intermediates close to the target may nack
// before this member's ack could arrive from farther away. Before it the
// probe waits (failWait) and Tick comes back then. A probe whose stream
// ping was answered is a stream-only success and not ended here; a first
// probe whose stream ping is still waiting is ended here only for the
// retry, whose own stream ping then waits.
func (m *Member) pathsDone(now time.Duration) {
	m.pr.failWait = false // set again below while the wait holds
	if !m.pr.active || !m.pr.indirect || m.pr.streamAcked {
		return
	}
	t := m.pr.target
	evidence := m.refused(t)
	nacked := m.pr.expectNacks > 0 && m.pr.nacks >= m.pr.expectNacks
	if !nacked {
		return
	}
	if m.pr.retry && m.streamPending() {
		return
	}
	if !m.pr.retry && (t.state != StateAlive || !m.gated(t, now)) {
		return
	}
	at := max(m.pr.timeoutAt, m.pr.sent+m.failTimeout(t)*time.Duration(m.health.multiplier+1))
	if !evidence {
		at = max(at, m.pr.holdUntil)
	}
	if now < at {
		m.pr.failWait, m.pr.failAt = true, at
		return
	}
	if m.pr.retry || evidence {
		// Every path failed twice, or once with the stream refused:
		// failProbe suspects now, without a retry.
		m.failProbe(now)
		return
	}
	if now >= m.pr.endAt {
		return // a late Tick: the period's end starts the retry (failProbe)
	}
	m.probing.retryEnd = m.pr.endAt // the retry within this period
	m.failProbe(now)                // the gate defers it (forceNext)
	m.startProbe(now)               // and the retry starts now
}

// refused reports whether the current probe's stream ping to t was
// refused or reset before its deadline and t is not known to live without
// accepting streams (peer.noStream): evidence that nothing listens on t's
// port, as when its process died. A paused process's kernel still accepts
// the connection, and a host that is down or cut off answers nothing, so
// the gate's retry, which spares such members a false suspicion, would
// re-check a death already shown (failProbe, pathsDone).
func (m *Member) refused(t *peer) bool {
	return m.pr.streamRefused && !t.noStream
}

// isolated runs in a protocol period with no member to probe while some
// are believed dead: this member was cut off, or declared everyone dead
// while it could not hear them (its probes blocked, a partition), and the
// others may have declared it dead in turn. Then nobody probes anybody
// across, and the reconnect ping (one random dead member per
// ReconnectInterval) is the only way back, slower the more dead members the
// view holds. An isolated member instead asks one random dead member it
// verified for its view (a MsgJoin carrying its Alive; verifiedDead, as
// for the reconnect ping: a ghost held dead drew the request to the
// victim's address it was announced at, and diluted the real members'):
// a live receiver answers with its view, and sends back the Dead it holds
// about this member (accuseBack), which this member refutes. Off with
// ReconnectInterval.
//
// The requests back off: the first one period after the last, then
// doubling up to ReconnectInterval, until a probe of this member's is
// acked again (acked). A member whose datagrams are lost while views pass
// (UDP blocked, TCP open) stays isolated however many views it gets: each
// answer makes it refute and rejoin, and the group declares it dead again
// a suspicion timeout later. The back-off bounds those rejoins, and the
// whole views answerers send, to about log2(ReconnectInterval/ProbeInterval)
// in the first ReconnectInterval and one per ReconnectInterval after, the
// rate of the reconnect ping it stands in for.
func (m *Member) isolated(now time.Duration) {
	if m.st != running || len(m.tomb) == 0 || m.cfg.ReconnectInterval == 0 || now < m.probing.isoNext {
		return
	}
	to := m.verifiedDead()
	if to == nil {
		return
	}
	gap := max(m.probing.isoGap, m.cfg.ProbeInterval)
	m.probing.isoNext, m.probing.isoGap = now+gap, min(2*gap, m.cfg.ReconnectInterval)
	m.stats.ViewRequests++
	m.askView(to.node)
}

// acked notes at now that a probe of this member's was answered: its
// datagrams pass, so its own verdicts from then on rest on evidence
// (viewUpdate), and an isolated member's view requests start again from
// one period (isolated).
func (m *Member) acked(now time.Duration) {
	m.probing.lastAck = now
	m.probing.isoNext, m.probing.isoGap = 0, 0
}
