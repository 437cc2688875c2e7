package swim

import (
	"cmp"
	"slices"
)

// Dissemination (SWIM §4.1): the queue of updates piggybacked on every
// packet sent, each λ·ceil(log10(n+1)) times, and the notices a member
// always sends along to a member it holds suspect, dead or left. Eager
// sends are in eager.go.

// bcast is one update waiting in the dissemination queue.
type bcast struct {
	u  Update
	tx int // transmissions, and Alive copies heard again (heardAgain)
	id uint64
	// viewOf: u is an entry of the view of a group merging with this
	// member's, sent by that member (applyView), news to this member's
	// group only: it is not piggybacked to the members that view brought
	// (peer.viewOf), which hold it already.
	viewOf ID
}

// send completes pk (kind, To, body and any priority updates set by the
// caller) and piggybacks after the caller's updates (when `to` is believed
// dead or gone) the update saying so, so that a live member refutes it,
// then, only to a member this member verified at the address pk goes to
// (verify.go, “sending”), the least-sent updates of the queue and the
// application broadcasts, all within MaxPacketSize. Every path that sends
// to a member goes through here, so none can send the queue to a ghost at
// a victim's address (a rule kept at each call site had missed two).
func (m *Member) send(pk Packet) {
	p := m.peers[pk.To.ID]
	m.sendWithin(pk, m.cfg.MaxPacketSize, p != nil && p.verified && p.node.Addr == pk.To.Addr)
}

// sendWithin is send with the packet held to limit bytes (Packet.Size)
// where MaxPacketSize is larger: the notice goes in only if it fits, and
// the queue's updates and the application broadcasts only with queued,
// as far as they fit (reply.go).
func (m *Member) sendWithin(pk Packet, limit int, queued bool) {
	pk.From = m.self
	to := pk.To
	limit = min(limit, m.cfg.MaxPacketSize)
	budget := limit - pk.Size()
	ups := pk.Updates // the caller's priority updates, counted in pk.Size
	if u, ok := m.notice(to.ID); ok {
		if s := u.Size(); s <= budget {
			ups = append(ups, u)
			budget -= s
		}
	}
	pk.Updates = ups
	if queued {
		pk.Updates = m.piggybackIf(ups, budget, nil, m.peers[to.ID])
		pk.Broadcasts = m.attachBroadcasts(to.ID, limit-pk.Size()) // application broadcasts in what is left
	}
	m.ready.packets = append(m.ready.packets, pk)
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

func (m *Member) gossip(u Update, ok bool) {
	if ok {
		m.enqueue(u)
	}
}

// enqueue adds u to the dissemination queue, replacing any queued update
// about the same member (the newer one supersedes it and starts its
// transmissions from zero). O(1): the queue is indexed by member ID.
func (m *Member) enqueue(u Update) { m.enqueueFrom(u, "") }

// enqueueFrom is enqueue for an entry of the view of viewOf, a member of a
// group merging with this member's (bcast.viewOf; "": any other update).
func (m *Member) enqueueFrom(u Update, viewOf ID) {
	m.queue.seq++
	if b := m.queue.byID[u.Node.ID]; b != nil {
		*b = bcast{u: u, id: m.queue.seq, viewOf: viewOf}
		return
	}
	if m.queue.byID == nil {
		m.queue.byID = make(map[ID]*bcast)
	}
	b := &bcast{u: u, id: m.queue.seq, viewOf: viewOf}
	m.queue.byID[u.Node.ID] = b
	m.queue.items = append(m.queue.items, b)
}

// piggyback appends to ups the queued updates least sent first (newest first
// among equals) that fit in budget bytes, counts a transmission for each, and
// drops those sent λ·ceil(log10(n+1)) times (SWIM §4.1, docs/algorithms.md,
// “SWIM suspicion and incarnations”). A queued update equal to one of the
// priority updates already in ups is not repeated but counts as sent.
func (m *Member) piggyback(ups []Update, budget int) []Update {
	return m.piggybackIf(ups, budget, nil, nil)
}

// piggybackIf is piggyback restricted to the queued updates for which keep
// (nil: all) is true and, when to is the member the packet goes to (nil:
// none known), to the updates that may be news to it: not the entries of
// the merging view that brought it (bcast.viewOf). Sent there, they were
// spent on the one group that held them all: in swim/sim a merge of 80 +
// 80 members left a block of the first group's members unknown to 77 of
// the second's for minutes, every copy of their Alives from the second
// group's seed having gone to members of the first (docs/experiments.md,
// “SWIM: a merging view's entries go to the group that lacks them”).
func (m *Member) piggybackIf(ups []Update, budget int, keep func(*Update) bool, to *peer) []Update {
	if len(m.queue.items) == 0 {
		return ups
	}
	if len(m.queue.items) > 1 {
		slices.SortFunc(m.queue.items, func(a, b *bcast) int {
			if c := cmp.Compare(a.tx, b.tx); c != 0 {
				return c
			}
			return cmp.Compare(b.id, a.id)
		})
	}
	prio := len(ups)
	for _, b := range m.queue.items {
		if keep != nil && !keep(&b.u) || to != nil && b.viewOf != "" && b.viewOf == to.viewOf {
			continue
		}
		if slices.Contains(ups[:prio], b.u) {
			b.tx++ // already in the packet as a priority update
			continue
		}
		s := b.u.Size()
		if s > budget {
			continue
		}
		if ups == nil {
			ups = make([]Update, 0, min(len(m.queue.items), 8))
		}
		ups = append(ups, b.u)
		budget -= s
		b.tx++
		if budget < 32 {
			break
		}
	}
	m.dropTransmitted()
	return ups
}

// dropTransmitted removes from the queue the updates sent
// λ·ceil(log10(n+1)) times.
func (m *Member) dropTransmitted() {
	limit := retransmitLimit(m.cfg.RetransmitMult, m.groupSize())
	m.queue.items = slices.DeleteFunc(m.queue.items, func(b *bcast) bool {
		if b.tx >= limit {
			delete(m.queue.byID, b.u.Node.ID)
			return true
		}
		return false
	})
	m.clearViewMarks()
}

// clearViewMarks clears every member's mark of the merging view that
// brought it (peer.viewOf) once the queue holds no entry of such a view
// (bcast.viewOf): the marks serve only to keep those entries from the
// members that hold them. Kept, they outlived the entries, held the IDs
// of senders long gone, and kept the members a view of X brought from a
// later view of X (X's group merging again after another partition).
// While held, the marks are one per member: bounded by the view
// (MaxMembers) and, for members not verified, by unverifiedQuota. The
// check scans the queue, as piggybackIf's sort does; the members are
// scanned once per clearing (dropTransmitted, forget).
func (m *Member) clearViewMarks() {
	if !m.queue.viewMarked || slices.ContainsFunc(m.queue.items, func(b *bcast) bool { return b.viewOf != "" }) {
		return
	}
	for _, p := range m.all {
		p.viewOf = ""
	}
	m.queue.viewMarked = false
}

// heardAgain counts, for each join announcement in a received gossip that equals
// one waiting in this member's queue, one transmission of the queued copy:
// the sender already knew it, so the rumour is spreading without this
// member's help. This is the "counter" loss of interest of rumour mongering
// (Demers et al., Epidemic algorithms for replicated database maintenance,
// PODC 1987, complex epidemics and their variations), here counted by the
// member that hears the rumour again rather than by the one told what it
// knew (fdkit's piggybacking has no feedback channel). Only Alive updates
// at incarnation 0 are counted: a member's first announcement, which
// refutes nothing. Refutations, suspicions and declarations keep their full
// λ·ceil(log10(n+1)) transmissions: counting refutations heard again too
// let suspecters' timers fire before the refutation reached them (5 false
// positives where there were none, fdswim sim lifeguard, 9 s pauses, C = 16).
// Measured in docs/experiments.md, “Join announcements after convergence”.
func (m *Member) heardAgain(ups []Update) {
	if len(m.queue.items) == 0 {
		return
	}
	for i := range ups {
		u := &ups[i]
		if u.Kind != UpdateAlive || u.Incarnation != 0 {
			continue
		}
		if b := m.queue.byID[u.Node.ID]; b != nil && b.u == *u {
			b.tx++
		}
	}
}
