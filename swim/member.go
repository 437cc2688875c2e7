package swim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Errors returned by Member methods.
var (
	// ErrNoRand: New was given a nil random source.
	ErrNoRand = errors.New("swim: nil random source")
	// ErrLeft: the member has left (or is leaving) the group.
	ErrLeft = errors.New("swim: member has left the group")
	// ErrNoSeeds: Join was given no seed address.
	ErrNoSeeds = errors.New("swim: no seed address to join through")
	// ErrPacket wraps every rejected packet.
	ErrPacket = errors.New("swim: malformed packet")
)

// peer is one other member in the local view.
type peer struct {
	node     Node
	state    State
	inc      Incarnation
	since    time.Duration // instant of the last state change
	susp     *suspicion    // non-nil while StateSuspect
	det      detector.Detector
	rtt      RTTEstimator
	inList   bool // present in the probe list (lazily removed)
	inTomb   bool
	retried  bool // ModeDetector gate: one failed probe already forgiven
	deadFrom ID
}

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

// bcast is one update waiting in the dissemination queue.
type bcast struct {
	u  Update
	tx int
	id uint64
}

type status uint8

const (
	running status = iota
	leaving
	left
)

// Stats counts what a Member did since New.
type Stats struct {
	ProbesStarted  int // probes sent (one per protocol period with a target)
	ProbesFailed   int // probes with neither a direct nor an indirect ack
	PingReqsSent   int
	NacksSent      int
	Refutations    int // times this member raised its own incarnation
	GateDeferrals  int // failed probes forgiven once by the detector gate
	Suspicions     int // suspicions this member raised itself
	Declarations   int // members this member declared dead by its own timeout
	Misdirected    int // packets for another ID dropped
	LocalPauses    int // late Ticks taken for a pause of this member (PauseGuard)
	DetectorErrors int // per-peer detector or estimator factory errors
	PushPulls      int // anti-entropy exchanges started (PushPullInterval)
	ViewRequests   int // views asked of unknown senders
	AliveSent      int // pings sent only to carry a refutation (Alive) at once
	GossipsSent    int // MsgGossip packets sent (eager dissemination, GossipFanout)
}

// Ready is the output of a Member: packets to send and membership events, in
// the order they were produced.
type Ready struct {
	Packets []Packet
	Events  []Event
}

// Member is one member's SWIM + Lifeguard protocol state machine. It does
// no I/O and reads no clock: the caller passes every instant as a
// time.Duration offset from an origin of its choice (non-decreasing across
// calls), delivers received packets with Step, calls Tick at least at every
// instant NextDeadline asks for, and sends what Ready returns. All
// randomness comes from the *rand.Rand given to New. A Member is not safe
// for concurrent use.
type Member struct {
	cfg  Config
	rng  *rand.Rand
	self Node
	inc  Incarnation
	st   status

	peers     map[ID]*peer
	all       []*peer // every peer ever known, in the order learnt
	list      []*peer // probe list: round-robin over a shuffled order
	idx       int
	live      int     // peers alive or suspect (self excluded)
	suspects  []*peer // peers with a running suspicion timer
	tomb      []*peer // peers believed dead (not left): reconnect candidates
	forwarded int     // gossip packets forwarded in this protocol period (eager.go)

	lhm       int
	seq       uint32
	pr        probe
	nextProbe time.Duration
	started   bool
	forceNext *peer
	relays    []relay
	asked     []asked // intermediates of the current probe's ping-reqs

	bq   []*bcast      // dissemination queue, one update per member
	bidx map[ID]*bcast // bq by member ID
	bseq uint64

	told     map[ID]bool // members sent this member's Alive directly in incarnation toldInc
	toldInc  Incarnation
	replyTo  ID // during Step: the sender this member answers (its answer carries the Alive)
	stepFrom ID // during Step: the packet's sender

	graceUntil    time.Duration // no suspicion timer fires before (PauseGuard)
	nextReconnect time.Duration
	nextPushPull  time.Duration
	nextAskView   time.Duration // earliest pull from an unknown or dead sender
	joining       bool
	seeds         []string
	nextJoin      time.Duration
	leaveDeadline time.Duration

	out    []Packet
	events []Event
	stats  Stats
}

// New returns a Member for cfg (defaults applied; see Config) drawing all
// its randomness from rng. It is a group of one until Bootstrap or Join.
func New(cfg Config, rng *rand.Rand) (*Member, error) {
	if rng == nil {
		return nil, ErrNoRand
	}
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	return &Member{cfg: cfg, rng: rng, self: cfg.Self, peers: make(map[ID]*peer)}, nil
}

// Config returns the configuration with defaults applied.
func (m *Member) Config() Config { return m.cfg }

// Self returns this member's ID and address.
func (m *Member) Self() Node { return m.self }

// Incarnation returns this member's current incarnation number.
func (m *Member) Incarnation() Incarnation { return m.inc }

// HealthScore returns Lifeguard's local health multiplier score LHM, in
// [0, AwarenessMaxMultiplier−1]; periods and probe timeouts are scaled by
// LHM+1. Always 0 in ModeSWIM.
func (m *Member) HealthScore() int { return m.lhm }

// Stats returns the counters.
func (m *Member) Stats() Stats { return m.stats }

// Left reports whether the member has finished leaving: it then ignores
// Tick and Step.
func (m *Member) Left() bool { return m.st == left }

// NumAlive returns the number of members alive or suspect in the local
// view, this member included: the n of the log n formulas.
func (m *Member) NumAlive() int { return m.live + 1 }

// Bootstrap adds nodes to the view as alive in incarnation 0 without
// gossiping them and without events: a static start in which every member is
// configured with the same list (simulations, fixed clusters). Nodes already
// known and this member itself are skipped.
func (m *Member) Bootstrap(nodes []Node) {
	for _, n := range nodes {
		if n.ID == m.self.ID || n.ID == "" || m.peers[n.ID] != nil {
			continue
		}
		p := &peer{node: n, state: StateAlive, inList: true}
		m.peers[n.ID] = p
		m.all = append(m.all, p)
		m.live++
		m.list = append(m.list, p)
	}
	// Inserting each at a random position is a uniform shuffle; shuffling
	// the not yet probed part of the list once is the same and O(n).
	rest := m.list[m.idx:]
	m.rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
}

// Join starts joining the group through the members at the given addresses:
// each gets a MsgJoin carrying this member's Alive update, and answers with
// its view (MsgSync). Joins are resent every ProbeInterval until a view
// arrives.
func (m *Member) Join(now time.Duration, seeds []string) error {
	if m.st != running {
		return ErrLeft
	}
	if len(seeds) == 0 {
		return ErrNoSeeds
	}
	m.joining = true
	m.seeds = slices.Clone(seeds)
	m.sendJoins(now)
	return nil
}

func (m *Member) sendJoins(now time.Duration) {
	for _, s := range m.seeds {
		if s == m.self.Addr {
			continue
		}
		pkt := Packet{Kind: MsgJoin, From: m.self, To: Node{Addr: s},
			Updates: []Update{m.selfAlive()}}
		m.out = append(m.out, pkt)
	}
	m.nextJoin = now + m.cfg.ProbeInterval
}

// Leave starts a voluntary leave: the member gossips a Dead update about
// itself with From = its own ID (in the Lifeguard modes also sent at once
// to GossipFanout random members, in MsgGossip packets: a caller that stops
// the member early, before its next probe, still tells somebody), keeps
// running until that update has been piggybacked the full retransmit limit
// or that many protocol periods have passed, and then stops (Left reports
// true).
func (m *Member) Leave(now time.Duration) error {
	if m.st != running {
		return ErrLeft
	}
	m.st = leaving
	u := Update{Kind: UpdateDead, Node: m.self, Incarnation: m.inc, From: m.self.ID}
	m.enqueue(u)
	m.push(u, nil, m.cfg.GossipFanout)
	limit := retransmitLimit(m.cfg.RetransmitMult, m.NumAlive())
	m.leaveDeadline = now + time.Duration(limit)*m.cfg.ProbeInterval
	return nil
}

// Ready returns the packets and events produced since the previous call.
// The slices are reused: they are valid until the next call of any method.
func (m *Member) Ready() Ready {
	r := Ready{Packets: m.out, Events: m.events}
	m.out, m.events = m.out[:0], m.events[:0]
	return r
}

// NextDeadline returns the earliest instant at which Tick has work to do;
// ok is false when the member has left. Before the first Tick it returns 0.
func (m *Member) NextDeadline() (at time.Duration, ok bool) {
	if m.st == left {
		return 0, false
	}
	if !m.started {
		return 0, true
	}
	at = m.nextProbe
	if m.pr.active {
		if !m.pr.indirect {
			at = min(at, m.pr.timeoutAt)
		}
		at = min(at, m.pr.endAt)
	}
	for i := range m.relays {
		at = min(at, m.relays[i].deadline)
	}
	for _, p := range m.suspects {
		at = min(at, max(p.susp.deadline, m.graceUntil))
	}
	if m.joining {
		at = min(at, m.nextJoin)
	}
	if len(m.tomb) > 0 && m.cfg.ReconnectInterval > 0 {
		at = min(at, m.nextReconnect)
	}
	if m.cfg.PushPullInterval > 0 && m.live > 0 {
		at = min(at, m.nextPushPull)
	}
	if m.st == leaving {
		at = min(at, m.leaveDeadline)
	}
	return at, true
}

// Tick advances the member's timers to now: it fires due probe timeouts
// (sending ping-reqs), ends the protocol period's probe, starts the next
// probe, sends due nacks, declares suspects whose timeout expired dead, and
// resends joins and reconnect pings.
func (m *Member) Tick(now time.Duration) {
	if m.st == left {
		return
	}
	if !m.started {
		m.started = true
		m.nextProbe = now
		m.nextReconnect = now + m.cfg.ReconnectInterval
		// The first exchange at a random point of the interval, so that
		// members started together do not exchange in step.
		if m.cfg.PushPullInterval > 0 {
			iv := pushPullInterval(m.cfg.PushPullInterval, m.NumAlive())
			m.nextPushPull = now + time.Duration(m.rng.Int64N(int64(iv)))
		}
	} else if m.cfg.Mode == ModeDetector && m.cfg.PauseGuard > 0 && now-m.nextProbe > m.cfg.PauseGuard {
		// The probe timer, due every period, is overdue: this member was
		// not running.
		m.localPause(now)
	}
	m.tickRelays(now)
	if m.pr.active && !m.pr.indirect && now >= m.pr.timeoutAt {
		m.sendPingReqs()
	}
	if m.pr.active && now >= m.pr.endAt {
		m.failProbe(now)
	}
	if now >= m.nextProbe {
		m.startProbe(now)
	}
	m.tickSuspicions(now)
	if m.joining && now >= m.nextJoin {
		m.sendJoins(now)
	}
	if m.cfg.ReconnectInterval > 0 && now >= m.nextReconnect {
		m.nextReconnect = now + m.cfg.ReconnectInterval
		if len(m.tomb) > 0 {
			p := m.tomb[m.rng.IntN(len(m.tomb))]
			m.seq++
			m.send(Packet{Kind: MsgPing, To: p.node, Ping: Ping{Seq: m.seq}})
		}
	}
	if m.cfg.PushPullInterval > 0 && now >= m.nextPushPull {
		m.nextPushPull = now + pushPullInterval(m.cfg.PushPullInterval, m.NumAlive())
		if m.st == running {
			m.pushPull()
		}
	}
	if m.st == leaving && (now >= m.leaveDeadline || !m.leaveQueued()) {
		m.st = left
	}
}

// pushPull is one anti-entropy exchange with a random alive member: this
// member's whole view in MsgSync packets (push), then a MsgJoin that makes
// the receiver answer with its own (pull).
func (m *Member) pushPull() {
	var p *peer
	if n := len(m.list); n > 0 {
		for tries := 0; tries < 8 && p == nil; tries++ {
			if c := m.list[m.rng.IntN(n)]; c.state == StateAlive {
				p = c
			}
		}
	}
	if p == nil {
		return
	}
	m.stats.PushPulls++
	m.sendSync(p.node)
	m.askView(p.node)
}

// askView sends to a MsgJoin carrying this member's Alive, which the
// receiver answers with its view.
func (m *Member) askView(to Node) {
	m.out = append(m.out, Packet{Kind: MsgJoin, From: m.self, To: to,
		Updates: []Update{m.selfAlive()}})
}

// pushPullInterval scales the base interval to the group: unchanged up to
// 32 members, then times ceil(n/32), so that an exchange's cost (a full
// view, about n/40 packets each way) stays about 3 packets per base interval
// whatever n.
func pushPullInterval(base time.Duration, n int) time.Duration {
	const perBase = 32
	return base * time.Duration((n+perBase-1)/perBase)
}

// localPause reacts to a Tick far later than announced (see
// Config.PauseGuard).
func (m *Member) localPause(now time.Duration) {
	m.stats.LocalPauses++
	if m.st == running {
		m.inc = m.inc.Next()
		m.enqueue(m.selfAlive())
		m.announceAlive()
	}
	if m.pr.active && now >= m.pr.endAt {
		m.pr.active = false
	}
	kept := m.relays[:0]
	for _, r := range m.relays {
		if now < r.deadline {
			kept = append(kept, r)
		}
	}
	m.relays = kept
	m.adjustHealth(1)
	m.graceUntil = now + m.cfg.ProbeInterval
}

func (m *Member) leaveQueued() bool {
	b := m.bidx[m.self.ID]
	return b != nil && b.u.IsLeave()
}

// period returns the current protocol period ProbeInterval·(LHM+1).
func (m *Member) period() time.Duration {
	return m.cfg.ProbeInterval * time.Duration(m.lhm+1)
}

// probeTimeout returns the direct probe timeout for p: baseProbeTimeout
// times LHM+1.
func (m *Member) probeTimeout(p *peer) time.Duration {
	return m.baseProbeTimeout(p) * time.Duration(m.lhm+1)
}

// baseProbeTimeout returns the clamped RTT-estimator timeout for p in
// ModeDetector once it has a sample, ProbeTimeout otherwise. A ping-req
// relay waits this long, unscaled by this member's own LHM (as memberlist's
// relay waits its configured ProbeTimeout): a relay's nack must reach the
// requester within the requester's period, and a late nack would count
// against the requester's health for this member's slowness.
func (m *Member) baseProbeTimeout(p *peer) time.Duration {
	base := m.cfg.ProbeTimeout
	if m.cfg.Mode == ModeDetector && !m.cfg.DisableRTTTimeout && p != nil && p.rtt != nil {
		if t, ok := p.rtt.Timeout(); ok {
			base = min(max(t, m.cfg.MinProbeTimeout), m.cfg.MaxProbeTimeout)
		}
	}
	return base
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

func (m *Member) adjustHealth(delta int) {
	if m.cfg.Mode == ModeSWIM {
		return
	}
	m.lhm = min(max(m.lhm+delta, 0), m.cfg.AwarenessMaxMultiplier-1)
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
// reshuffling (and dropping dead members) at the end of each pass.
func (m *Member) nextTarget() *peer {
	if t := m.forceNext; t != nil {
		m.forceNext = nil
		if t.state == StateAlive || t.state == StateSuspect {
			return t
		}
	}
	for pass := 0; pass < 2; pass++ {
		for m.idx < len(m.list) {
			p := m.list[m.idx]
			m.idx++
			if p.state == StateAlive || p.state == StateSuspect {
				return p
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
	return nil
}

func (m *Member) startProbe(now time.Duration) {
	m.nextProbe = now + m.period()
	m.forwarded = 0 // a new period: a new budget of forwarded gossip
	retry := m.forceNext != nil
	t := m.nextTarget()
	if t == nil {
		return
	}
	m.seq++
	m.pr = probe{active: true, target: t, seq: m.seq, sent: now,
		timeoutAt: now + m.probeTimeout(t), endAt: m.nextProbe, retry: retry && t.retried}
	m.stats.ProbesStarted++
	m.send(Packet{Kind: MsgPing, To: t.node, Ping: Ping{Seq: m.seq}})
	if m.pr.retry {
		// The gate's retry re-checks a failure already seen: the direct
		// and indirect paths at once, and the verdict as soon as every
		// intermediate has answered (onNack), not a period later.
		m.sendPingReqs()
	}
}

// sendPingReqs asks up to k random alive members to probe the target.
func (m *Member) sendPingReqs() {
	m.pr.indirect = true
	t := m.pr.target
	chosen := m.pick(m.cfg.IndirectChecks, func(p *peer) bool { return p != t && p.state == StateAlive })
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
}

// pick returns up to k distinct random members of the probe list for which
// ok is true: a uniform choice among all of them in a small list (at most
// 4k), else up to 8k random draws.
func (m *Member) pick(k int, ok func(p *peer) bool) []*peer {
	var chosen []*peer
	okNew := func(p *peer) bool { return ok(p) && !slices.Contains(chosen, p) }
	if len(m.list) <= 4*k {
		cand := make([]*peer, 0, len(m.list))
		for _, p := range m.list {
			if okNew(p) {
				cand = append(cand, p)
			}
		}
		for len(chosen) < k && len(cand) > 0 {
			i := m.rng.IntN(len(cand))
			chosen = append(chosen, cand[i])
			cand[i] = cand[len(cand)-1]
			cand = cand[:len(cand)-1]
		}
	} else {
		for tries := 0; len(chosen) < k && tries < 8*k; tries++ {
			if p := m.list[m.rng.IntN(len(m.list))]; okNew(p) {
				chosen = append(chosen, p)
			}
		}
	}
	return chosen
}

// failProbe ends a period whose probe got no ack.
func (m *Member) failProbe(now time.Duration) {
	m.pr.active = false
	m.stats.ProbesFailed++
	if m.pr.expectNacks > 0 {
		m.adjustHealth(max(m.pr.expectNacks-m.pr.nacks, 0))
	} else {
		m.adjustHealth(1)
	}
	t := m.pr.target
	if t.state != StateAlive && t.state != StateSuspect {
		return
	}
	if t.state == StateSuspect {
		if t.susp.confirm(m.self.ID) && len(t.susp.confirmers) <= t.susp.k {
			u := Update{Kind: UpdateSuspect, Node: t.node, Incarnation: t.inc, From: m.self.ID}
			m.enqueue(u)
			m.push(u, m.suspecters(t), m.cfg.GossipFanout)
		}
		return
	}
	if m.cfg.Mode == ModeDetector && !m.cfg.DisableSuspicionGate && !t.retried && t.det != nil && !t.det.Suspected(now) {
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

func (m *Member) startSuspicion(now time.Duration, p *peer, from ID) {
	n := m.NumAlive()
	minT := suspicionMin(m.cfg.SuspicionMult, n, m.cfg.ProbeInterval)
	maxT, k := minT, 0
	if m.cfg.Mode != ModeSWIM {
		maxT = time.Duration(m.cfg.SuspicionMaxTimeoutMult) * minT
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
	if now < m.graceUntil {
		return
	}
	for i := 0; i < len(m.suspects); {
		p := m.suspects[i]
		if now < p.susp.deadline {
			i++
			continue
		}
		m.stats.Declarations++
		u := Update{Kind: UpdateDead, Node: p.node, Incarnation: p.inc, From: m.self.ID}
		m.kill(now, p, u, true)
		m.push(u, nil, m.cfg.GossipFanout)
		// kill removed p from m.suspects; i now holds the next one.
	}
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

// Step processes one received packet at now. It returns an error wrapping
// ErrPacket, and changes nothing, for a malformed packet (unknown kind or
// update kind, empty sender ID, over-long ID or address, a Suspect or Dead
// update with an empty From). A packet for
// another ID is dropped silently (counted in Stats.Misdirected); packets to
// a member that has left are ignored.
func (m *Member) Step(now time.Duration, pkt *Packet) error {
	if err := validate(pkt); err != nil {
		return err
	}
	if m.st == left {
		return nil
	}
	if pkt.To.ID != "" && pkt.To.ID != m.self.ID {
		m.stats.Misdirected++
		return nil
	}
	if pkt.From.ID == m.self.ID {
		return nil
	}
	gossip := pkt.Kind != MsgSync
	if pkt.Kind == MsgPing || (pkt.Kind == MsgPingReq && pkt.PingReq.Target.ID == m.self.ID) {
		m.replyTo = pkt.From.ID
	}
	m.stepFrom = pkt.From.ID
	for i := range pkt.Updates {
		m.apply(now, pkt.Updates[i], gossip)
	}
	m.replyTo, m.stepFrom = "", ""
	s := m.peers[pkt.From.ID]
	if s != nil {
		m.heard(now, s)
	}
	// A protocol packet from a member this member does not know comes from
	// one that is in the group but whose Alive never reached this member
	// (two members that joined at about the same time): ask it for its
	// view, which names it with its incarnation. At most once per
	// ProbeInterval, whoever the senders. (A sender believed dead gets the
	// Dead update on the answer instead, and refutes.)
	if s == nil && pkt.Kind != MsgJoin &&
		pkt.Kind != MsgSync && m.st == running && now >= m.nextAskView {
		m.nextAskView = now + m.cfg.ProbeInterval
		m.stats.ViewRequests++
		m.askView(pkt.From)
	}
	switch pkt.Kind {
	case MsgPing:
		m.send(Packet{Kind: MsgAck, To: pkt.From, Ack: Ack{Seq: pkt.Ping.Seq}})
	case MsgAck:
		m.onAck(now, pkt)
	case MsgNack:
		m.onNack(now, pkt)
	case MsgPingReq:
		m.onPingReq(now, pkt)
	case MsgJoin:
		m.sendSync(pkt.From)
	case MsgSync:
		m.joining = false
	}
	return nil
}

func validate(pkt *Packet) error {
	if pkt == nil {
		return fmt.Errorf("%w: nil packet", ErrPacket)
	}
	if pkt.Kind < MsgPing || pkt.Kind > MsgGossip {
		return fmt.Errorf("%w: unknown message kind %d", ErrPacket, pkt.Kind)
	}
	if pkt.From.ID == "" {
		return fmt.Errorf("%w: %v from an empty member ID", ErrPacket, pkt.Kind)
	}
	if tooLong(pkt.From) || tooLong(pkt.To) || tooLong(pkt.PingReq.Target) {
		return fmt.Errorf("%w: member ID or address longer than 255 bytes", ErrPacket)
	}
	if pkt.Kind == MsgPingReq && pkt.PingReq.Target.ID == "" {
		return fmt.Errorf("%w: ping-req without target", ErrPacket)
	}
	for i := range pkt.Updates {
		u := &pkt.Updates[i]
		if u.Kind < UpdateAlive || u.Kind > UpdateDead {
			return fmt.Errorf("%w: update %d: unknown kind %d", ErrPacket, i, u.Kind)
		}
		if u.Node.ID == "" {
			return fmt.Errorf("%w: update %d: empty member ID", ErrPacket, i)
		}
		if tooLong(u.Node) || len(u.From) > MaxIDLen {
			return fmt.Errorf("%w: update %d: member ID or address longer than 255 bytes", ErrPacket, i)
		}
		if u.From == "" && u.Kind != UpdateAlive {
			// An anonymous suspicion would count as an independent
			// confirmation (Lifeguard) and a declaration names its declarer.
			return fmt.Errorf("%w: update %d: %v of %q without From", ErrPacket, i, u.Kind, u.Node.ID)
		}
	}
	return nil
}

func tooLong(n Node) bool { return len(n.ID) > MaxIDLen || len(n.Addr) > MaxAddrLen }

// heard feeds p's failure detector with a heartbeat at now.
func (m *Member) heard(now time.Duration, p *peer) {
	if p.det == nil {
		d, err := m.cfg.PeerDetector()
		if err != nil || d == nil {
			m.stats.DetectorErrors++
			return
		}
		p.det = d
	}
	p.det.Observe(detector.Heartbeat{Arrival: now})
}

func (m *Member) observeRTT(p *peer, rtt time.Duration) {
	if p.rtt == nil {
		e, err := m.cfg.RTTEstimator()
		if err != nil || e == nil {
			m.stats.DetectorErrors++
			return
		}
		p.rtt = e
	}
	p.rtt.Observe(rtt)
}

func (m *Member) onAck(now time.Duration, pkt *Packet) {
	seq := pkt.Ack.Seq
	if m.pr.active && seq == m.pr.seq {
		t := m.pr.target
		if pkt.From.ID == t.node.ID {
			m.observeRTT(t, now-m.pr.sent)
		} else {
			m.heard(now, t) // relayed: evidence that t is alive
		}
		m.pr.active = false
		t.retried = false
		m.adjustHealth(-1)
		return
	}
	for i, r := range m.relays {
		if r.seq != seq {
			continue
		}
		if p := m.peers[r.target]; p != nil && p.node.ID == pkt.From.ID {
			m.observeRTT(p, now-r.sent)
		}
		m.send(Packet{Kind: MsgAck, To: r.origin, Ack: Ack{Seq: r.originSeq}})
		m.relays = slices.Delete(m.relays, i, i+1)
		return
	}
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
			if m.pr.retry && m.pr.nacks == m.pr.expectNacks {
				m.failProbe(now) // every path failed twice: suspect now
			}
			return
		}
	}
}

func (m *Member) onPingReq(now time.Duration, pkt *Packet) {
	t := pkt.PingReq.Target
	if t.ID == m.self.ID {
		m.send(Packet{Kind: MsgAck, To: pkt.From, Ack: Ack{Seq: pkt.PingReq.Seq}})
		return
	}
	p := m.peers[t.ID]
	m.seq++
	// The ping carries p's suspicion if this member suspects it (send).
	m.relays = append(m.relays, relay{seq: m.seq, origin: pkt.From, originSeq: pkt.PingReq.Seq,
		target: t.ID, sent: now, deadline: now + m.baseProbeTimeout(p), nack: pkt.PingReq.Nack})
	seq := m.seq
	m.send(Packet{Kind: MsgPing, To: t, Ping: Ping{Seq: seq}})
}

// sendSync answers a join with this member's whole view, in as many
// packets as the size limit needs.
func (m *Member) sendSync(to Node) {
	ups := make([]Update, 0, len(m.peers)+1)
	ups = append(ups, m.selfAlive())
	for _, p := range m.all {
		ups = append(ups, m.viewUpdate(p))
	}
	for len(ups) > 0 {
		pk := Packet{Kind: MsgSync, From: m.self, To: to}
		size := pk.Size()
		n := 0
		for n < len(ups) && size+ups[n].Size() <= m.cfg.MaxPacketSize {
			size += ups[n].Size()
			n++
		}
		n = max(n, 1)
		pk.Updates = ups[:n:n] // ups is this call's own slice: no copy needed
		ups = ups[n:]
		m.out = append(m.out, pk)
	}
}

// viewUpdate returns the update that states p's entry in the local view.
func (m *Member) viewUpdate(p *peer) Update {
	u := Update{Node: p.node, Incarnation: p.inc}
	switch p.state {
	case StateAlive:
		u.Kind, u.From = UpdateAlive, p.node.ID
	case StateSuspect:
		u.Kind, u.From = UpdateSuspect, p.susp.from
	case StateDead:
		u.Kind, u.From = UpdateDead, p.deadFrom
	case StateLeft:
		u.Kind, u.From = UpdateDead, p.node.ID
	}
	return u
}

// send completes pk (kind, To, body and any priority updates set by the
// caller) and piggybacks after the caller's updates (when `to` is believed
// dead or gone) the update saying so, so that a live member refutes it, then
// the least-sent updates of the queue, all within MaxPacketSize.
func (m *Member) send(pk Packet) {
	pk.From = m.self
	to := pk.To
	budget := m.cfg.MaxPacketSize - pk.Size()
	ups := pk.Updates // the caller's priority updates, counted in pk.Size
	if u, ok := m.notice(to.ID); ok {
		if s := u.Size(); s <= budget {
			ups = append(ups, u)
			budget -= s
		}
	}
	pk.Updates = m.piggyback(ups, budget)
	m.out = append(m.out, pk)
}

// notice returns what this member holds about the member id when that
// member should hear it with any packet sent to it: Dead or Left (a live
// member then refutes), or, in the Lifeguard modes, its suspicion (the
// buddy system). It reports false otherwise.
func (m *Member) notice(id ID) (Update, bool) {
	p := m.peers[id]
	if p == nil || !(p.state == StateDead || p.state == StateLeft ||
		(p.state == StateSuspect && m.cfg.Mode != ModeSWIM)) {
		return Update{}, false
	}
	return m.viewUpdate(p), true
}

func (m *Member) emit(kind EventKind, p *peer, from ID, now time.Duration) {
	m.events = append(m.events, Event{Kind: kind, Node: p.node, Incarnation: p.inc, From: from, At: now})
}
