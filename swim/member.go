package swim

import (
	"errors"
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
	// ErrMetaTooLarge: metadata longer than MaxMetaLen bytes.
	ErrMetaTooLarge = errors.New("swim: metadata larger than 512 bytes (MaxMetaLen)")
	// ErrIncarnationExhausted: SetMeta needs a higher incarnation and this
	// member's is MaxIncarnation.
	ErrIncarnationExhausted = errors.New("swim: incarnation at its maximum")
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
	inList   bool   // present in the probe list (lazily removed)
	ring     uint64 // distance from this member along the ring (probeorder.go)
	probedIn uint64 // the pass of the probe list in which this member probed it last
	inTomb   bool
	retried  bool // ModeDetector gate: one failed probe already forgiven
	// joinedUntil: this member answered its join; until then a view it
	// sends is its group's, merging with this member's (spreadsView).
	joinedUntil time.Duration
	answered    bool // acked a ping of this member's itself (makeRoom)
	// viewOf: the member whose view, of a group merging with this
	// member's, brought it (applyView): the entries of that view queued
	// here are not piggybacked to it (piggybackIf). Cleared on every
	// member once the queue holds no such entry (clearViewMarks).
	viewOf   ID
	deadFrom ID
	// blind: this member declared it dead by its own timeout with no
	// probe of its own acked since the suspicion started (viewUpdate).
	blind bool
	// verified: showed it receives at its address (receipt.go), vouched
	// for, or configured (verify).
	verified bool
	// reached: the address at which it answered a join challenge, or
	// was configured (Bootstrap): its joins from there are answered at
	// once (joinchallenge.go).
	reached string
	// chal is the nonce of the last challenge ping sent to it, 0 for none,
	// and chalUntil when it stops being outstanding (receipt.go).
	chal      uint32
	chalUntil time.Duration
	// credit is the bytes this member may still send it, unverified, at
	// its address (its ledger), and direct whether a packet from it came
	// from there since it was last unverified there (receipt.go).
	credit int
	direct bool
	// pinged: never heard from at its address, it was sent its one
	// unpaid probe ping there; later probes' pings wait for its ledger
	// (receipt.go), revivals by gossip included.
	pinged bool
	// toldIn is 1 + the protocol period (dissemination.period) in which
	// this member last sent it its Alive at once (sendAlive), 0 for
	// never, and toldN how many times in that period.
	toldIn uint64
	toldN  int
	// queuedAt is when an answer to it may carry the queue again
	// (queuedAnswer, reply.go).
	queuedAt time.Duration

	revived   bool          // Alive at inc after Dead or Left below it (reviveTie)
	downSince time.Duration // when revived: since when it had been dead or left

	streamWarned bool          // an EventStreamOnly was emitted, at streamWarnAt
	streamWarnAt time.Duration // (stream.go)
	// streamRefused: a stream ping to this member failed before its
	// deadline (refused or reset), at refusedAt, and nothing was heard
	// from it since; noStream: something was heard from it within a
	// protocol period of such a failure, so it lives without accepting
	// streams, and a refusal from it is no sign of death (pathsDone).
	// Heard only later, it may have been down then (a restart), and
	// nothing is concluded. A stream ack clears both (stream.go).
	streamRefused, noStream bool
	refusedAt               time.Duration

	key      string       // Ed25519 public key bound to the ID (signed self-updates)
	proof    Proof        // proof of the Alive or leave that set inc (viewUpdate)
	meta     string       // metadata from the member's latest Alive that carried a version range
	versions VersionRange // version range advertised in that Alive
}

type status uint8

const (
	running status = iota
	leaving
	left
)

// Ready is the output of a Member: packets to send and membership events, in
// the order they were produced.
type Ready struct {
	Packets []Packet
	Events  []Event
	// StreamProbes are stream fallback pings to run (Config.StreamProbe;
	// answer each with Member.StreamAck or Member.StreamFailed).
	StreamProbes []StreamProbe
	// Messages are the application messages received: new broadcasts and
	// direct messages (see Broadcast, SendTo).
	Messages []Message
	// RemoteStates are the application states received with view
	// transfers (see Config.LocalState).
	RemoteStates []RemoteState
}

// Member is one member's SWIM + Lifeguard protocol state machine. It does
// no I/O and reads no clock: the caller passes every instant as a
// time.Duration offset from an origin of its choice (non-decreasing across
// calls), delivers received packets with Step, calls Tick at least at every
// instant NextDeadline asks for, and sends what Ready returns. All
// randomness comes from the *rand.Rand given to New. A Member is not safe
// for concurrent use.
type Member struct {
	cfg     settings
	rng     *rand.Rand
	self    Node
	idCheck uint32 // IDCheck(self.ID): Packet.ToCheck of packets for this member
	inc     Incarnation
	st      status
	meta    string
	started bool

	peers      map[ID]*peer
	all        []*peer          // every peer ever known, in the order learnt
	list       []*peer          // probe list: the ring, or a shuffled order (probeorder.go)
	live       int              // peers alive or suspect (self excluded)
	unverified int              // of those, the ones not verified (verify.go)
	verifiedAt map[string]*peer // the member last verified at each address (verify.go)
	suspects   []*peer          // peers with a running suspicion timer
	tomb       []*peer          // peers believed dead (not left): reconnect candidates
	nextReap   time.Duration    // when reapExpired next looks at the dead (reap.go)

	pr            probe // the current protocol period's probe
	probing       prober
	health        localHealth
	queue         dissemination
	sync          antiEntropy
	join          joinState
	app           appMessages
	keys          selfKeys
	leaveDeadline time.Duration

	heldViews []*heldView // view transfers in parts awaiting their last part (viewparts.go)

	ready output
	stats Stats
}

// prober is what the probe rounds keep between periods (probe.go,
// probe_verdict.go).
type prober struct {
	idx              int    // position in the probe list
	unverifiedTokens int    // probes an unverified member may take now (nextTarget)
	seq              uint32 // counter of the pings that are not a round's probe (otherSeq)
	round, heard     uint32 // this member's round on the ring and the latest heard (probeorder.go)
	selfRing         uint64 // this member's place on the ring (ringKey)
	pass             uint64 // the probe list's pass, from 1
	next             time.Duration
	forceNext        *peer         // probed next, ahead of the list (the gate's retry)
	retryEnd         time.Duration // the end of the period the gate's next retry runs in, 0 for a period of its own (pathsDone)
	// rttAll is the group-wide RTT estimator: every direct-ack sample of
	// every peer, the prior of a peer with no sample of its own
	// (baseProbeTimeout).
	rttAll         RTTEstimator
	relays         []relay       // ping-reqs this member relays
	asked          []asked       // intermediates of the current probe's ping-reqs
	lastAck        time.Duration // when a probe of this member's was last acked (direct, relayed or stream)
	isoNext        time.Duration // earliest view request of an isolated member (isolated)
	isoGap         time.Duration // the gap after it, doubling to ReconnectInterval
	nextReconnect  time.Duration // the next reconnect ping to a member believed dead
	sentPings      sentPings     // the latest probe pings, whose acks may leave out their sender's ID (ackmatch.go)
	sentChallenges sentPings     // the latest challenges of unverified members, the same for their acks (ackmatch.go)
	// failed is the first probe the gate deferred, whose late acks its
	// retry takes (probe.first).
	failed firstProbe
	// chals counts the challenge pings sent in the period ending at
	// chalPeriodEnd (receipt.go).
	chals         int
	chalPeriodEnd time.Duration
	// chalsFrom counts them by source prefix (challengePrefix), at most
	// PullsPerPeriod entries.
	chalsFrom map[string]prefixChals
}

// localHealth is Lifeguard's local health (health.go).
type localHealth struct {
	multiplier   int           // the local health multiplier, in [0, MaxLocalHealthMultiplier−1]
	graceUntil   time.Duration // no suspicion timer fires before (PauseGuard)
	hostLateness time.Duration // the host's lateness the wrapper measured (SetHostLateness)
	// refuteUntil is the end of the protocol period in which a
	// refutation last raised the multiplier (chargeRefutation).
	refuteUntil time.Duration
	// refuteSpent: a refutation raised the multiplier and no probe of this
	// member's own has ended since in a success or a failure that raised
	// it (probeVerdict); no refutation counts until one has.
	refuteSpent bool
}

// dissemination is the queue of membership updates to piggyback and the
// eager modes' direct sends (dissemination.go, eager.go).
type dissemination struct {
	items     []*bcast      // one update per member
	byID      map[ID]*bcast // items by member ID
	seq       uint64        // queue order of the last queued
	forwarded int           // gossip packets forwarded in this protocol period (eager.go)
	nextRound time.Duration // the drain loop's next round (eager.go, drainQueue)
	told      map[ID]bool   // members sent this member's Alive directly in incarnation toldInc
	toldInc   Incarnation
	// announcedUnverified counts the members not verified that
	// announceAlive sent this member's Alive in this protocol period.
	announcedUnverified int
	// period numbers the protocol periods (one more at each probe timer,
	// startProbe); announced counts the refutations and restatements
	// that announced this member's Alive at once in this one, and
	// unheldAnnounced says that one answered a packet that was no
	// member's word (announceBounded).
	period          uint64
	announced       int
	unheldAnnounced bool
	// hearsaid counts the suspicions made from hearsay and view
	// transfers in this protocol period (suspectInstead).
	hearsaid int
	// viewMarked: a member was marked with the view that brought it
	// (peer.viewOf) since the marks were last cleared (clearViewMarks).
	viewMarked bool
}

// antiEntropy is the push-pull exchanges' state (sync.go).
type antiEntropy struct {
	from        time.Duration              // last anti-entropy exchange, or the first Tick
	frac        float64                    // phase of the next exchange in its interval while !due
	due         bool                       // an exchange was due at least once since the first Tick or the last settling exchange
	peer        ID                         // the member of this member's last exchange
	peerUntil   time.Duration              // until when peer's view request is that exchange's
	stateDue    bool                       // peer's answer to that exchange may still bring its state (holdState)
	settleAt    time.Duration              // when the settling exchange is due, 0 when none (settlePull)
	settledAt   [settleBurst]time.Duration // when the last settling exchanges ran, oldest first (settleLater)
	settled     int                        // settling exchanges run, up to settleBurst
	nextAskView time.Duration              // earliest pull from an unknown or dead sender
	asks        []viewAsk                  // view requests to unknown senders awaiting a retry (viewretry.go)
	pulls       pullBound                  // pulls answered in this window (pullbound.go)
}

// joinState is this member's join and the joins it challenges (join.go,
// joinchallenge.go, conflict.go).
type joinState struct {
	pending     bool          // joining: no view has answered yet
	seeds       []string      // the addresses joined through (answersJoin)
	resend      []string      // the addresses the resends go to (SetJoinSeeds)
	next        time.Duration // the next join attempt
	stopped     bool          // StopJoin: no more attempts until the next Join
	token       uint64        // the latest Join's token (Packet.JoinToken), never 0
	tokens      *rand.ChaCha8 // the tokens' source without Config.JoinTokens (joinToken)
	seed        ID            // the member whose view answered this member's join
	seedUntil   time.Duration // until when its view transfers are that answer
	otherView   bool          // a view not from a seed address came while joining (answersJoin)
	otherBefore time.Duration // from then on, such a view answers the join
	seedRefused bool          // the MergeFilter refused a view from a seed address during this join (answersJoin)
	// askUntil: a view without the token answered the join, and the joins
	// are still resent until then (answersJoin), unless a view echoing
	// the token comes first (noteJoinSeed); 0 when they are not.
	askUntil time.Duration
	// unvouched: a view not echoing the token (Packet.JoinToken) came
	// from a seed's address while joining, while askUntil ran or within
	// seedUntil; the seed's answer then vouches for the members already
	// held at the addresses it names (vouchHeld).
	unvouched bool
	// otherRefusal: a refusal echoing the token came from an address not
	// joined through (refusesJoin); from otherRefusalAfter on, such a
	// refusal refuses the join.
	otherRefusal      bool
	otherRefusalAfter time.Duration
	announceUntil     time.Duration // views until then are a join's answer: announce to their members (announceJoin)
	merging           bool          // Join found other members live: the answering seed gets this member's view (mergePush)
	mergeHeld         bool          // that push waits for the seed's own answer or askUntil (mergePush)
	mergeTo           Node          // the sender of the view without the token that answered: the push goes there at askUntil
	alone             bool          // Join found no other member live: the seed's view is not gossiped on (spreadsView)
	refusal           *JoinRefusal  // the latest refusal of this member's join
	holder            Node          // the live holder of this member's ID that refused this join (JoinConflict)
	lastConflict      conflictNote
	challenges        []joinChallenge // joins waiting for the ack of a challenge
	noChallenge       bool            // tests of other rules: joins applied at once
}

// appMessages is the application messages' state (usermsg.go).
type appMessages struct {
	queue  []*userBcast // broadcast queue
	lastID uint64       // queue order of the last queued
	seq    uint64       // Seq of this member's last broadcast
	seen   map[ID]*seenWindow
	queued map[ID]*originQueued // per origin (queueBroadcast, evictable, takeTurns)
	// turnAt and scratch are takeTurns' counting sort's, reused.
	turnAt  []int
	scratch []*userBcast
	msgs    []Message
	states  []RemoteState
	// held are states awaiting their sender's view verdict, accepted the
	// MergeFilter's latest acceptances (heldstate.go).
	held     []heldState
	accepted []viewVerdict
}

// selfKeys are the signed self-updates' keys and proofs (selfsign.go).
type selfKeys struct {
	trusted       map[ID]string // keys bound ahead of first sight (Trust)
	aliveProof    Proof         // cached proof of selfAlive in aliveProofInc
	aliveProofInc Incarnation
}

// output is what Ready returns next.
type output struct {
	packets []Packet
	events  []Event
	streams []StreamProbe
}

// New returns a Member for cfg (defaults applied; see Config) drawing all
// its randomness from rng. It is a group of one until Bootstrap or Join.
// rng also draws the sequence numbers of the pings whose acks verify
// members and joiners (receipt.go, joinchallenge.go): whoever can predict
// them can verify members at addresses where they do not receive, so
// outside tests and simulations rng must be unpredictable to others (a
// ChaCha8 keyed from crypto/rand, as swim/agent's without a Seed; a PCG
// is not made to hide its state from its outputs, and a seed taken from
// the clock can be guessed).
func New(cfg Config, rng *rand.Rand) (*Member, error) {
	if rng == nil {
		return nil, ErrNoRand
	}
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	cfg.RingKey = slices.Clone(cfg.RingKey)
	return &Member{cfg: resolve(cfg), rng: rng, self: cfg.Self, idCheck: IDCheck(cfg.Self.ID), inc: cfg.Incarnation, meta: string(cfg.Meta),
		app: appMessages{seq: cfg.FirstBroadcastSeq}, peers: make(map[ID]*peer), verifiedAt: make(map[string]*peer),
		probing: prober{unverifiedTokens: unverifiedCost, pass: 1, selfRing: ringKey(cfg.RingKey, cfg.Self.ID)}}, nil
}

// Config returns the configuration with defaults applied.
func (m *Member) Config() Config {
	return m.cfg.config(m.meta)
}

// Self returns this member's ID and address.
func (m *Member) Self() Node { return m.self }

// Incarnation returns this member's current incarnation number.
func (m *Member) Incarnation() Incarnation { return m.inc }

// LocalHealthMultiplier returns Lifeguard's local health multiplier LHM, in
// [0, MaxLocalHealthMultiplier−1]; periods and probe timeouts are scaled by
// LHM+1. Always 0 in ModeSWIM.
func (m *Member) LocalHealthMultiplier() int { return m.health.multiplier }

// SetHostLateness tells the member how late its host has been running
// lately, as the live wrapper measured it (package lateness: how late its
// timers fired, the Go runtime's pauses and scheduling latency; the agent
// sets it before every Tick). In ModeDetector a per-peer detector's opinion
// (the gate of failed probes, PeerStatus.Suspected) is then taken at
// now − d: a peer is held suspected only once its freshness point has
// passed by more than d, so that a silence this member's own host caused
// (a heartbeat waiting unread in the socket) is not counted against the
// peer. Levels are not shifted. Negative values count as 0; the default is
// 0. The member reads no clock: d is the wrapper's measurement.
func (m *Member) SetHostLateness(d time.Duration) { m.health.hostLateness = max(d, 0) }

// HostLateness returns the value of the last SetHostLateness (0 if none).
func (m *Member) HostLateness() time.Duration { return m.health.hostLateness }

// Stats returns the counters.
func (m *Member) Stats() Stats { return m.stats }

// Left reports whether the member has finished leaving: it then ignores
// Tick and Step.
func (m *Member) Left() bool { return m.st == left }

// NumAlive returns the number of members alive or suspect in the local
// view, this member included. The n of the log n formulas counts members
// not verified only up to the number of verified ones (see verify.go); it
// is NumAlive while they are fewer.
func (m *Member) NumAlive() int { return m.live + 1 }

// Ready returns the packets and events produced since the previous call.
// The slices are reused: they are valid until the next call of any method.
func (m *Member) Ready() Ready {
	r := Ready{Packets: m.ready.packets, Events: m.ready.events, StreamProbes: m.ready.streams, Messages: m.app.msgs, RemoteStates: m.app.states}
	m.ready.packets, m.ready.events, m.ready.streams = m.ready.packets[:0], m.ready.events[:0], m.ready.streams[:0]
	m.app.msgs, m.app.states = m.app.msgs[:0], m.app.states[:0]
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
	at = m.probing.next
	if m.pr.active {
		if !m.pr.indirect {
			at = min(at, m.pr.timeoutAt)
		}
		if m.pr.failWait {
			at = min(at, m.pr.failAt)
		}
		at = min(at, m.pr.endAt)
	}
	for i := range m.probing.relays {
		at = min(at, m.probing.relays[i].deadline)
	}
	for _, p := range m.suspects {
		at = min(at, max(p.susp.deadline, m.health.graceUntil))
	}
	if t, ok := m.joinDeadline(); ok {
		at = min(at, t)
	}
	if len(m.tomb) > 0 && m.cfg.ReconnectInterval > 0 {
		at = min(at, m.probing.nextReconnect)
	}
	if m.cfg.PushPullInterval > 0 && m.live > 0 {
		at = min(at, m.pushPullDue())
	}
	if m.sync.settleAt > 0 {
		at = min(at, m.sync.settleAt)
	}
	if due, ok := m.viewAskDue(); ok {
		at = min(at, due)
	}
	if m.draining() {
		at = min(at, m.queue.nextRound)
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
		m.start(now)
	} else if m.cfg.Mode == ModeDetector && m.cfg.PauseGuard > 0 && now-m.pauseDue() > m.cfg.PauseGuard {
		// The probe timer, due every period, or a suspicion timer is
		// overdue: this member was not running.
		m.localPause(now)
	}
	m.tickRelays(now)
	m.expireHeldViews(now)
	m.expireHeldStates(now)
	if m.pr.active && !m.pr.indirect && now >= m.pr.timeoutAt {
		m.sendPingReqs()
	}
	if m.pr.active && m.pr.failWait && now >= m.pr.failAt {
		m.pathsDone(now)
	}
	if m.pr.active && now >= m.pr.endAt {
		m.failProbe(now)
	}
	if now >= m.probing.next {
		m.startProbe(now)
	}
	m.tickSuspicions(now)
	m.reapExpired(now)
	m.drainQueue(now)
	m.tickJoin(now)
	m.tickReconnect(now)
	m.tickPushPull(now)
	if m.st == leaving && (now >= m.leaveDeadline || !m.leaveQueued()) {
		m.st = left
	}
}

// start sets the timers on the first Tick.
func (m *Member) start(now time.Duration) {
	m.started = true
	m.probing.next = now
	if !m.cfg.SyncProbes {
		// The first probe at a random point of the first period
		// (Config.SyncProbes).
		m.probing.next += time.Duration(m.rng.Int64N(int64(m.cfg.ProbeInterval)))
	}
	if m.signed() && !m.selfQueued() {
		// Members added by Bootstrap hold no proof of this member's
		// Alive to pass on to others (a member learning of it from
		// them needs one): announce it once.
		m.enqueue(m.selfAlive())
	}
	m.probing.nextReconnect = now + m.cfg.ReconnectInterval
	m.queue.nextRound = now // the drain loop's grid starts with the member
	// The first exchange at a random point of the interval, so that
	// members started together do not exchange in step.
	if m.cfg.PushPullInterval > 0 {
		m.sync.from, m.sync.frac = now, m.rng.Float64()
	}
}

// tickReconnect pings a random member believed dead that this member
// verified (verify.go) every ReconnectInterval, with its Dead update: a
// live one refutes, and the two sides of a healed partition merge. One
// never heard from is not pinged: nothing says it ever lived, and every
// ghost announced at a victim's address drew a ping there from every
// member that held it dead, for as long as it was held (issue 27, user37
// F6); nor does it dilute the pings of the members that did live.
func (m *Member) tickReconnect(now time.Duration) {
	if m.cfg.ReconnectInterval <= 0 || now < m.probing.nextReconnect {
		return
	}
	m.probing.nextReconnect = now + m.cfg.ReconnectInterval
	if p := m.verifiedDead(); p != nil {
		m.send(Packet{Kind: MsgPing, To: p.node, Ping: Ping{Seq: m.otherSeq()}})
	}
}

// verifiedDead returns a random member believed dead that this member
// verified (verify.go), nil when there is none: the members the reconnect
// ping (tickReconnect) and an isolated member's view request (isolated)
// go to.
func (m *Member) verifiedDead() *peer {
	n := 0
	for _, p := range m.tomb {
		if p.verified {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	i := m.rng.IntN(n)
	for _, p := range m.tomb {
		if !p.verified {
			continue
		}
		if i == 0 {
			return p
		}
		i--
	}
	return nil
}

// tickPushPull runs the settling exchange and the periodic anti-entropy
// exchange when due (sync.go).
func (m *Member) tickPushPull(now time.Duration) {
	m.settlePull(now) // first: it reschedules the periodic exchange
	m.retryViewAsk(now)
	if m.cfg.PushPullInterval > 0 && m.live > 0 && now >= m.pushPullDue() {
		m.sync.from, m.sync.due = now, true
		if m.st == running {
			m.pushPull(now)
		}
	}
}

func (m *Member) emit(kind EventKind, p *peer, from ID, now time.Duration) {
	e := Event{Kind: kind, Node: p.node, Incarnation: p.inc, From: from, At: now}
	if kind == EventJoin || kind == EventAlive || kind == EventUpdate {
		e.Meta = p.meta
	}
	m.ready.events = append(m.ready.events, e)
}

// Queued returns the number of membership updates waiting in the
// dissemination queue (each piggybacked, or gossiped, until sent
// λ·ceil(log10(n+1)) times; see docs/algorithms.md, “SWIM dissemination”).
func (m *Member) Queued() int { return len(m.queue.items) }
