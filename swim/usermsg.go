package swim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Application messages: the roles of memberlist's Delegate and its
// TransmitLimitedQueue in the pure core (docs/algorithms.md, “SWIM:
// application messages”).
//
//   - Broadcast queues a message that spreads to every member by
//     infection, piggybacked on the protocol's packets after the membership
//     updates, in the bytes they leave, each member passing each message on
//     λ·ceil(log10(n+1)) times like an update (SWIM §4.1);
//   - SendTo sends one message to one member, best effort (MsgUser);
//   - Config.LocalState is the application's state, sent with every view
//     transfer (a join's answer and each anti-entropy exchange) and
//     delivered to the receiver in Ready.RemoteStates.
//
// Received broadcasts and messages are delivered in Ready.Messages.

// Broadcast is one application broadcast as it travels: Origin is the
// member that queued it and Seq its number there (increasing per origin),
// which receivers use to deliver each broadcast once; Key, when not empty,
// names what the broadcast is about: a newer broadcast from the same
// origin with the same key supersedes (removes from the queue) an older
// one not yet fully sent (memberlist's NamedBroadcast invalidation).
type Broadcast struct {
	Origin ID
	Seq    uint64
	Key    string // at most MaxBroadcastKeyLen bytes
	Data   []byte // 1 to MaxBroadcastLen bytes
}

// MaxBroadcastKeyLen bounds a broadcast's Key, in bytes.
const MaxBroadcastKeyLen = 255

// Size is the bound Packet.Size counts for b: origin, sequence number
// (10 bytes), key and data, each string with a 2-byte length prefix.
func (b *Broadcast) Size() int { return 2 + len(b.Origin) + 10 + 2 + len(b.Key) + 2 + len(b.Data) }

// Message is an application message delivered to this member (Ready.Messages):
// a broadcast (Broadcast true; From is its origin, not necessarily the
// member whose packet carried it) or a direct message sent with SendTo.
// FromHeldAddr, for a direct message only, reports that before its
// packet was merged this member held From at the address the packet
// names, and the transport received the packet from there as far as it
// can tell (Step, not StepFromOtherSource): a message forged under a
// member's ID from another address (in plain mode anyone can send under
// any ID) has it false, as has a message from a member not yet held or
// one whose packet leaves its sender's address out (SendTo's name it;
// swim/agent checks only the host of a packet that does not). A forger
// that sends from the member's own address (spoofing its IP address and
// port) cannot be told apart.
type Message struct {
	From         ID
	Data         []byte
	Broadcast    bool
	Key          string // the broadcast's key
	FromHeldAddr bool
}

// RemoteState is the application state another member sent with a view
// transfer (Config.LocalState), delivered in Ready.RemoteStates. Join is
// true when the transfer answers this member's join: it came while
// Joining, or it is the seed's own answer, echoing the join's token, after
// a view without the token answered the join at once (answersJoin).
type RemoteState struct {
	From  Node
	State []byte
	Join  bool
}

// Errors of the application-message methods.
var (
	// ErrMessageSize: a message is empty or too large (see Broadcast and
	// SendTo for the bounds).
	ErrMessageSize = errors.New("swim: application message size")
	// ErrUnknownMember: SendTo names a member not alive or suspect in the
	// view.
	ErrUnknownMember = errors.New("swim: no such live member")
)

// Defaults of the application-message bounds.
const (
	DefaultMaxQueuedBroadcasts = 1024
	DefaultMaxStateSize        = 512
)

// userBcast is one broadcast in this member's queue.
type userBcast struct {
	b    Broadcast
	tx   int
	id   uint64 // queue order: higher is newer
	from ID     // the member it was received from, which has it; empty: this member's own
	to   []ID   // the members it was sent to (tx of them)
	rk   int    // rank, set by attachBroadcasts before it sorts the queue
	turn int    // its origin's round in the rank (attachBroadcasts)
	// queued is its origin's entry in app.queued, shared by the origin's
	// queued broadcasts.
	queued *originQueued
}

// originQueued is what the queue knows of one origin: n, its queued
// broadcasts (evictable), and turns, a counter for takeTurns.
type originQueued struct {
	n, turns int
}

// own reports whether q is this member's own broadcast (Broadcast), not
// one it relays.
func (q *userBcast) own() bool { return q.from == "" }

// rank orders q in the queue: 0 for this member's own broadcasts, 1 for
// relayed ones whose origin this member holds alive or suspect, 2 for
// the others (an origin not in the view, or down). Lower ranks go first
// in packets and are dropped last (queueBroadcast, attachBroadcasts).
func (m *Member) rank(q *userBcast) int {
	if q.own() {
		return 0
	}
	if m.heldLive(q.b.Origin) {
		return 1
	}
	return 2
}

// Broadcast queues data (1 to MaxBroadcastLen bytes; copied) for delivery
// to every other member, best effort: it rides on the protocol's packets
// in the bytes the membership updates leave, and each member that receives
// it passes it on λ·ceil(log10(n+1)) times (Config.RetransmitMult). A
// non-empty key (at most MaxBroadcastKeyLen bytes) supersedes this member's
// queued broadcast with the same key. The queue holds at most
// Config.MaxQueuedBroadcasts broadcasts, its own and those it relays; this
// member's own go first in every packet and are never dropped for relayed
// ones, however many other members' broadcasts arrive, and relayed ones
// from origins held live go before those from origins not in the view.
// When full, a relayed one is dropped (Stats.BroadcastsDropped), or, with
// only this member's own queued, its most-sent own one, counted in
// Stats.BroadcastsOwnDropped too. Besides a newer broadcast with its
// key, that is the only way one of this member's broadcasts leaves the
// queue before it is sent λ·ceil(log10(n+1)) times or to every other live
// member: the application queues them faster than packets carry them.
// Errors: ErrMessageSize, ErrLeft. Broadcast numbers the broadcast one
// above this member's last; BroadcastAt numbers it from a clock.
func (m *Member) Broadcast(key string, data []byte) error {
	return m.BroadcastAt(0, key, data)
}

// BroadcastAt is Broadcast numbered max(last+1, clock), last the number of
// this member's previous broadcast (Config.FirstBroadcastSeq before the
// first): clock is the origin's clock at the broadcast in the unit of
// its receivers' Config.BroadcastSeqCeiling (the agent: its wall clock in
// Unix nanoseconds), read by the caller. Numbers that follow the clock
// pass a forged number under this member's name within the ceiling's lead
// once the clock passes it: a forged number near the present, above an
// origin numbered from its start time plus one per broadcast, silenced
// that origin's broadcasts for good (issue 27, atk27 F2). 0 numbers it as
// Broadcast does.
func (m *Member) BroadcastAt(clock uint64, key string, data []byte) error {
	switch {
	case len(data) == 0 || len(data) > MaxBroadcastLen:
		return fmt.Errorf("%w: broadcast of %d bytes, want 1 to %d", ErrMessageSize, len(data), MaxBroadcastLen)
	case len(key) > MaxBroadcastKeyLen:
		return fmt.Errorf("%w: broadcast key of %d bytes, at most %d", ErrMessageSize, len(key), MaxBroadcastKeyLen)
	case m.st != running:
		return ErrLeft
	}
	b := Broadcast{Origin: m.self.ID, Seq: max(m.app.seq+1, clock), Key: key, Data: slices.Clone(data)}
	if err := m.checkBroadcastFits(&b); err != nil {
		return err
	}
	m.app.seq = b.Seq
	m.queueBroadcast(b, "")
	m.stats.BroadcastsQueued++
	return nil
}

// checkBroadcastFits refuses a broadcast that could not ride on a ping
// to a member with an ID and address as long as this member's, or that
// is larger than Config.BroadcastBudget (attachBroadcasts would never
// send it).
func (m *Member) checkBroadcastFits(b *Broadcast) error {
	probe := Packet{Kind: MsgPing, From: m.self, To: m.self, Broadcasts: []Broadcast{*b}}
	if s := probe.Size(); s > m.cfg.MaxPacketSize {
		return fmt.Errorf("%w: broadcast needs %d bytes in a packet, MaxPacketSize is %d", ErrMessageSize, s, m.cfg.MaxPacketSize)
	}
	if m.overBudget(b) {
		return fmt.Errorf("%w: broadcast needs %d bytes with its section, BroadcastBudget is %d",
			ErrMessageSize, b.Size()+broadcastSection, m.cfg.BroadcastBudget)
	}
	return nil
}

// broadcastSection is what a packet's broadcasts entry costs besides the
// broadcasts (see Packet.Size).
const broadcastSection = 1 + 3 + 3

// overBudget reports whether b can never ride within Config.BroadcastBudget.
func (m *Member) overBudget(b *Broadcast) bool {
	return m.cfg.BroadcastBudget > 0 && b.Size()+broadcastSection > m.cfg.BroadcastBudget
}

// queueBroadcast adds b, this member's own (from empty) or received from
// from, to the queue, removing a queued broadcast it supersedes (same
// origin and key, lower Seq). When the queue is full it drops a relayed
// broadcast, one whose origin is not held live first, the most-sent (the
// oldest among equals), or b itself when b is relayed and the queue holds
// only this member's own, or else the most-sent of its own (evictable):
// this member's broadcasts are never dropped for relayed ones, nor those
// of live members for made-up origins. A flood of broadcasts from ever
// new origins, each at 0 sends, otherwise evicted this member's own
// within a tenth of a second of being queued (issue 27, user46 M1).
func (m *Member) queueBroadcast(b Broadcast, from ID) {
	if b.Key != "" {
		i := slices.IndexFunc(m.app.queue, func(q *userBcast) bool { return q.b.Origin == b.Origin && q.b.Key == b.Key })
		if i >= 0 {
			if m.app.queue[i].b.Seq >= b.Seq {
				return // ours is newer: b is superseded already
			}
			m.unqueued(m.app.queue[i])
			m.app.queue = slices.Delete(m.app.queue, i, i+1)
			m.stats.BroadcastsSuperseded++
		}
	}
	if len(m.app.queue) >= m.cfg.MaxQueuedBroadcasts {
		i := m.evictable(from == "")
		if i < 0 {
			m.stats.BroadcastsDropped++ // relayed, and the queue holds only this member's own
			return
		}
		if m.app.queue[i].own() {
			m.stats.BroadcastsOwnDropped++
		}
		m.unqueued(m.app.queue[i])
		m.app.queue = slices.Delete(m.app.queue, i, i+1)
		m.stats.BroadcastsDropped++
	}
	m.app.lastID++
	o := m.app.queued[b.Origin]
	if o == nil {
		if m.app.queued == nil {
			m.app.queued = make(map[ID]*originQueued)
		}
		o = &originQueued{}
		m.app.queued[b.Origin] = o
	}
	o.n++
	m.app.queue = append(m.app.queue, &userBcast{b: b, id: m.app.lastID, from: from, queued: o})
}

// unqueued counts q out of its origin's queued broadcasts (app.queued),
// as it leaves the queue.
func (m *Member) unqueued(q *userBcast) {
	if q.queued.n--; q.queued.n <= 0 {
		delete(m.app.queued, q.b.Origin)
	}
}

// evictable returns the index of the queued broadcast to drop for a new
// one (own: this member's): one of the highest rank (relayed from an
// origin not held live, then relayed, then this member's own), from the
// origin with the most queued among those, the most-sent of that
// origin's, the oldest among equals; -1 when the new one is relayed and
// the queue holds only this member's own (the new one is dropped). One
// origin's flood thus evicts its own broadcasts before the other
// origins' of its rank: a live member sending 45 broadcasts every 4 ms
// under its own ID evicted the relayed broadcasts of the others, always
// sent more than its fresh ones, and 4 to 6 of 11 members missed some of
// another member's writes (issue 27, atk27 F4).
func (m *Member) evictable(own bool) int {
	i, ri, ci := -1, 0, 0
	for j, q := range m.app.queue {
		r := m.rank(q)
		if r == 0 && !own {
			continue
		}
		c := q.queued.n
		if i < 0 || r > ri || (r == ri && c > ci) {
			i, ri, ci = j, r, c
			continue
		}
		if p := m.app.queue[i]; r == ri && c == ci && (q.tx > p.tx || (q.tx == p.tx && q.id < p.id)) {
			i, ci = j, c
		}
	}
	return i
}

// takeTurns reorders the queue, sorted by rank then least sent, newest
// first, so that within a rank the origins take turns: every origin's
// first, in the queue's order, then every one's second, and so on. A
// counting sort by turn, stable, per rank (attachBroadcasts).
func (m *Member) takeTurns() {
	q := m.app.queue
	for _, e := range q {
		e.queued.turns = 0
	}
	for start := 0; start < len(q); {
		end, top := start, 0
		for ; end < len(q) && q[end].rk == q[start].rk; end++ {
			o := q[end].queued
			q[end].turn = o.turns
			o.turns++
			top = max(top, q[end].turn)
		}
		if top > 0 {
			// At[t] is where turn t starts in the rank's segment.
			at := slices.Grow(m.app.turnAt[:0], top+2)[:top+2]
			clear(at)
			for _, e := range q[start:end] {
				at[e.turn+1]++
			}
			for t := 1; t < len(at); t++ {
				at[t] += at[t-1]
			}
			out := slices.Grow(m.app.scratch[:0], end-start)[:end-start]
			for _, e := range q[start:end] {
				out[at[e.turn]] = e
				at[e.turn]++
			}
			copy(q[start:end], out)
			clear(out)
			m.app.turnAt, m.app.scratch = at, out[:0]
		}
		start = end
	}
}

// attachBroadcasts returns the queued broadcasts for a packet to `to`,
// this member's own first, then those it relays from origins it holds
// alive or suspect, then the others, each least sent first (newest first
// among equals), that fit in budget bytes,
// counting a transmission for each and dropping those sent
// λ·ceil(log10(n+1)) times or to every other live member. A broadcast is sent at most once to each
// member, and never back to its origin or to the member it came from (the
// ack of the ping that brought it would): each transmission reaches a
// member that may not have it.
func (m *Member) attachBroadcasts(to ID, budget int) []Broadcast {
	if b := m.cfg.BroadcastBudget; b > 0 {
		budget = min(budget, b)
	}
	if len(m.app.queue) == 0 || budget <= 0 {
		return nil
	}
	budget -= broadcastSection
	for _, q := range m.app.queue {
		q.rk = m.rank(q) // once per entry, not in every comparison: a view lookup each
	}
	slices.SortFunc(m.app.queue, func(a, b *userBcast) int {
		if c := cmp.Compare(a.rk, b.rk); c != 0 {
			// This member's own first, then those of live origins: the
			// newest least-sent first order alone sent a flood of relayed
			// broadcasts from made-up origins, always newer, before them
			// (issue 27, user46 M1).
			return c
		}
		if c := cmp.Compare(a.tx, b.tx); c != 0 {
			return c
		}
		return cmp.Compare(b.id, a.id)
	})
	// Within a rank, the origins take turns: each origin's first in that
	// order, then each one's second, and so on, so that one origin's
	// flood, always least sent and newest, does not keep the others'
	// relayed broadcasts out of every packet (atk27 F4).
	m.takeTurns()
	var out []Broadcast
	for _, q := range m.app.queue {
		s := q.b.Size()
		if s > budget || q.from == to || q.b.Origin == to || slices.Contains(q.to, to) {
			continue
		}
		out = append(out, q.b)
		budget -= s
		q.tx++
		q.to = append(q.to, to)
		if budget < 32 {
			break
		}
	}
	limit := retransmitLimit(m.cfg.RetransmitMult, m.groupSize())
	m.app.queue = slices.DeleteFunc(m.app.queue, func(q *userBcast) bool {
		reach := q.tx // members known to have it, this one excluded
		if q.from != "" {
			reach++
		}
		if q.b.Origin != m.self.ID && q.b.Origin != q.from {
			reach++
		}
		if q.tx >= limit || reach >= m.live {
			m.unqueued(q)
			return true
		}
		return false
	})
	return out
}

// receiveBroadcasts delivers the broadcasts of a received packet that are
// new and, when relay is true, queues them to pass on. relay is false for
// a packet whose sender this member did not hold alive or suspect at the
// address it came from (inbound.liveSender false: a stranger, a member
// held dead, StepFromOtherSource): its broadcasts are delivered, not
// passed on (Stats.BroadcastsUnrelayed), so that an outsider's flood does
// not take the queue that carries the members' own broadcasts, and only
// when they fill a gap below the highest number delivered from their
// origin; the others are dropped (Stats.BroadcastsUnvouched), so that
// such a sender can neither raise an origin's window above its genuine
// numbers nor make this member remember made-up origins. The sender's
// own broadcasts from the address this member holds it at (held: a
// member held dead, resumed before it refutes) are delivered whatever
// their numbers: it counts this member as reached, and dropped they were
// lost. A member piggybacks broadcasts only on packets to members it
// verified, which as a rule hold it alive too and relay them.
func (m *Member) receiveBroadcasts(now time.Duration, from ID, bs []Broadcast, relay, held bool) {
	for _, b := range bs {
		if b.Origin == m.self.ID {
			continue
		}
		if c := m.cfg.BroadcastSeqCeiling; c != nil && b.Seq > c(now) {
			m.stats.BroadcastsImplausible++
			continue
		}
		w := m.app.seen[b.Origin]
		if !relay && !(held && b.Origin == from) && (w == nil || w.above(b.Seq)) {
			// From a sender not held live, only a gap below what the
			// origin's window holds: a number above it would raise the
			// window for every later genuine broadcast, and 64 forged
			// numbers under the ceiling, renewed every MaxBroadcastLead,
			// silenced an origin for as long as a stranger kept sending
			// (issue 27, atk27 F2). Members that hold the sender live
			// pass its genuine broadcasts on.
			m.stats.BroadcastsUnvouched++
			continue
		}
		if w == nil {
			if m.app.seen == nil {
				m.app.seen = make(map[ID]*seenWindow)
			}
			if len(m.app.seen) >= m.cfg.MaxMembers {
				// Bounded: forget one origin's window (its old broadcasts
				// may then be delivered again), or refuse the broadcast.
				id, ok := m.forgettableOrigin(b.Origin)
				if !ok {
					m.stats.BroadcastOriginsRefused++
					continue
				}
				delete(m.app.seen, id)
				m.stats.BroadcastOriginsForgotten++
			}
			w = &seenWindow{}
			m.app.seen[b.Origin] = w
		}
		if ok, stale := w.freshIn(b.Seq, m.windowLen(b.Origin)); !ok {
			if stale {
				m.stats.BroadcastsStale++
			}
			continue
		}
		if b.Key != "" && slices.ContainsFunc(m.app.queue, func(q *userBcast) bool {
			return q.b.Origin == b.Origin && q.b.Key == b.Key && q.b.Seq > b.Seq
		}) {
			// A newer broadcast about the same key arrived first: this
			// one is stale, neither delivered nor passed on.
			m.stats.BroadcastsSuperseded++
			continue
		}
		m.stats.BroadcastsReceived++
		m.app.msgs = append(m.app.msgs, Message{From: b.Origin, Data: b.Data, Broadcast: true, Key: b.Key})
		if m.overBudget(&b) {
			continue // from a member with a larger budget: this one cannot pass it on
		}
		if !relay {
			m.stats.BroadcastsUnrelayed++
			continue
		}
		m.queueBroadcast(b, from)
	}
}

// SendTo sends data to the member id in one MsgUser packet at now, best
// effort (no acknowledgement, no retry), with the usual piggybacked
// updates and broadcasts when this member has heard from id directly,
// else with only what id should hear about itself (a member only told of
// may be a name planted at another host's address). The queue goes on the
// budget of the answers to id (queuedAnswer, reply.go): about one packet
// a ProbeInterval to one member carries it, whether an ack or a message;
// a message over the budget goes with the notice and this member's own
// Alive if queued (Stats.MessagesUnqueued), so that an application that
// answers every message with SendTo does not send the queue to whoever
// forges messages from a member's address. The message itself is always
// sent. data must fit one packet with the two nodes' IDs and addresses
// (Packet.Size within Config.MaxPacketSize). Errors: ErrMessageSize,
// ErrUnknownMember (id not alive or suspect in the view), ErrLeft.
func (m *Member) SendTo(now time.Duration, id ID, data []byte) error {
	if m.st != running {
		return ErrLeft
	}
	p := m.peers[id]
	if p == nil || (p.state != StateAlive && p.state != StateSuspect) {
		return fmt.Errorf("%w: %q", ErrUnknownMember, id)
	}
	pk := Packet{Kind: MsgUser, From: m.self, To: p.node, User: slices.Clone(data)}
	if s := pk.Size(); len(data) == 0 || s > m.cfg.MaxPacketSize {
		return fmt.Errorf("%w: message of %d bytes needs %d in a packet, want 1 byte and at most MaxPacketSize %d",
			ErrMessageSize, len(data), s, m.cfg.MaxPacketSize)
	}
	m.stats.MessagesSent++
	if !m.queuedAnswer(now, p) {
		m.stats.MessagesUnqueued++
		m.sendWithin(m.withOwnAlive(pk, m.cfg.MaxPacketSize), m.cfg.MaxPacketSize, false)
		return nil
	}
	m.send(pk) // the queue only if p is verified (verify.go, “sending”)
	return nil
}

// sendState sends, after a view transfer to `to`, the application's state
// (Config.LocalState) in one more MsgSync packet carrying this member's
// Alive and the digest of this member's view (a receiver with a
// MergeFilter delivers the answer to its own pull at once when the digest
// is its own; heldstate.go), echoing token (Packet.JoinToken; 0: none); a
// state larger than Config.MaxStateSize, or than a packet holds, is not
// sent (Stats.StatesTooLarge).
func (m *Member) sendState(to Node, join bool, token uint64) {
	if m.cfg.LocalState == nil {
		return
	}
	st := m.cfg.LocalState(join)
	if len(st) == 0 {
		return
	}
	pk := Packet{Kind: MsgSync, From: m.self, To: to, State: slices.Clone(st), Updates: []Update{m.selfAlive()}, Digest: m.digest(), JoinToken: token}
	if len(st) > m.cfg.MaxStateSize || pk.Size() > m.cfg.MaxPacketSize {
		m.stats.StatesTooLarge++
		return
	}
	m.stats.StatesSent++
	m.ready.packets = append(m.ready.packets, pk)
}

// receiveUser delivers what a received packet carries for the
// application: its broadcasts, its MsgUser body, its state.
func (m *Member) receiveUser(in *inbound, pkt *Packet) {
	if len(pkt.Broadcasts) > 0 {
		m.receiveBroadcasts(in.now, pkt.From.ID, pkt.Broadcasts, in.liveSender, in.vouched)
	}
	if pkt.Kind == MsgUser {
		m.stats.MessagesReceived++
		m.app.msgs = append(m.app.msgs, Message{From: pkt.From.ID, Data: pkt.User, FromHeldAddr: in.vouched && pkt.From.Addr != ""})
	}
	if len(pkt.State) > 0 {
		if len(pkt.State) > m.cfg.MaxStateSize {
			m.stats.StatesTooLarge++
			return
		}
		m.stats.StatesReceived++
		m.app.states = append(m.app.states, RemoteState{From: pkt.From, State: pkt.State, Join: in.joinAnswer})
	}
}
