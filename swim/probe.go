package swim

import (
	"slices"
	"time"
)

// Probing (SWIM §3.1, §4.3): one member probed per protocol period, in
// the order of probeorder.go; a direct ping, ping-reqs to k
// intermediates after the probe timeout, the relays this member runs for
// others' ping-reqs, and Lifeguard's nacks.

// probe is the state of the current protocol period's probe.
type probe struct {
	active bool
	target *peer
	addr   string // the target's address when the probe started
	seq    uint32
	nonce  bool // seq is a nonce: the target was not verified (receipt.go)
	// silent: no ping was sent, the target's ledger not paying for it;
	// older: seq, the target's outstanding nonce, went to it before (a
	// challenge, an earlier probe), and a late ack of that ping answers
	// this probe (receipt.go) with no round trip to measure.
	silent, older bool
	sent          time.Duration
	timeoutAt     time.Duration
	endAt         time.Duration
	indirect      bool
	expectNacks   int
	nacks         int
	retry         bool // the detector gate's retry: indirect at once, ends on all nacks
	// failWait: every path has failed before the least direct wait; the
	// probe ends at failAt (pathsDone).
	failWait bool
	failAt   time.Duration
	// stream: a StreamProbe was requested (stream.go); streamAcked and
	// streamFailed: the caller's answer; streamRefused: it failed before
	// its deadline (refused or reset: nothing listens on the target's
	// port).
	stream, streamAcked, streamFailed, streamRefused bool
	// holdUntil: a gate's retry started within the failed probe's period
	// without evidence of death gives no verdict before this instant, the
	// end of that period (pathsDone).
	holdUntil time.Duration
	// charged: the probe budget this probe of an unverified target took
	// (nextTarget), given back if the target answers (verify).
	charged int
	// first: for the gate's retry, the failed first probe, whose ack,
	// direct or relayed by one of its intermediates, still answers the
	// retry (answersProbe); first.ok is false otherwise.
	first firstProbe
}

// firstProbe is a failed first probe a gate's retry re-checks: its
// sequence number, when its ping left, and its intermediates.
type firstProbe struct {
	ok    bool
	seq   uint32
	sent  time.Duration
	asked []ID
}

// relay is an indirect ping sent on behalf of a PingReq.
type relay struct {
	seq    uint32
	origin Node
	// originHost is hostOf(origin.Addr), for maxRelaysPerHost.
	originHost string
	originSeq  uint32
	target     ID
	// addr is where the ping went; nonce: its seq was a nonce (the target
	// was not verified there), whose ack verifies it (receipt.go).
	addr     string
	nonce    bool
	sent     time.Duration
	deadline time.Duration
	nack     bool
	// vouched: the view vouched for origin when the ping-req came
	// (reply.go); else the answer is sent bare, within limit
	// (Packet.Size units; relay.go).
	vouched bool
	limit   int
	// queued: the origin's budget of answers that carry the queue
	// (queuedAnswer, reply.go) allowed this ping-req one when it came: the
	// relayed ping and its relayed ack or nack carry the queue.
	queued bool
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
	return m.baseProbeTimeout(p) * time.Duration(m.health.multiplier+1)
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
		es[1] = m.probing.rttAll
	}
	for _, e := range es {
		if e == nil {
			continue
		}
		if t, ok := e.Timeout(); ok {
			return min(max(t, m.cfg.MinProbeTimeout), m.cfg.MaxProbeTimeout), true
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

// startProbe starts the probe of the next target (nextTarget): its ping
// carries the queue only when the target is verified (verify.go,
// “sending”); the gate's retry sends its ping-reqs at once.
func (m *Member) startProbe(now time.Duration) {
	m.probing.next = now + m.period()
	hold := m.probing.retryEnd
	if hold > 0 {
		// The gate's retry within the failed probe's period (pathsDone).
		m.probing.next, m.probing.retryEnd = hold, 0
	}
	m.queue.forwarded = 0 // a new period: a new budget of forwarded gossip
	m.queue.announcedUnverified = 0
	m.queue.period++
	m.queue.announced, m.queue.unheldAnnounced, m.queue.hearsaid = 0, false, 0
	if m.cfg.GossipInterval == 0 {
		m.gossipDeaths() // the drain loop (drainQueue) gossips them otherwise
	}
	retry := m.probing.forceNext != nil
	t, charged, inRound := m.nextTarget()
	if t == nil {
		m.isolated(now)
		return
	}
	// A member not verified is pinged with a nonce, whose ack verifies
	// it; a round's number (2r) is predictable. The nonce is its
	// outstanding one (peer.chal: its challenge's or its last probe's),
	// whose late ack then answers this probe, or a new one it keeps for
	// a probe timeout. The ping leaves when its ledger pays for it or it
	// was never heard from at its address and not yet pinged there (its
	// one unpaid ping, peer.pinged); otherwise the probe is silent
	// and only a late ack of the nonce answers it (receipt.go).
	var seq uint32
	nonce := !t.verified
	silent, older := false, false
	switch {
	case nonce:
		older = t.chal != 0
		if !older {
			t.chal = m.nonce()
		}
		seq, t.chalUntil = t.chal, max(t.chalUntil, now+m.probeTimeout(t))
		_, bytes := m.bareNoncePing(t)
		silent = (t.direct || t.pinged) && !pays(t, bytes)
	case inRound:
		seq = m.roundSeq()
	default:
		seq = m.otherSeq()
	}
	m.pr = probe{active: true, target: t, addr: t.node.Addr, seq: seq, nonce: nonce, silent: silent, older: older, sent: now,
		timeoutAt: now + m.probeTimeout(t), endAt: m.probing.next, retry: retry && t.retried, charged: charged}
	if m.pr.retry && m.probing.failed.ok {
		m.pr.first = m.probing.failed
	}
	m.probing.failed.ok = false
	if m.pr.retry && hold > 0 {
		// Within the failed probe's period, but never shorter than the
		// retry's own direct probe timeout. Not the peer's least direct
		// wait (failTimeout): without a round trip of its own (a member
		// that joined a moment ago) that is ProbeTimeout, and a retry
		// started once the intermediates nacked, as late as they nack
		// without a round trip of the target either, gave its verdict
		// up to that long past the period's end, where ModeLifeguard and
		// memberlist suspect. The failed probe's ping, answered any time
		// before then, still answers the retry (answersProbe).
		m.pr.holdUntil = hold
		m.pr.endAt = max(hold, m.pr.timeoutAt)
		m.probing.next = m.pr.endAt
	}
	m.stats.ProbesStarted++
	if !silent {
		m.send(Packet{Kind: MsgPing, To: t.node, Ping: Ping{Seq: seq, MatchBySeq: true, Verifies: nonce}})
		m.probing.sentPings.add(sentPingsKept, seq, t.node.ID)
		if nonce && t.direct {
			t.credit -= m.sentBytes(&m.ready.packets[len(m.ready.packets)-1])
		}
		t.pinged = t.pinged || nonce && !t.direct
	}
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
//
// A target this member has not verified (verify.go) gets no ping-reqs: its
// direct probe failed and it was never heard from, so no member vouches
// for a path to it, and intermediates that have not verified it would
// ping it too. Announced at a victim's address by one datagram, each ghost
// drew IndirectChecks relayed pings from every member there (issue 27,
// user37 F6). It still gets the stream probe, one per probe as the ping,
// when it was heard from at its address and its ledger pays for it
// (requestStreamProbe): a real member whose datagrams are lost is
// verified by its answer (endStreamOnly), or else when it sends this
// member its own probe.
func (m *Member) sendPingReqs() {
	m.pr.indirect = true
	m.probing.asked = m.probing.asked[:0]
	t := m.pr.target
	if !t.verified {
		m.requestStreamProbe()
		return
	}
	k := m.cfg.IndirectChecks
	chosen := m.pickKnown(k, func(p *peer) bool { return p != t && p.state == StateAlive && p.answered })
	if len(chosen) < k {
		// Relays are verified or answered members only: one
		// never heard from may not exist and never nack.
		chosen = append(chosen, m.pickKnown(k-len(chosen), func(p *peer) bool {
			return p != t && p.state == StateAlive && !p.answered && p.verified
		})...)
	}
	chosen = m.spreadHosts(chosen, func(p *peer) bool {
		return p != t && p.state == StateAlive && (p.answered || p.verified)
	})
	nack := m.cfg.Mode != ModeSWIM
	for _, p := range chosen {
		m.stats.PingReqsSent++
		m.probing.asked = append(m.probing.asked, asked{id: p.node.ID})
		// The queue only to a verified relay (send): an answered one may
		// not be (onAck: an ack from another source answers, verifies
		// nothing).
		m.send(Packet{Kind: MsgPingReq, To: p.node, PingReq: PingReq{Seq: m.pr.seq, Target: t.node, Nack: nack}})
	}
	if nack {
		m.pr.expectNacks = len(chosen)
	}
	m.requestStreamProbe()
}

// spreadHosts replaces each member of chosen whose host (hostOf) an
// earlier one has by a random member for which ok is true on a host none
// of chosen has, while there are such members, and returns chosen. The
// relays of a ping-req are then on as many hosts as can be: an insider
// announcing a member at each of 32 ports of one address, each acking
// pings but relaying nothing, was otherwise most of every member's
// relays, and two members whose direct path was cut declared each other
// dead (user37 F10). When the hosts of chosen differ already, as in a
// group of one member per address, nothing is drawn: the choice is
// pickKnown's.
func (m *Member) spreadHosts(chosen []*peer, ok func(p *peer) bool) []*peer {
	if len(chosen) < 2 {
		return chosen
	}
	hosts := make([]string, len(chosen))
	shared := false
	for i, p := range chosen {
		hosts[i] = hostOf(p.node.Addr)
		shared = shared || slices.Contains(hosts[:i], hosts[i])
	}
	if !shared {
		return chosen
	}
	for i := 1; i < len(chosen); i++ {
		if !slices.Contains(hosts[:i], hosts[i]) {
			continue
		}
		other := m.pickInto(nil, 1, func(p *peer) bool {
			return ok(p) && !slices.Contains(chosen, p) && !slices.Contains(hosts, hostOf(p.node.Addr))
		}, true)
		if len(other) == 0 {
			break // every eligible host has one already
		}
		chosen[i], hosts[i] = other[0], hostOf(other[0].node.Addr)
	}
	return chosen
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
	chosen := m.pickVerified(k, ok)
	return m.pickInto(chosen, k-len(chosen), ok, false)
}

// pickVerified returns up to k distinct random verified members of the
// probe list for which ok is true, scanning the list when the unverified
// are half of it or more (pickInto).
func (m *Member) pickVerified(k int, ok func(p *peer) bool) []*peer {
	return m.pickInto(nil, k, func(p *peer) bool { return p.verified && ok(p) }, m.unverified >= len(m.list)/2)
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
