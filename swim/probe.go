package swim

import (
	"math"
	"slices"
	"time"
)

// Probing (SWIM §3.1, §4.3): one member probed per protocol period, in a
// round-robin over a shuffled list; a direct ping, ping-reqs to k
// intermediates after the probe timeout, the relays this member runs for
// others' ping-reqs, and Lifeguard's nacks.

// probe is the state of the current protocol period's probe.
type probe struct {
	active      bool
	target      *peer
	seq         uint32
	sent        time.Duration
	timeoutAt   time.Duration
	endAt       time.Duration
	indirect    bool
	expectNacks int
	nacks       int
	retry       bool // the detector gate's retry: indirect at once, ends on all nacks
	// failWait: every path has failed before the least direct wait; the
	// probe ends at failAt (pathsDone).
	failWait bool
	failAt   time.Duration
	// stream: a StreamProbe was requested (stream.go); streamAcked and
	// streamFailed: the caller's answer.
	stream, streamAcked, streamFailed bool
	// holdUntil: a gate's retry started within the failed probe's period
	// without evidence of death gives no verdict before this instant, the
	// end of that period (pathsDone).
	holdUntil time.Duration
}

// relay is an indirect ping sent on behalf of a PingReq.
type relay struct {
	seq       uint32
	origin    Node
	originSeq uint32
	target    ID
	sent      time.Duration
	deadline  time.Duration
	nack      bool
}

// asked is an intermediate of the current probe's ping-reqs and whether its
// nack arrived.
type asked struct {
	id     ID
	nacked bool
}

// probeTimeout returns the direct probe timeout for p: baseProbeTimeout
// times LHM+1.
func (m *Member) probeTimeout(p *peer) time.Duration {
	return m.baseProbeTimeout(p) * time.Duration(m.lhm+1)
}

// baseProbeTimeout returns, in ModeDetector, the clamped RTT-estimator
// timeout for p once p's estimator has a sample, else that of the
// group-wide estimator (every direct ack of every peer) once it has one,
// else ProbeTimeout. The group-wide prior matters because a member has not
// yet acked most of a group of n itself for about n periods: with
// ProbeTimeout for each of them, its first probes would send their
// ping-reqs late. The prior is a smoothed mean over whichever
// peers acked lately, not a bound on any one peer's round trip: in a group
// of near and far peers it sits near the near ones' (at the floor) while a
// far peer's ack takes longer. It therefore only sets when a first probe's
// ping-reqs go out; the timeouts that decide a failure, a relay's before
// its nack and the gate's retry's, use failTimeout.
func (m *Member) baseProbeTimeout(p *peer) time.Duration {
	if t, ok := m.rttTimeout(p, true); ok {
		return t
	}
	return m.cfg.ProbeTimeout
}

// failTimeout returns the clamped timeout of p's own RTT estimator in
// ModeDetector once it has a sample, else ProbeTimeout: how long a relay
// waits for p before its nack, and the least time the gate's retry waits
// for p's direct ack (before LHM scaling). A ping-req relay waits this
// long, unscaled by this member's own LHM (as memberlist's relay waits its
// configured ProbeTimeout): a relay's nack must reach the requester within
// the requester's period, and a late nack would count against the
// requester's health for this member's slowness.
func (m *Member) failTimeout(p *peer) time.Duration {
	if t, ok := m.rttTimeout(p, false); ok {
		return t
	}
	return m.cfg.ProbeTimeout
}

// rttTimeout returns the clamped RTT-derived timeout for p in ModeDetector:
// p's own estimator's, else with prior the group-wide estimator's; ok is
// false when there is none.
func (m *Member) rttTimeout(p *peer, prior bool) (time.Duration, bool) {
	if m.cfg.Mode != ModeDetector || m.cfg.DisableRTTTimeout {
		return 0, false
	}
	es := [2]RTTEstimator{}
	if p != nil && p.rtt != nil {
		es[0] = p.rtt
	}
	if prior {
		es[1] = m.rttAll
	}
	for _, e := range es {
		if e == nil {
			continue
		}
		if t, ok := e.Timeout(); ok {
			return min(max(t, *m.cfg.MinProbeTimeout), m.cfg.MaxProbeTimeout), true
		}
	}
	return 0, false
}

// ProbeTimeout returns the direct probe timeout this member would use for
// the member id now (see Config.Mode); ok is false for an unknown id.
func (m *Member) ProbeTimeout(id ID) (time.Duration, bool) {
	p := m.peers[id]
	if p == nil {
		return 0, false
	}
	return m.probeTimeout(p), true
}

func (m *Member) insertInList(p *peer) {
	if p.inList {
		return
	}
	pos := m.rng.IntN(len(m.list) + 1)
	m.list = slices.Insert(m.list, pos, p)
	if pos < m.idx {
		m.idx++
	}
	p.inList = true
}

// nextTarget returns the next member to probe: a target the detector gate
// asked to retry, else the next live member of the round-robin list,
// reshuffling (and dropping dead members) at the end of each pass. An
// unverified member is taken only while the probe budget allows (one probe
// in unverifiedCost, see verify.go) and skipped otherwise, to be probed on
// a later pass; with no verified member to probe, the first one skipped.
func (m *Member) nextTarget() *peer {
	if t := m.forceNext; t != nil {
		m.forceNext = nil
		if t.state == StateAlive || t.state == StateSuspect {
			return t
		}
	}
	m.uTokens = min(m.uTokens+1, unverifiedCost)
	var skipped *peer
	for pass := 0; pass < 2; pass++ {
		for m.idx < len(m.list) {
			p := m.list[m.idx]
			m.idx++
			if p.state != StateAlive && p.state != StateSuspect {
				continue
			}
			if p.verified {
				return p
			}
			if m.uTokens >= unverifiedCost {
				m.uTokens -= unverifiedCost
				return p
			}
			if skipped == nil {
				skipped = p
			}
		}
		kept := m.list[:0]
		for _, p := range m.list {
			if p.state == StateAlive || p.state == StateSuspect {
				kept = append(kept, p)
			} else {
				p.inList = false
			}
		}
		clear(m.list[len(kept):])
		m.list = kept
		m.rng.Shuffle(len(m.list), func(i, j int) { m.list[i], m.list[j] = m.list[j], m.list[i] })
		m.idx = 0
		if len(m.list) == 0 {
			return nil
		}
	}
	return skipped
}

func (m *Member) startProbe(now time.Duration) {
	m.nextProbe = now + m.period()
	hold := m.retryEnd
	if hold > 0 {
		// The gate's retry within the failed probe's period (pathsDone).
		m.nextProbe, m.retryEnd = hold, 0
	}
	m.forwarded = 0 // a new period: a new budget of forwarded gossip
	if *m.cfg.GossipInterval == 0 {
		m.gossipDeaths() // the drain loop (drainQueue) gossips them otherwise
	}
	retry := m.forceNext != nil
	t := m.nextTarget()
	if t == nil {
		m.isolated(now)
		return
	}
	m.seq++
	m.pr = probe{active: true, target: t, seq: m.seq, sent: now,
		timeoutAt: now + m.probeTimeout(t), endAt: m.nextProbe, retry: retry && t.retried}
	if m.pr.retry && hold > 0 {
		// Within the failed probe's period, but never shorter than the
		// retry's own least direct wait (pathsDone).
		m.pr.holdUntil = hold
		m.pr.endAt = max(hold, m.pr.timeoutAt, now+m.failTimeout(t)*time.Duration(m.lhm+1))
		m.nextProbe = m.pr.endAt
	}
	m.stats.ProbesStarted++
	m.send(Packet{Kind: MsgPing, To: t.node, Ping: Ping{Seq: m.seq}})
	if m.pr.retry {
		// The gate's retry re-checks a failure already seen: the direct
		// and indirect paths at once, and the verdict once every
		// path has failed and the least direct wait has passed (pathsDone),
		// not a period later.
		m.sendPingReqs()
	}
}

// sendPingReqs asks up to k random alive members to probe the target:
// first among members that answered this member's own pings, then among
// the others if fewer than k did. A member known only from others' word
// may not exist (a forged Alive, a flood of fake IDs): it relays nothing,
// and its missing nack would count against this member's local health
// (docs/algorithms.md, “SWIM probes and ping-req”).
func (m *Member) sendPingReqs() {
	m.pr.indirect = true
	t := m.pr.target
	k := *m.cfg.IndirectChecks
	chosen := m.pickKnown(k, func(p *peer) bool { return p != t && p.state == StateAlive && p.answered })
	if len(chosen) < k {
		// Relays are verified members only (an answered one is): one
		// never heard from may not exist and never nack.
		chosen = append(chosen, m.pickKnown(k-len(chosen), func(p *peer) bool {
			return p != t && p.state == StateAlive && !p.answered && p.verified
		})...)
	}
	nack := m.cfg.Mode != ModeSWIM
	m.asked = m.asked[:0]
	for _, p := range chosen {
		m.stats.PingReqsSent++
		if nack {
			m.asked = append(m.asked, asked{id: p.node.ID})
		}
		m.send(Packet{Kind: MsgPingReq, To: p.node, PingReq: PingReq{Seq: m.pr.seq, Target: t.node, Nack: nack}})
	}
	if nack {
		m.pr.expectNacks = len(chosen)
	}
	m.requestStreamProbe()
}

// pick returns up to k distinct random members of the probe list for which
// ok is true (pickInto).
func (m *Member) pick(k int, ok func(p *peer) bool) []*peer {
	return m.pickInto(nil, k, ok, false)
}

// pickKnown is pick preferring verified members (verify.go): all k among
// them while there are enough, the rest among all. Relays of a ping-req
// and the receivers of an accusation are then members heard from, however
// many others the view was told of: a relay never heard from may not exist
// and send no nack (Lifeguard counts the missing nack against this
// member's health), and the confirmations that shorten a Lifeguard
// suspicion come from members that probe the suspect.
func (m *Member) pickKnown(k int, ok func(p *peer) bool) []*peer {
	if m.unverified == 0 {
		return m.pick(k, ok)
	}
	chosen := m.pickInto(nil, k, func(p *peer) bool { return p.verified && ok(p) }, m.unverified >= len(m.list)/2)
	return m.pickInto(chosen, k-len(chosen), ok, false)
}

// pickInto appends to chosen up to k more distinct random members of the
// probe list for which ok is true: a uniform choice among all of them in a
// small list (at most 4k) or with scan (the members ok accepts may be a few
// among thousands), else up to 8k random draws. A k above the list's
// length (a huge GossipFanout or IndirectChecks) counts as the length,
// which picks the same and keeps 4k and 8k from overflowing.
func (m *Member) pickInto(chosen []*peer, k int, ok func(p *peer) bool, scan bool) []*peer {
	k = min(k, len(m.list))
	okNew := func(p *peer) bool { return ok(p) && !slices.Contains(chosen, p) }
	want := len(chosen) + k
	if len(m.list) <= 4*k || scan {
		cand := make([]*peer, 0, len(m.list))
		for _, p := range m.list {
			if okNew(p) {
				cand = append(cand, p)
			}
		}
		for len(chosen) < want && len(cand) > 0 {
			i := m.rng.IntN(len(cand))
			chosen = append(chosen, cand[i])
			cand[i] = cand[len(cand)-1]
			cand = cand[:len(cand)-1]
		}
	} else {
		for tries := 0; len(chosen) < want && tries < 8*k; tries++ {
			if p := m.list[m.rng.IntN(len(m.list))]; okNew(p) {
				chosen = append(chosen, p)
			}
		}
	}
	return chosen
}

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
// alive peer t (see failProbe).
func (m *Member) gated(t *peer, now time.Duration) bool {
	return m.cfg.Mode == ModeDetector && !m.cfg.DisableSuspicionGate && !t.retried && t.det != nil && !detectorSuspects(t, now, m.hostLate)
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
	switch {
	case !t.verified:
		// A member never heard from that does not answer says nothing
		// of this member's health: it may never have existed, and its
		// relays, with no round trip of it to go by, nack late.
	case m.pr.expectNacks > 0:
		m.adjustHealth(max(m.pr.expectNacks-m.pr.nacks, 0))
	default:
		m.adjustHealth(1)
	}
	if t.state != StateAlive && t.state != StateSuspect {
		return
	}
	if t.state == StateSuspect {
		if t.susp.confirm(now, m.self.ID) && len(t.susp.confirmers) <= t.susp.k {
			u := Update{Kind: UpdateSuspect, Node: t.node, Incarnation: t.inc, From: m.self.ID}
			m.enqueue(u)
			m.push(u, m.suspecters(t), *m.cfg.GossipFanout)
		}
		return
	}
	// The gate re-checks a first failure once, at once and over every path,
	// unless t's detector has an opinion and it is suspicion. That holds
	// when every intermediate nacked too: the retry costs about a relay's
	// probe timeout on a crash, and a member paused or cut off for just
	// longer than the suspicion timeout is declared less often
	// (docs/experiments.md, “The detector gate, warm-up and the retry”).
	// A peer never heard from (no detector) is not gated.
	if m.gated(t, now) {
		t.retried = true
		m.forceNext = t
		m.stats.GateDeferrals++
		return
	}
	m.stats.Suspicions++
	m.startSuspicion(now, t, m.self.ID)
	u := Update{Kind: UpdateSuspect, Node: t.node, Incarnation: t.inc, From: m.self.ID}
	m.enqueue(u)
	m.push(u, []*peer{t}, 0) // the suspect hears it at once and can refute
}

func (m *Member) tickRelays(now time.Duration) {
	kept := m.relays[:0]
	for _, r := range m.relays {
		if now < r.deadline {
			kept = append(kept, r)
			continue
		}
		if r.nack {
			m.stats.NacksSent++
			m.send(Packet{Kind: MsgNack, To: r.origin, Nack: Nack{Seq: r.originSeq}})
		}
	}
	m.relays = kept
}

func (m *Member) onAck(now time.Duration, pkt *Packet) {
	seq := pkt.Ack.Seq
	if m.pr.active && seq == m.pr.seq {
		t := m.pr.target
		if pkt.From.ID == t.node.ID {
			t.answered = true
			m.observeRTT(t, now-m.pr.sent)
			if m.cfg.PingComplete != nil {
				m.cfg.PingComplete(t.node, now-m.pr.sent, pkt.AckPayload)
			}
		} else {
			m.heard(now, t) // relayed: evidence that t is alive
		}
		m.verify(t) // a relayed ack: the intermediate vouches for t
		m.pr.active = false
		t.retried = false
		m.adjustHealth(-1)
		m.acked(now)
		return
	}
	for i, r := range m.relays {
		if r.seq != seq {
			continue
		}
		if p := m.peers[r.target]; p != nil && p.node.ID == pkt.From.ID {
			p.answered = true
			m.observeRTT(p, now-r.sent)
			m.verify(p)
		}
		m.send(Packet{Kind: MsgAck, To: r.origin, Ack: Ack{Seq: r.originSeq}})
		m.relays = slices.Delete(m.relays, i, i+1)
		return
	}
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
	if !m.pr.active || !m.pr.indirect || pkt.Nack.Seq != m.pr.seq {
		return
	}
	for i := range m.asked {
		if a := &m.asked[i]; a.id == pkt.From.ID && !a.nacked {
			a.nacked = true
			m.pr.nacks++
			m.pathsDone(now)
			return
		}
	}
}

// pathsDone ends the current probe before the end of its period once
// every path has failed (every intermediate asked nacked; the stream
// fallback, if asked, failed; for a first probe with evidence of death,
// the stream fallback alone) and the least direct wait has passed, in two
// cases. The detector gate's retry then suspects. A first probe the gate
// will retry starts the retry at once, in two ways:
//
//   - with evidence of death, its stream ping refused or reset (nothing
//     listens there, as when the process died), the retry is a new
//     period, started at once, without waiting for the intermediates'
//     nacks or the least direct wait (the retry asks intermediates again,
//     and its own verdict waits the least direct wait), whose verdict
//     comes as soon as every path failed again, so that the retry adds
//     little to the detection of a dead process;
//   - without it (no stream ping, or one still waiting, as for a paused
//     process whose kernel accepted the connection, a host that went down
//     or a hung process; or a member heard from after refusing a stream
//     ping before, peer.noStream: one that runs without a stream listener
//     refuses every stream ping, dead or alive), the retry runs in what
//     is left of the failed probe's period and gives its verdict at that
//     period's end (probe.holdUntil), or as soon as its own stream ping
//     is refused: the re-check over every path costs no time beyond the
//     period, where memberlist suspects too.
//
// The least direct wait, from the ping, is the probe timeout and at least
// the peer's own RTT estimate, or ProbeTimeout before its first sample
// (failTimeout), times LHM+1: intermediates close to the target may nack
// before this member's ack could arrive from farther away. Before it the
// probe waits (failWait) and Tick comes back then. A probe whose stream
// ping was answered is a stream-only success and not ended here; a first
// probe whose stream ping is still waiting is ended here only for the
// retry without evidence, whose own stream ping then waits.
func (m *Member) pathsDone(now time.Duration) {
	m.pr.failWait = false // set again below while the wait holds
	if !m.pr.active || !m.pr.indirect || m.pr.streamAcked {
		return
	}
	t := m.pr.target
	evidence := m.pr.streamFailed && !t.noStream
	nacked := m.pr.expectNacks > 0 && m.pr.nacks >= m.pr.expectNacks
	early := !m.pr.retry && evidence // the retry need not wait for these nacks
	if !nacked && !early {
		return
	}
	if m.pr.retry && m.streamPending() {
		return
	}
	if !m.pr.retry && (t.state != StateAlive || !m.gated(t, now)) {
		return
	}
	at := max(m.pr.timeoutAt, m.pr.sent+m.failTimeout(t)*time.Duration(m.lhm+1))
	if early {
		// The retry keeps the least direct wait for its own verdict, and
		// its ping is answered as this probe's would be.
		at = m.pr.timeoutAt
	}
	if !evidence {
		at = max(at, m.pr.holdUntil)
	}
	if now < at {
		m.pr.failWait, m.pr.failAt = true, at
		return
	}
	if m.pr.retry {
		m.failProbe(now) // every path failed twice: suspect now
		return
	}
	if !evidence {
		if now >= m.pr.endAt {
			return // a late Tick: the period's end starts the retry (failProbe)
		}
		m.retryEnd = m.pr.endAt // the retry within this period
	}
	if !nacked {
		// Not waited for, so not missed: no local health penalty
		// (failProbe); the retry asks intermediates again.
		m.pr.nacks = m.pr.expectNacks
	}
	m.failProbe(now)  // the gate defers it (forceNext)
	m.startProbe(now) // and the retry starts now
}

// onPingReq serves a ping-req from the member at origin (pkt.From, its
// address filled from the view when the packet left it out) for target
// (pkt.PingReq.Target, likewise).
func (m *Member) onPingReq(now time.Duration, pkt *Packet, origin, t Node) {
	if t.ID == m.self.ID {
		m.send(Packet{Kind: MsgAck, To: origin, Ack: Ack{Seq: pkt.PingReq.Seq}})
		return
	}
	p := m.peers[t.ID]
	m.seq++
	// The ping carries p's suspicion if this member suspects it (send).
	m.relays = append(m.relays, relay{seq: m.seq, origin: origin, originSeq: pkt.PingReq.Seq,
		target: t.ID, sent: now, deadline: now + m.failTimeout(p), nack: pkt.PingReq.Nack})
	seq := m.seq
	m.send(Packet{Kind: MsgPing, To: t, Ping: Ping{Seq: seq}})
}

// isolated runs in a protocol period with no member to probe while some
// are believed dead: this member was cut off, or declared everyone dead
// while it could not hear them (its probes blocked, a partition), and the
// others may have declared it dead in turn. Then nobody probes anybody
// across, and the reconnect ping (one random dead member per
// ReconnectInterval) is the only way back, slower the more dead members the
// view holds. An isolated member instead asks one random dead member for
// its view (a MsgJoin carrying its Alive): a live receiver answers with its
// view, and sends back the Dead it holds about this member (accuseBack),
// which this member refutes. Off with ReconnectInterval.
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
	if m.st != running || len(m.tomb) == 0 || *m.cfg.ReconnectInterval == 0 || now < m.isoNext {
		return
	}
	gap := max(m.isoGap, m.cfg.ProbeInterval)
	m.isoNext, m.isoGap = now+gap, min(2*gap, *m.cfg.ReconnectInterval)
	m.stats.ViewRequests++
	m.askView(m.tomb[m.rng.IntN(len(m.tomb))].node)
}

// acked notes at now that a probe of this member's was answered: its
// datagrams pass, so its own verdicts from then on rest on evidence
// (viewUpdate), and an isolated member's view requests start again from
// one period (isolated).
func (m *Member) acked(now time.Duration) {
	m.lastAck = now
	m.isoNext, m.isoGap = 0, 0
}
