package swim

import (
	"slices"
	"time"
)

// View transfers: the answer to a join and the periodic anti-entropy
// exchange (push-pull), each a member's whole view in MsgSync packets; an
// exchange sends the views only when a digest of them differs.

// pushPull starts one anti-entropy exchange with a random alive member:
// this member's application state, if it has one (Config.LocalState),
// then a MsgJoin carrying its Alive and the digest of its view. The
// receiver answers with its own state, and, only when its view's digest
// differs, with its whole view and a request for this member's (a MsgJoin
// without digest), so that both end with the union (Step;
// docs/algorithms.md, “SWIM dissemination”). A receiver that predates
// digests answers with its view as to any pull, and the push half is lost.
func (m *Member) pushPull(now time.Duration) {
	var p *peer
	if n := len(m.list); n > 0 {
		for tries := 0; tries < 8 && p == nil; tries++ {
			if c := m.list[m.rng.IntN(n)]; c.state == StateAlive && c.verified {
				p = c
			}
		}
	}
	if p == nil && m.unverified > 0 {
		// Unverified members crowd the list (verify.go): pick among the
		// verified ones.
		seen := 0
		for _, c := range m.list {
			if c.state == StateAlive && c.verified {
				if seen++; m.rng.IntN(seen) == 0 {
					p = c
				}
			}
		}
	}
	if p == nil {
		return
	}
	m.stats.PushPulls++
	m.sendState(p.node, false, 0)
	m.sync.peer, m.sync.peerUntil, m.sync.stateDue = p.node.ID, now+m.cfg.ProbeInterval, true
	m.ready.packets = append(m.ready.packets, Packet{Kind: MsgJoin, From: m.self, To: p.node,
		Updates: []Update{m.selfAlive()}, Digest: m.digest(), JoinToken: m.joinTokenFor(p.node.Addr)})
}

// answerPull answers a MsgJoin from a member already in the group or
// joining (Step): the application state, then the view. A pull with a
// digest equal to this member's gets the state only; a different digest
// gets the view and a request for the sender's view in return. The
// request that answers this member's own latest exchange (from sync.peer
// within ProbeInterval, without digest) gets the view but not the state,
// which went out with the exchange's digest. A member with a MergeFilter
// that holds the sender's state (heldstate.go) asks for the sender's view
// even when the digests match: an equal digest on a state this member did
// not ask for delivers nothing, the view's verdict does. The state and
// the view echo the pull's token (Packet.JoinToken), 0 for none.
func (m *Member) answerPull(now time.Duration, from Node, d ViewDigest, token uint64, joiner bool) {
	if d.IsZero() && from.ID == m.sync.peer && now < m.sync.peerUntil {
		m.sync.peer = ""
	} else {
		m.sendState(from, joiner, token) // first: the joiner is still joining when it reads it
	}
	if !d.IsZero() {
		if d == m.digest() {
			m.stats.DigestMatches++
			if m.cfg.MergeFilter != nil && m.holdsState(from.ID) {
				m.askView(from)
			}
			return
		}
		m.stats.DigestMismatches++
		m.sendSync(from, token)
		m.askView(from)
		return
	}
	m.sendSync(from, token)
}

// askView sends to a MsgJoin carrying this member's Alive, which the
// receiver answers with its view.
func (m *Member) askView(to Node) {
	m.ready.packets = append(m.ready.packets, m.askViewPacket(to))
}

// askViewPacket is askView's request to to.
func (m *Member) askViewPacket(to Node) Packet {
	return Packet{Kind: MsgJoin, From: m.self, To: to, Updates: []Update{m.selfAlive()}, JoinToken: m.joinTokenFor(to.Addr)}
}

// joinTokenFor is the token (Packet.JoinToken) a pull to addr carries:
// the pending join's when addr is one of the addresses joined through,
// whose answer then answers the join (a joiner that heard of its old
// life in the seed's view refutes and asks the seed again), else none.
// Only the seeds are told the token: a view request to an unknown
// sender's address, which anyone may claim, would otherwise hand it to
// a forger.
func (m *Member) joinTokenFor(addr string) uint64 {
	if m.join.pending && slices.Contains(m.join.seeds, addr) {
		return m.join.token
	}
	return 0
}

// ViewDigest summarizes a membership view so that two members can tell,
// from a few bytes, whether their views agree: Members entries (the
// member's own included), and Hash, the sum modulo 2^64 of a 64-bit hash
// of each entry's ID, address, incarnation, state (alive, suspect, dead or
// left) and, for an alive entry, metadata. A sum does not depend on the
// order of the entries. Who raised a suspicion or declaration, proofs and
// version ranges are left out: they do not change what a member believes
// about another, and an entry learnt without them (a relayed Alive, a
// Suspect) would differ forever from the same belief held with them. The
// entry hash is FNV-1a (64 bits) over the fields with their lengths,
// followed by MurmurHash3's 64-bit finalizer so that sums of similar
// entries do not cancel; it is the same in every process. The zero value
// (Members 0) means no digest.
type ViewDigest struct {
	Members uint32
	Hash    uint64
}

// IsZero reports whether d is no digest.
func (d ViewDigest) IsZero() bool { return d.Members == 0 }

// digestSize bounds a digest's extension entry in bytes (Packet.Size):
// tag, length, uvarint count (at most 5 bytes), 8 bytes of hash.
const digestSize = 1 + 1 + 5 + 8

// digest returns the digest of this member's view.
func (m *Member) digest() ViewDigest {
	h := entryHash(m.self, m.inc, StateAlive, m.meta)
	for _, p := range m.all {
		meta := ""
		if p.state == StateAlive {
			meta = p.meta
		}
		h += entryHash(p.node, p.inc, p.state, meta)
	}
	return ViewDigest{Members: uint32(len(m.all) + 1), Hash: h}
}

// entryHash is the hash of one view entry (ViewDigest).
func entryHash(n Node, inc Incarnation, st State, meta string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	str := func(s string) {
		h = (h ^ uint64(len(s)&0xff)) * prime
		h = (h ^ uint64(len(s)>>8)) * prime
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * prime
		}
	}
	str(string(n.ID))
	str(n.Addr)
	for i := 0; i < 64; i += 8 {
		h = (h ^ uint64(inc>>i&0xff)) * prime
	}
	h = (h ^ uint64(st)) * prime
	str(meta)
	// MurmurHash3 fmix64.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// pushPullInterval scales the base interval to the group: unchanged up to
// 32 members, then times ceil(n/32), so that an exchange's cost (a full
// view, about n/40 packets each way) stays about 3 packets per base interval
// whatever n.
func pushPullInterval(base time.Duration, n int) time.Duration {
	const perBase = 32
	return mulTimer(base, (n+perBase-1)/perBase)
}

// pushPullDue returns when the next anti-entropy exchange is due: the
// interval for the current group size after the previous exchange, and the
// first one at a random fraction (drawn at the first Tick) of that interval
// after the first Tick. The size is read when asked, not when the previous
// exchange was scheduled: a member starts alone and joins, and an interval
// fixed at its first Tick (n = 1, 30 s) made all 128 members of a group
// formed together exchange in its first 30 s, 4 times the rate of the
// 120 s interval its size calls for (bench/memberlist, N = 128: 278 bytes
// per member per second of view transfers in the first 20 s).
func (m *Member) pushPullDue() time.Duration {
	iv := pushPullInterval(m.cfg.PushPullInterval, m.groupSize())
	if !m.sync.due {
		return m.sync.from + time.Duration(m.sync.frac*float64(iv))
	}
	return m.sync.from + iv
}

// sendSync answers a join with this member's whole view, in as many
// packets as the size limit needs, each of several marked with its place
// in the transfer (Packet.Part), so that a receiver's MergeFilter can see
// the whole before merging any of it (viewparts.go), and each echoing
// token, the join's it answers (Packet.JoinToken; 0: none). An entry that does not fit a packet
// even alone is left out and counted (Stats.ViewEntriesSkipped) rather than
// sent over the limit: the codec, which encodes what fits, would send that
// packet without updates. Requiring a MaxPacketSize that fits any valid
// entry would need 1,920 bytes plus this member's ID and address (a
// receiver named by 255-byte ID and address, an entry with the largest ID,
// address, metadata and proof), above the 1,400-byte default chosen to stay
// under the Ethernet MTU, for a case ordinary IDs never reach.
func (m *Member) sendSync(to Node, token uint64) {
	ups := m.viewUpdates()
	whole := Packet{Kind: MsgSync, From: m.self, To: to, Updates: ups, JoinToken: token}
	if whole.Size() <= m.cfg.MaxPacketSize {
		m.ready.packets = append(m.ready.packets, whole)
		return
	}
	// In parts, each marked with its place in the transfer (viewparts.go):
	// room for the mark in every packet.
	first := len(m.ready.packets)
	sent := 0
	for len(ups) > 0 {
		pk := Packet{Kind: MsgSync, From: m.self, To: to, Part: Part{Total: 1}, JoinToken: token}
		size := pk.Size()
		n := 0
		for n < len(ups) && size+ups[n].Size() <= m.cfg.MaxPacketSize {
			size += ups[n].Size()
			n++
		}
		if n == 0 { // ups[0] does not fit even alone
			m.stats.ViewEntriesSkipped++
			ups = ups[1:]
			continue
		}
		pk.Updates = ups[:n:n] // ups is this call's own slice: no copy needed
		pk.Part.Offset = uint32(sent)
		sent += n
		ups = ups[n:]
		m.ready.packets = append(m.ready.packets, pk)
	}
	for i := first; i < len(m.ready.packets); i++ {
		m.ready.packets[i].Part.Total = uint32(sent)
	}
}

// viewUpdates returns the entries of this member's view as a view
// transfer states them: its own Alive first, then every member but those
// of blind verdicts.
func (m *Member) viewUpdates() []Update {
	ups := make([]Update, 0, len(m.peers)+1)
	ups = append(ups, m.selfAlive())
	for _, p := range m.all {
		if !m.blindVerdict(p) {
			ups = append(ups, m.viewUpdate(p))
		}
	}
	return ups
}

// blindVerdict reports whether p is suspect or dead in this member's view
// by its own verdict only, reached with no probe of its own acked since
// the suspicion started: every path out of this member may have been
// failing (its datagrams lost, a partition around it), so the verdict says
// more about this member than about p. A view transfer leaves such entries
// out (sendSync): its receiver would take each as a fresh accusation of
// its own (applyView), and a member cut off for a while holds one about
// every other member, all healthy: in plain SWIM, where that many
// refutations compete for piggyback room, some would be declared dead by
// healthy members. Gossip still carries such verdicts (it reaches others
// only when the paths are back), and the receiver probes p itself.
func (m *Member) blindVerdict(p *peer) bool {
	switch p.state {
	case StateSuspect:
		return p.susp.from == m.self.ID && m.probing.lastAck < p.susp.start
	case StateDead:
		return p.blind && p.deadFrom == m.self.ID
	}
	return false
}

// viewUpdate returns the update that states p's entry in the local view.
func (m *Member) viewUpdate(p *peer) Update {
	u := Update{Node: p.node, Incarnation: p.inc}
	switch p.state {
	case StateAlive:
		u.Kind, u.From, u.Proof = UpdateAlive, p.node.ID, p.proof
		u.Meta, u.Versions = p.meta, p.versions
	case StateSuspect:
		u.Kind, u.From = UpdateSuspect, p.susp.from
	case StateDead:
		u.Kind, u.From = UpdateDead, p.deadFrom
	case StateLeft:
		u.Kind, u.From, u.Proof = UpdateDead, p.node.ID, p.proof
	}
	return u
}

// applyView merges one entry of a view transfer (MsgSync: a join answer
// or a push-pull). Alive entries and leaves are applied without gossip
// (old news to the group), except a member added by the view of a group
// merging with this member's (spreadsView), which this member gossips:
// that view is news to this member's group, which otherwise learnt it
// only by anti-entropy, an exchange at a time (TestMergeTwoGroupsFullView:
// 80 + 80 members short of a full view after 300 s). It piggybacks them
// to the members of its own group only, not to those the view brought
// (peer.viewOf, piggybackIf), which hold them already. A fresh joiner does
// not pass its seed's view on, the group holds it (memberlist's joiner
// does, n updates per joiner; announceJoin), nor does an exchange's view
// within one group, whose new members are joiners already gossiped (a
// group of 128 forming through one seed kept its queues 1.75 s past
// convergence where 1 s is asked, TestQueueDrainAfterJoin). A
// Suspect or Dead about a member held alive or
// suspect enters as this member's own suspicion timer (From this member),
// made from hearsay (suspectInstead): told to the suspect in the eager
// modes (at once when verified), gossiped only in plain SWIM, within a
// per-period budget; never as an instant death. This is memberlist's rule for
// push-pull states: a transfer carries no proof the accused heard the
// accusation, and a Dead applied on the spot would leave it no chance to
// refute. See docs/algorithms.md, “SWIM: hostile and stale updates”.
func (m *Member) applyView(in *inbound, u Update) {
	p := m.peers[u.Node.ID]
	if q := m.accusedLive(&u); q != nil {
		m.suspectInstead(in, q, u.Incarnation)
		return
	}
	m.applyUpdate(in, u, false)
	if p == nil && u.Kind == UpdateAlive && m.spreadsView(in) {
		if q := m.peers[u.Node.ID]; q != nil && q.state == StateAlive {
			q.viewOf = in.from
			m.queue.viewMarked = true
			m.enqueueFrom(u, in.from)
		}
	}
}

// spreadsView reports whether the members a view transfer being merged
// with in adds are gossiped (applyView): the view is another group's,
// merging with this member's. It is the seed's answer to this member's
// join when the join found other members live (Join: join.alone false),
// or the view a member whose join this member answered sends back within
// a protocol period (peer.joinedUntil), from the address it claims (one
// naming the joiner from elsewhere is a forger's, StepFromOtherSource),
// which only a joiner holding other members sends (onView, join.merging).
func (m *Member) spreadsView(in *inbound) bool {
	if m.seedView(in, true) {
		return !m.join.alone
	}
	p := m.peers[in.from]
	return p != nil && !in.otherSource && in.now < p.joinedUntil
}

// settleDelay, in protocol periods, is how long after the last member it
// learnt of by gossip a member runs its settling exchange (settlePull).
const settleDelay = 3

// settleBurst is how many settling exchanges may run within one
// anti-entropy interval (settleLater): two, so that a join that follows
// another within an interval (joins spread over seconds or minutes, a
// deployment rolling) gets its own. With one, a member that settled after
// the first waited up to an interval (60 s at n = 64) to mend what it
// missed of the second (measured in swim/sim with 32 members joining
// through one seed under loss: docs/experiments.md, “SWIM: retried view
// requests”).
const settleBurst = 2

// settleLater schedules the settling exchange settleDelay protocol periods
// after now, postponing one already scheduled: called when a gossiped
// Alive names a member this member did not know, or one it held dead or
// left (revive). It comes no sooner than
// an anti-entropy interval after the settleBurst-th previous settling
// exchange: otherwise one forged Alive of an unknown ID every settleDelay
// periods, gossiped to every member, made every member exchange views
// that often, 10 to 20 times the periodic rate (TestSettleFloodBounded),
// and as the settling exchange counts as the periodic one, the
// anti-entropy rate under any stream of new members stays within
// settleBurst times the periodic one.
func (m *Member) settleLater(now time.Duration) {
	if m.cfg.PushPullInterval > 0 {
		m.sync.settleAt = now + mulTimer(m.cfg.ProbeInterval, settleDelay)
		if m.sync.settled == settleBurst {
			m.sync.settleAt = max(m.sync.settleAt, m.sync.settledAt[0]+pushPullInterval(m.cfg.PushPullInterval, m.groupSize()))
		}
	}
}

// settlePull runs, once due, the anti-entropy exchange settleLater
// scheduled (pushPull: a digest, and whole views only where the views
// differ), and counts it as the periodic one: the next periodic exchange
// comes between one and one and a half intervals after it, at a random
// point, so that members that settled together do not exchange in step.
//
// Why: join announcements are rumours, and rumour mongering leaves a
// residue of members that never hear one (Demers et al., Epidemic
// algorithms for replicated database maintenance, PODC 1987, §1.4,
// complex epidemics, and §1.5, backing one up with anti-entropy;
// docs/algorithms.md, “SWIM dissemination”). Here the residue is
// large when many members join through one seed: each joiner learns
// everyone who joined before it from the seed's view, not by gossip, so
// it never passes their announcements on, and most copies the seed
// gossips reach members that know them already; the announcement dies
// with a few earlier members never told. They then waited for the joiner
// to probe them (about n/2 periods) or for their first periodic exchange
// (up to 60 s at n = 64): in swim/sim, 63 members joining through one
// seed 3 ms apart reached a full view after 4.7–40.5 s over 8 seeds,
// 3.3–41.0 s without heardAgain, so counting copies heard again is not
// the cause (TestJoinStormFullViewSoon). A member that learnt of a new
// member by gossip lived through a join, which is when a residue can
// exist; settleDelay periods after the last such member the announcements
// have died out (the last copies went out 1.7–3.2 s after the last join
// there), and one
// exchange with a random member mends what it missed, and what that
// member missed. Where nothing was missed the views agree and the exchange
// is one MsgJoin with a digest; a group that does not change membership
// runs none.
//
// A healed partition is the same: each member that hears it is held dead
// on the other side refutes, and the refutations are rumours. With the
// ring probe order (probeorder.go) every member piggybacks in a round to
// the same offset along the ring, so the copies of a rumour go to
// correlated members, not independent random ones, and they died out
// with a few members still holding some refuted members dead; nothing else reached
// them before the refuted member's probe came round (up to n periods) or
// a reconnect ping picked it: a 150/30 split of 30 s took up to 107 s to
// heal in swim/sim, 2.5–9.7 s with the exchange that a revival heard by
// gossip now schedules (docs/experiments.md, “SWIM: a healed partition
// settles”).
func (m *Member) settlePull(now time.Duration) {
	if m.sync.settleAt == 0 || now < m.sync.settleAt {
		return
	}
	m.sync.settleAt = 0
	if m.st != running || m.live == 0 || m.cfg.PushPullInterval == 0 {
		return
	}
	m.pushPull(now)
	m.sync.from, m.sync.frac, m.sync.due = now, 1+0.5*m.rng.Float64(), false
	copy(m.sync.settledAt[:], m.sync.settledAt[1:])
	m.sync.settledAt[settleBurst-1], m.sync.settled = now, min(m.sync.settled+1, settleBurst)
}
