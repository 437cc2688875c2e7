// Package sim is a deterministic discrete-event simulator for the swim
// state machine and for the heartbeating baselines it is compared with.
//
// Virtual time advances from event to event (a container/heap of
// deliveries, member timers and scripted actions, ties broken by insertion
// order); N members live in one process and talk through simulated links
// with per-link delay distributions, random loss, partitions and links that
// lose every datagram while streams pass (Config.UDPBlocked; the stream
// fallback ping, swim.Config.StreamProbe, is modelled). Members can
// crash (stop for good), restart (a fresh state machine with the same ID and
// incarnation 0 that joins through a seed), leave, and pause.
//
// A paused member neither sends nor processes anything for the pause's
// duration: its timers do not fire and packets addressed to it queue, as in
// a stopped process's socket buffer (or are dropped, Config.DropWhilePaused).
// When it resumes, its overdue timers fire first and the queued packets are
// delivered afterwards, in arrival order, all at the resume instant: this is
// what a process starved of CPU sees (its timers have expired before it gets
// to read the socket), and what makes a paused member suspect healthy ones.
//
// Everything random (delays, loss, the members' own randomness) comes from
// PCG streams derived from Config.Seed: the same seed gives the same run.
package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// DelayFunc returns the one-way delay of a packet from member from to member
// to, drawing any randomness from r.
type DelayFunc func(from, to int, r *rand.Rand) time.Duration

// UniformDelay returns a DelayFunc uniform in [lo, hi].
func UniformDelay(lo, hi time.Duration) DelayFunc {
	return func(_, _ int, r *rand.Rand) time.Duration {
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
	}
}

// Config configures a simulation. The zero value of every field except N
// means the documented default.
type Config struct {
	// N is the number of members, at least 1.
	N int
	// Seed makes the run reproducible.
	Seed uint64
	// Member is the template of every member's swim.Config; Self is set by
	// the simulator (ID "m0000"…, or IDs[i], address the same string).
	Member swim.Config
	// IDs, when set, names the members: member i's ID and address are
	// IDs[i]. They must be N distinct non-empty strings. For tests in which
	// members choose their IDs (an attacker placing identities on the
	// probe ring).
	IDs []string
	// Delay is the one-way link delay. Default UniformDelay(0.5 ms, 1.5 ms).
	Delay DelayFunc
	// Loss is the probability that a packet is lost, in [0, 1].
	Loss float64
	// LinkLoss, when set, overrides Loss per link: the probability that a
	// packet from member from to member to is lost.
	LinkLoss func(from, to int) float64
	// StartSpread: member i starts (first Tick) at a uniformly random
	// instant in [0, StartSpread). 0 starts all members at 0, so that their
	// protocol periods are aligned (a common grid of rounds, as SWIM's
	// analysis counts them; the protocol itself needs no alignment, §3.1).
	// (The simulator sets swim.Config.SyncProbes: a member's first probe
	// comes at its start.)
	StartSpread time.Duration
	// DropWhilePaused drops packets that arrive at a paused member instead
	// of queueing them until it resumes.
	DropWhilePaused bool
	// Drop, when set, is asked about every packet sent (after partitions
	// and before random loss): true loses it. For tests that lose one
	// chosen packet.
	Drop func(now time.Duration, from, to int, p *swim.Packet) bool
	// NoBootstrap starts every member with an empty view (to be filled by
	// joins). By default every member starts knowing all N members, alive
	// in incarnation 0 (swim.Member.Bootstrap).
	NoBootstrap bool
	// Signed gives every member an Ed25519 key (swim.Config.SigningKey,
	// derived from Seed and the member's index, kept across restarts as a
	// deployment keeps its identity file) and, with the bootstrap, binds
	// every member's public key in every view beforehand (swim.Member.Trust).
	Signed bool
	// UDPBlocked, when set, says which links lose every datagram while
	// streams still pass (a firewall dropping UDP, TCP open): a packet
	// from member from to member to is lost when it returns true. Stream
	// fallback pings (swim.Config.StreamProbe, swim.Ready.StreamProbes)
	// ignore it; see streamProbe.
	UDPBlocked func(from, to int) bool
}

// MemberStats are one member's traffic counters.
type MemberStats struct {
	SentMsgs, SentBytes int64
	RecvMsgs, RecvBytes int64
	// SentSync counts the MsgJoin and MsgSync packets among SentMsgs:
	// joins and anti-entropy (push-pull) rather than probing.
	SentSync int64
}

// EventHook observes every membership event: observer is the member whose
// view changed.
type EventHook func(now time.Duration, observer int, ev swim.Event)

type evKind uint8

const (
	evTick evKind = iota
	evDeliver
	evAction
)

type event struct {
	at   time.Duration
	seq  uint64
	kind evKind
	to   int
	gen  int // member generation the event is for (restarts bump it)
	pkt  swim.Packet
	size int
	fn   func()
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

type simMember struct {
	m           *swim.Member
	node        swim.Node
	gen         int
	crashed     bool
	silent      bool // crashed by CrashSilent: stream pings get no answer
	pausedUntil time.Duration
	paused      bool
	queue       []*event
	scheduled   time.Duration
	hasSched    bool
	stats       MemberStats
}

// Sim is one simulation run.
type Sim struct {
	cfg     Config
	rng     *rand.Rand // links
	now     time.Duration
	h       eventHeap
	seq     uint64
	free    []*event
	members []*simMember
	byAddr  map[string]int
	group   []int // partition group of each member; nil: no partition
	hook    EventHook
	mhook   MessageHook
	phook   PacketHook
	dropped int64
	steps   int64
	// noAckUpdates drops the updates of stream acks (a test's control).
	noAckUpdates bool
	// streamHook, when set, sees every stream ping's outcome as the
	// prober gets it (a test's probe).
	streamHook func(now time.Duration, sp swim.StreamProbe, ok bool)
}

// New builds a simulation of cfg.N members.
func New(cfg Config) (*Sim, error) {
	if cfg.N < 1 {
		return nil, fmt.Errorf("sim: N = %d, need at least 1 member", cfg.N)
	}
	if cfg.Loss < 0 || cfg.Loss > 1 {
		return nil, fmt.Errorf("sim: loss %v outside [0, 1]", cfg.Loss)
	}
	if cfg.StartSpread < 0 {
		return nil, fmt.Errorf("sim: negative StartSpread %v", cfg.StartSpread)
	}
	if cfg.Delay == nil {
		cfg.Delay = UniformDelay(500*time.Microsecond, 1500*time.Microsecond)
	}
	if cfg.IDs != nil && len(cfg.IDs) != cfg.N {
		return nil, fmt.Errorf("sim: %d IDs for N = %d members", len(cfg.IDs), cfg.N)
	}
	s := &Sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5157)), byAddr: make(map[string]int, cfg.N)}
	nodes := make([]swim.Node, cfg.N)
	for i := range nodes {
		id := fmt.Sprintf("m%04d", i)
		if cfg.IDs != nil {
			id = cfg.IDs[i]
		}
		if _, dup := s.byAddr[id]; dup || id == "" {
			return nil, fmt.Errorf("sim: IDs[%d] = %q: empty or not distinct", i, id)
		}
		nodes[i] = swim.Node{ID: swim.ID(id), Addr: id}
		s.byAddr[id] = i
	}
	for i := range nodes {
		sm := &simMember{node: nodes[i]}
		s.members = append(s.members, sm)
		if err := s.newMachine(i); err != nil {
			return nil, err
		}
		if !cfg.NoBootstrap {
			sm.m.Bootstrap(nodes)
		}
		start := time.Duration(0)
		if cfg.StartSpread > 0 {
			start = time.Duration(s.rng.Int64N(int64(cfg.StartSpread)))
		}
		s.scheduleTick(i, start)
	}
	if !cfg.NoBootstrap {
		for _, sm := range s.members {
			s.trustAll(sm.m)
		}
	}
	return s, nil
}

func (s *Sim) newMachine(i int) error { return s.newMachineAt(i, s.cfg.Member.Incarnation) }

func (s *Sim) newMachineAt(i int, inc swim.Incarnation) error {
	sm := s.members[i]
	mc := s.cfg.Member
	mc.Self = sm.node
	mc.Incarnation = inc
	mc.SyncProbes = true // the phases of the periods come from StartSpread
	if s.cfg.Signed {
		mc.SigningKey = s.key(i)
	}
	sm.gen++
	if mc.JoinTokens == nil {
		// Join tokens from a source of their own: the members' generators
		// draw the same numbers whether or not they join.
		tokens := rand.New(rand.NewPCG(s.cfg.Seed^0x6a6f696e, uint64(i)<<20|uint64(sm.gen)))
		mc.JoinTokens = tokens.Uint64
	}
	m, err := swim.New(mc, rand.New(rand.NewPCG(s.cfg.Seed, uint64(i)<<20|uint64(sm.gen))))
	if err != nil {
		return err
	}
	sm.m = m
	sm.hasSched = false
	return nil
}

// PacketHook observes every packet delivered to a member (before it is
// processed).
type PacketHook func(now time.Duration, to int, p *swim.Packet)

// SetPacketHook installs the observer of delivered packets.
func (s *Sim) SetPacketHook(h PacketHook) { s.phook = h }

// MessageHook is called with every application message a member
// delivers (swim.Ready.Messages): broadcasts and direct messages.
type MessageHook func(now time.Duration, receiver int, msg swim.Message)

// SetMessageHook installs h (nil removes it).
func (s *Sim) SetMessageHook(h MessageHook) { s.mhook = h }

// SetEventHook installs the observer of membership events.
func (s *Sim) SetEventHook(h EventHook) { s.hook = h }

// Now returns the virtual time.
func (s *Sim) Now() time.Duration { return s.now }

// N returns the number of members.
func (s *Sim) N() int { return len(s.members) }

// Member returns member i's state machine (a new one after a restart).
func (s *Sim) Member(i int) *swim.Member { return s.members[i].m }

// Node returns member i's ID and address.
func (s *Sim) Node(i int) swim.Node { return s.members[i].node }

// Index returns the member index of an ID, or -1.
func (s *Sim) Index(id swim.ID) int {
	if i, ok := s.byAddr[string(id)]; ok {
		return i
	}
	return -1
}

// Stats returns member i's traffic counters.
func (s *Sim) Stats(i int) MemberStats { return s.members[i].stats }

// Dropped returns the number of packets lost (loss, partition, crashed or
// paused-and-dropping receiver, unknown address).
func (s *Sim) Dropped() int64 { return s.dropped }

// Crashed reports whether member i is crashed.
func (s *Sim) Crashed(i int) bool { return s.members[i].crashed }

// Paused reports whether member i is paused now.
func (s *Sim) Paused(i int) bool { return s.members[i].paused }

func (s *Sim) alloc() *event {
	if n := len(s.free); n > 0 {
		e := s.free[n-1]
		s.free = s.free[:n-1]
		return e
	}
	return new(event)
}

func (s *Sim) release(e *event) {
	*e = event{}
	s.free = append(s.free, e)
}

func (s *Sim) push(e *event) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.h, e)
}

// At schedules fn at virtual time at (not before now).
func (s *Sim) At(at time.Duration, fn func()) {
	e := s.alloc()
	e.at, e.kind, e.fn = max(at, s.now), evAction, fn
	s.push(e)
}

func (s *Sim) scheduleTick(i int, at time.Duration) {
	sm := s.members[i]
	if sm.hasSched && sm.scheduled <= at {
		return
	}
	sm.scheduled, sm.hasSched = at, true
	e := s.alloc()
	e.at, e.kind, e.to, e.gen = at, evTick, i, sm.gen
	s.push(e)
}

// RunUntil processes events up to and including virtual time t.
func (s *Sim) RunUntil(t time.Duration) {
	for len(s.h) > 0 && s.h[0].at <= t {
		e := heap.Pop(&s.h).(*event)
		s.now = e.at
		switch e.kind {
		case evAction:
			e.fn()
		case evTick:
			sm := s.members[e.to]
			if e.gen == sm.gen && sm.hasSched && sm.scheduled == e.at {
				sm.hasSched = false
				if !sm.crashed && !sm.paused {
					sm.m.Tick(s.now)
					s.flush(e.to)
				}
			}
		case evDeliver:
			sm := s.members[e.to]
			switch {
			case sm.crashed:
				s.dropped++
			case sm.paused:
				if s.cfg.DropWhilePaused {
					s.dropped++
				} else {
					sm.queue = append(sm.queue, e)
					continue // keep e alive in the queue
				}
			default:
				s.deliver(e.to, e)
			}
		}
		s.release(e)
	}
	if s.now < t {
		s.now = t
	}
}

func (s *Sim) deliver(i int, e *event) {
	sm := s.members[i]
	sm.stats.RecvMsgs++
	sm.stats.RecvBytes += int64(e.size)
	s.steps++
	if s.phook != nil {
		s.phook(s.now, i, &e.pkt)
	}
	_ = sm.m.Step(s.now, &e.pkt) // the simulator only sends valid packets
	s.flush(i)
}

// flush sends member i's output and reschedules its timer.
func (s *Sim) flush(i int) {
	sm := s.members[i]
	r := sm.m.Ready()
	for k := range r.Packets {
		s.route(i, &r.Packets[k])
	}
	for _, sp := range r.StreamProbes {
		s.streamProbe(i, sp)
	}
	if s.hook != nil {
		for _, ev := range r.Events {
			s.hook(s.now, i, ev)
		}
	}
	if s.mhook != nil {
		for _, msg := range r.Messages {
			s.mhook(s.now, i, msg)
		}
	}
	if at, ok := sm.m.NextDeadline(); ok {
		s.scheduleTick(i, max(at, s.now))
	}
}

func (s *Sim) route(from int, p *swim.Packet) {
	sm := s.members[from]
	size := p.Size()
	sm.stats.SentMsgs++
	sm.stats.SentBytes += int64(size)
	if p.Kind == swim.MsgJoin || p.Kind == swim.MsgSync {
		sm.stats.SentSync++
	}
	to, ok := s.byAddr[p.To.Addr]
	if !ok || to == from {
		s.dropped++
		return
	}
	if s.group != nil && s.group[from] != s.group[to] {
		s.dropped++
		return
	}
	if s.cfg.UDPBlocked != nil && s.cfg.UDPBlocked(from, to) {
		s.dropped++
		return
	}
	if s.cfg.Drop != nil && s.cfg.Drop(s.now, from, to, p) {
		s.dropped++
		return
	}
	loss := s.cfg.Loss
	if s.cfg.LinkLoss != nil {
		loss = s.cfg.LinkLoss(from, to)
	}
	if loss > 0 && s.rng.Float64() < loss {
		s.dropped++
		return
	}
	e := s.alloc()
	e.at = s.now + s.cfg.Delay(from, to, s.rng)
	e.kind, e.to, e.pkt, e.size = evDeliver, to, *p, size
	s.push(e)
}

// streamProbe models a stream fallback ping from member from: a
// connection handshake and the ping and its ack, two round trips of the
// link's delay, lossless (a stream retransmits) and blind to UDPBlocked.
// The target answers it (swim.Member.AnswerStreamPing: the updates it
// carries applied, an ack with the target's Alive) when the ping reaches
// it; the prober applies the ack's updates and gets StreamAck when the ack
// arrives, unless it crashed, restarted or is paused then (the answer is
// lost). The ping fails (StreamFailed) as a real one does: at once for a
// crashed target or an unknown address (nothing listens: the connection is
// refused or reset), at its deadline across a partition (the connection is
// never set up); a paused target's kernel accepts the connection and holds
// the ping until the pause ends, when the target answers it, or the prober
// gives up at the deadline. An ack that would arrive after the deadline
// is a failure at the deadline.
func (s *Sim) streamProbe(from int, sp swim.StreamProbe) {
	to, ok := s.byAddr[sp.To.Addr]
	prober := s.members[from]
	gen := prober.gen
	if !ok || to == from {
		s.At(s.now, func() { s.streamAnswer(from, gen, sp, nil) })
		return
	}
	// The prober gives up at the deadline; the first of that and the
	// answer (or a reset) is its outcome.
	done := false
	finish := func(ack *swim.Packet) {
		if !done {
			done = true
			s.streamAnswer(from, gen, sp, ack)
		}
	}
	s.At(sp.Deadline, func() { finish(nil) })
	if s.group != nil && s.group[from] != s.group[to] {
		return // never connects
	}
	there := s.cfg.Delay(from, to, s.rng) + s.cfg.Delay(to, from, s.rng) + s.cfg.Delay(from, to, s.rng)
	back := s.cfg.Delay(to, from, s.rng)
	ping := swim.Packet{Kind: swim.MsgPing, From: prober.node, To: sp.To, Ping: swim.Ping{Seq: sp.Seq},
		Updates: append([]swim.Update(nil), sp.Updates...)}
	s.At(s.now+there, func() { s.streamArrive(to, &ping, back, &done, finish) })
}

// streamArrive delivers a stream ping to member to's host, back being the
// answer's delay to the prober; finish hands the prober its outcome, done
// once it has one.
func (s *Sim) streamArrive(to int, ping *swim.Packet, back time.Duration, done *bool, finish func(*swim.Packet)) {
	tm := s.members[to]
	switch {
	case *done:
		return // the prober gave up: the connection is closed
	case tm.crashed && tm.silent:
		return // nothing answers: the prober gives up at the deadline
	case tm.crashed:
		s.At(s.now+back, func() { finish(nil) }) // reset
		return
	case tm.paused:
		// Held until the pause ends (looked at again then: the member
		// may have crashed, or paused again).
		s.At(tm.pausedUntil, func() { s.streamArrive(to, ping, back, done, finish) })
		return
	}
	var ack *swim.Packet
	if a, err := tm.m.AnswerStreamPing(s.now, ping); err == nil {
		a.Updates = append([]swim.Update(nil), a.Updates...)
		ack = &a
	}
	s.flush(to)
	s.At(s.now+back, func() { finish(ack) })
}

func (s *Sim) streamAnswer(from, gen int, sp swim.StreamProbe, ack *swim.Packet) {
	if s.streamHook != nil {
		s.streamHook(s.now, sp, ack != nil)
	}
	sm := s.members[from]
	if sm.gen != gen || sm.crashed || sm.paused {
		return
	}
	if ack != nil {
		if len(ack.Updates) > 0 && !s.noAckUpdates {
			g := swim.Packet{Kind: swim.MsgGossip, From: ack.From, To: sm.node, Updates: ack.Updates}
			_ = sm.m.Step(s.now, &g)
		}
		sm.m.StreamAck(s.now, sp.To.ID, sp.Seq)
	} else {
		sm.m.StreamFailed(s.now, sp.To.ID, sp.Seq)
	}
	s.flush(from)
}
