package swim

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"time"
)

// Joining: a static start (Bootstrap) or a join through seeds, whose
// answer is the seed's view (sync.go).

// Bootstrap adds nodes to the view as alive in incarnation 0 without
// gossiping them and without events: a static start in which every member is
// configured with the same list (simulations, fixed clusters). Nodes already
// known and this member itself are skipped.
func (m *Member) Bootstrap(nodes []Node) {
	for _, n := range nodes {
		if n.ID == m.self.ID || n.ID == "" || m.peers[n.ID] != nil {
			continue
		}
		p := &peer{node: n, state: StateAlive, inList: true, verified: true, reached: n.Addr}
		if m.verifiedAt[n.Addr] == nil {
			// One address speaks for one member (verify): a ghost
			// announced at a configured member's address is not verified
			// by answering from it.
			m.verifiedAt[n.Addr] = p
		}
		m.peers[n.ID] = p
		m.all = append(m.all, p)
		m.live++
		m.list = append(m.list, p)
	}
	m.orderList()
}

// Join starts joining the group through the members at the given addresses:
// each gets a MsgJoin carrying this member's Alive update, and answers with
// its view (MsgSync). Joins are resent every ProbeInterval until a view
// arrives or StopJoin is called; after a view without the join's token
// answered (a seed writing wire format 1, Config.JoinTokenless, or a
// forger: answersJoin), until one echoing it comes (or the seed's answer
// read back on a stream: StepJoinStreamAnswer) or joinFallbackPeriods
// protocol periods pass. A member that holds other live members when it joins (its
// group merging with the seed's) sends its own view, once, to the seed
// whose view answered (after a view without the token, to the seed's
// answer echoing it, or when the resends end: mergePush): the seed's group then learns the joiner's from the
// seed (memberlist's join is likewise a push-pull both ways), not only as
// the joiner's members happen to probe its members (docs/experiments.md,
// “Merging two groups”). A refusal for an ID conflict is reported
// (EventConflict) for every call, however soon after an earlier one: a
// caller that retries a refused join waits for it.
func (m *Member) Join(now time.Duration, seeds []string) error {
	if m.st != running {
		return ErrLeft
	}
	if len(seeds) == 0 {
		return ErrNoSeeds
	}
	m.join.pending, m.join.refusal, m.join.otherView, m.join.seedRefused = true, nil, false, false
	m.join.otherRefusal, m.join.askUntil, m.join.unvouched = false, 0, false
	m.join.token = m.joinToken()
	m.join.holder = Node{}
	m.join.merging, m.join.alone = m.live > 0, m.live == 0
	m.join.mergeHeld, m.join.mergeTo = false, Node{}
	m.join.lastConflict = conflictNote{} // this attempt's refusal is news (conflictEvery)
	m.join.seeds = slices.Clone(seeds)
	m.join.resend = slices.Clone(seeds)
	m.join.stopped = false
	m.sendJoins(now)
	return nil
}

// joinToken draws a Join's token (Packet.JoinToken), never 0:
// Config.JoinTokens, or a ChaCha8 keyed with 32 bytes drawn from rng at
// the first Join, so that a token one seed saw says nothing of the next
// join's.
func (m *Member) joinToken() uint64 {
	if m.cfg.JoinTokens != nil {
		return max(m.cfg.JoinTokens(), 1)
	}
	if m.join.tokens == nil {
		var key [32]byte
		for i := 0; i < len(key); i += 8 {
			binary.LittleEndian.PutUint64(key[i:], m.rng.Uint64())
		}
		m.join.tokens = rand.NewChaCha8(key)
	}
	return max(m.join.tokens.Uint64(), 1)
}

// StopJoin stops the resends of the latest Join: no join is sent until
// Join is called again (the agent calls it when its Join call returns
// unanswered, as memberlist's Join tries each address once). A view that
// answers the join later still completes it (Joining turns false), and
// what has been merged stays.
func (m *Member) StopJoin() { m.join.stopped = true }

// SetJoinSeeds replaces the addresses the resends of the latest Join go
// to, from the next resend on (after StopJoin too), without sending now
// or forgetting what the join heard (JoinRefusal): an agent whose Join
// calls overlap keeps the union of the addresses of those still waiting,
// and drops a call's own when it ends unanswered. With no address it
// stops the resends, as StopJoin. It changes only where the resends go:
// a view from an address of the latest Join, or of a SetJoinSeeds call
// since, still answers the join (Joining) and vouches for its members as
// the seed's view, as after StopJoin.
func (m *Member) SetJoinSeeds(seeds []string) {
	if len(seeds) == 0 {
		m.StopJoin()
		return
	}
	m.join.resend = slices.Clone(seeds)
	for _, s := range seeds {
		if !slices.Contains(m.join.seeds, s) {
			m.join.seeds = append(m.join.seeds, s)
		}
	}
	m.join.stopped = false
}

// Joining reports whether the latest Join still awaits its answer: no
// view transfer that answers it has been merged. A view answers a join
// when it comes from one of the addresses joined through, or, once views
// from other members have come for joinFallbackPeriods protocol periods
// (a seed that advertises another address than the one dialled), from
// any member; with a Config.MergeFilter, only a view the filter accepted
// is merged, and once the filter refused a view from an address joined
// through (a seed answering from the address dialled), only a view from
// such an address answers. A ping or gossip that makes another member known does not
// end a join. False before any Join; a member that leaves while joining
// stays joining.
func (m *Member) Joining() bool { return m.join.pending }

// resending reports whether the latest Join's joins are still resent at
// now (Tick): it awaits its answer, or a view without its token answered
// it and the resends go on for that view's sake until askUntil
// (answersJoin), and no StopJoin came since.
func (m *Member) resending(now time.Duration) bool {
	return (m.join.pending || now < m.join.askUntil) && !m.join.stopped
}

// joinDeadline returns when Tick next has a join's work to do: the next
// resend, and the end of the asking (askUntil) while a merging push waits
// for it (mergePush).
func (m *Member) joinDeadline() (at time.Duration, ok bool) {
	if m.resending(m.join.next) {
		at, ok = m.join.next, true
	}
	if m.join.mergeHeld && m.join.askUntil != 0 && (!ok || m.join.askUntil < at) {
		at, ok = m.join.askUntil, true
	}
	return at, ok
}

// tickJoin ends the asking after a view without the token answered the
// join (joinState.askUntil) at askUntil, sending a merging push held for the
// seed's own answer to the view that answered (mergePush), and resends
// the joins when due.
func (m *Member) tickJoin(now time.Duration) {
	if m.join.askUntil != 0 && now >= m.join.askUntil {
		m.join.askUntil = 0
		if m.join.mergeHeld {
			m.join.merging, m.join.mergeHeld = false, false
			m.sendSync(m.join.mergeTo, 0)
		}
	}
	if m.resending(now) && now >= m.join.next {
		m.sendJoins(now)
	}
}

// seedAnswer reports whether pkt is a view transfer that echoes the
// latest Join's token (never 0), from an address joined through and
// received from there: the seed's own answer to the join, which a forger
// that did not see the join cannot write.
func (m *Member) seedAnswer(in *inbound, pkt *Packet) bool {
	return pkt.Kind == MsgSync && pkt.JoinToken != 0 && pkt.JoinToken == m.join.token && !in.otherSource &&
		slices.Contains(m.join.seeds, pkt.From.Addr)
}

// mergePush sends this member's view, once, to the seed whose view
// answered its join when the join found other members live
// (joinState.merging; Join's doc), after the view pkt from from was
// merged; joined says that pkt answered the join (onView).
//
// A view without the token that answered a format-2 joiner at once (a
// format-1 seed's, or a forger's spoofed from a seed's address:
// answersJoin) does not get it: a forger naming another sender ID than
// the seed's drew the push to that ID, which the seed dropped as
// misdirected, and the seed's own answer, coming after the join had
// ended, sent none, so that two groups of 10 merged in 21 to 50 s instead
// of 0.6 s (atk29b F1). Nor does sending it to the address alone help:
// it reaches the seed before the seed has admitted the joiner (its join
// challenge), and is dropped. The push is held (mergeHeld) until the
// seed's own answer, echoing the token (seedAnswer), which goes after the
// seed admitted the joiner, and goes to its sender; or, for a format-1
// seed, which cannot echo it, until the asking ends (askUntil, tickJoin),
// to the view that answered. A refusal echoing the token (the seed holds
// this member's ID elsewhere) releases nothing. A Config.JoinTokenless
// joiner has no token whose echo could tell the seed's answer from a
// forger's: it pushes to the first view that answers, as before join
// tokens, and a view spoofed from the seed's address draws its push.
func (m *Member) mergePush(in *inbound, from Node, pkt *Packet, joined bool) {
	if !m.join.merging {
		return
	}
	switch {
	case m.join.mergeHeld:
		if !m.seedAnswer(in, pkt) || m.selfRefusal(pkt) {
			return
		}
	case !joined:
		return
	case in.now < m.join.askUntil && !m.cfg.JoinTokenless:
		m.join.mergeHeld, m.join.mergeTo = true, from
		return
	}
	m.join.merging, m.join.mergeHeld = false, false
	m.sendSync(from, 0)
}

func (m *Member) sendJoins(now time.Duration) {
	for _, s := range m.join.resend {
		if s == m.self.Addr {
			continue
		}
		pkt := Packet{Kind: MsgJoin, From: m.self, To: Node{Addr: s},
			Updates: []Update{m.selfAlive()}, JoinToken: m.join.token}
		m.ready.packets = append(m.ready.packets, pkt)
	}
	m.join.next = now + m.cfg.ProbeInterval
}

// maxJoinAnnounce bounds the members a joiner announces itself to
// directly (announceJoin); the rest hear of it by gossip.
const maxJoinAnnounce = 128

// announceJoin sends this member's Alive, in a MsgGossip of its own, to
// every alive or suspect member of its view not yet sent it in this
// incarnation (at most maxJoinAnnounce in all, in the probe list's random
// order), when a view that answers its join arrives (Step: the views of
// the ProbeInterval after the first answer, as a view comes in several
// packets and from several seeds). Not in ModeSWIM, whose members learn
// of a joiner from the seed's gossip only.
//
// Why: a joiner is announced by the seed's gossip, and rumour mongering
// leaves a residue of members that never hear the rumour (Demers et al.,
// Epidemic algorithms for replicated database maintenance, PODC 1987,
// §1.4). In a group forming through one seed the residue is members that
// joined earlier and miss a later joiner; they waited for the settling
// exchange (settlePull, three periods after the last member learnt by
// gossip) or for a probe: in swim/sim, 31 members joining through one seed
// 3 ms apart all held all 32 after 0.65–3.65 s over 6 seeds, 63 after
// 3.7–4.85 s (TestJoinAnnouncedToView). The joiner holds the whole view
// from the seed's answer, so it tells each member itself, one datagram
// each: memberlist's joiner re-broadcasts every member of the state it
// pulled from its seed instead (memberlist's mergeState and aliveNode),
// n updates per joiner rather than one. A receiver applies the Alive as
// gossip (it also spreads it), so a lost announcement is mended by the
// seed's rumour as before. The announcement carries the Alive alone (and
// the notice), not the queue: a member merging its group into the seed's
// queues the members of the seed's view for its own group (applyView), and
// dozens of announcements at once, each carrying the queue, spent their
// transmissions on the seed's group, which held them already (swim/sim,
// TestMergeTwoGroupsFullView: 35 of 80 never reached the joiner's group);
// nor does a member only told of, maybe a ghost at a victim's address
// (verify.go, “sending”), get more than the Alive.
func (m *Member) announceJoin(seed ID) {
	if m.cfg.Mode == ModeSWIM || m.st != running {
		return
	}
	told := m.toldThisIncarnation()
	if len(told) >= maxJoinAnnounce {
		return
	}
	for _, p := range m.list {
		if p.state != StateAlive && p.state != StateSuspect || told[p.node.ID] || p.node.ID == seed {
			continue
		}
		told[p.node.ID] = true
		m.stats.JoinAnnouncements++
		m.sendWithin(Packet{Kind: MsgGossip, To: p.node, Updates: []Update{m.selfAlive()}}, m.cfg.MaxPacketSize, false)
		if len(told) >= maxJoinAnnounce {
			return
		}
	}
}
