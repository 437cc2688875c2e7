package swim

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Probe order: which member a protocol period probes.
//
// SWIM (§4.3, “round-robin probe target selection”) has each member walk
// its own randomly permuted list of the others, one per period, and
// reshuffle it after each pass: every member is probed by each prober
// within 2n−1 periods. The members' lists are independent, so in a given
// period a given member is probed by Binomial(n−1, 1/(n−1)) of them, about
// Poisson(1): in e^−1 of the periods by none. After a crash, the wait until
// the first probe of the crashed member is then about exponential with a
// mean of one period (§3.1 gives e/(e−1) periods to the first detection
// for uniformly random targets); a tenth of the crashes wait more than 2.3
// periods before anyone probes them.
//
// By default (Config.ShuffledProbes off) the members probe in one common
// order instead, the ring: the members sorted by ringKey, a hash of their
// ID that every member computes alike (keyed with Config.RingKey, so that
// identities cannot be placed on it by choosing their IDs). In round r a member probes its
// (1 + r mod L)-th successor on the ring, L being the other live members
// it knows. For a given r that maps the ring onto itself without a fixed
// point, so when the members agree on the view and on r every member is
// probed by exactly one prober per round (a Latin schedule), and each
// prober still walks the whole ring once per L rounds. Each member's
// periods keep their own phase, so the probes of one member fall once per
// period, a phase difference apart: the wait from a crash to its first
// probe is at most two periods, about 7/12 of a period on average.
//
// The members agree on r without a clock and without a byte more: a
// member's own probes carry 2r as their sequence number (every other ping
// an odd one, otherSeq), and a member's next round is one past its last,
// or the latest round it heard in a probe from a verified live member if
// that is ahead (nextRound) and is a round in which that member probes it
// (hearRound): otherwise one member could set each other member's round,
// and with it its target, and make them all probe a victim in the same
// period once per pass and never in between. Rounds then follow the
// member that counts ahead, and once they agree nobody jumps: a round heard from a member
// whose period began earlier is never ahead of this member's next one.
// A member whose periods are longer (its local health multiplier) catches
// up by jumping, and a joiner at its first probe from a member.
//
// Views differ (a member not yet known everywhere, one declared dead at
// some members only), and a member may jump rounds: the schedule is then
// a little less even, never incomplete, since a prober probes each member
// once per pass: the round's target when it has not been probed in this
// pass, else the next one on the ring that has not. A member that sends
// rounds ahead can shift the group's rounds (to those in which it probes
// the member it sends them to), not keep any member from being probed by
// every prober within 2L−1 periods, SWIM's bound. The
// probe budget of unverified members (verify.go) applies as in SWIM's
// order.

// roundMask keeps rounds to 31 bits, so that 2r is a sequence number;
// rounds compare in serial number arithmetic (roundAhead).
const roundMask = 1<<31 - 1

// roundAhead reports whether round a is ahead of round b, in serial
// number arithmetic over 31 bits (RFC 1982): by less than 2^30.
func roundAhead(a, b uint32) bool {
	d := (a - b) & roundMask
	return d != 0 && d < 1<<30
}

// nextRound starts this member's next round of the ring: one past its
// last, or the round heard last if that is ahead.
func (m *Member) nextRound() {
	r := (m.probing.round + 1) & roundMask
	if roundAhead(m.probing.heard, r) {
		r = m.probing.heard
	}
	m.probing.round, m.probing.heard = r, r
}

// roundSeq is the sequence number of this round's probe: 2r; in
// ShuffledProbes, which has no rounds, the next of one counter of every
// ping.
func (m *Member) roundSeq() uint32 {
	if m.cfg.ShuffledProbes {
		return m.otherSeq()
	}
	return m.probing.round << 1
}

// otherSeq returns the sequence number of a ping that is not a round's
// probe (the gate's retry, a relayed ping, a refutation, a reconnect):
// from a counter of its own, one modulo 4, odd so that it is never taken
// for a round, and apart from the nonces (3 modulo 4), so that no such
// ping is taken for a challenge (challengePing, receipt.go); in
// ShuffledProbes the next of one counter.
func (m *Member) otherSeq() uint32 {
	m.probing.seq++
	if m.cfg.ShuffledProbes {
		return m.probing.seq
	}
	return m.probing.seq<<2 | 1
}

// hearRound takes the round a ping from the member from carries (seq:
// even for a round's probe), if from is a verified live member, the
// round is ahead of the latest heard, and it is a round in which from
// probes this member: this member is from's (1 + r mod L)-th successor on
// the ring as this member sees it (ringSender). A round that fails the
// check is ignored, so that a member cannot set another's round, and with
// it its target, at will: it can only move it to a round in which it
// would probe that member itself. A ping that came from another source
// than its sender claims, or names another address than the one held
// for it, is not that member speaking (speaks) and sets no round.
func (m *Member) hearRound(in *inbound, from Node, seq uint32) {
	p := m.peers[from.ID]
	if seq&1 != 0 || p == nil || !p.verified || (p.state != StateAlive && p.state != StateSuspect) {
		return
	}
	if in.otherSource || from.Addr != p.node.Addr {
		return // not the verified member speaking from its own address
	}
	if r := seq >> 1; roundAhead(r, m.probing.heard) && m.ringSender(p, r) {
		m.probing.heard = r
	}
}

// ringSender reports whether p probes this member in round r when both
// see the same ring: p at index i of this member's probe list (its
// (i+1)-th successor) has this member as its (L−i)-th successor, the
// target of the rounds with r mod L = L−i−1. With members in the list
// that are no longer live (dropped at the next round) it reports false.
func (m *Member) ringSender(p *peer, r uint32) bool {
	n := len(m.list)
	if !p.inList || n == 0 || n != m.live {
		return false
	}
	i, found := slices.BinarySearchFunc(m.list, p, ringCmp)
	return found && int(r%uint32(n)) == n-i-1
}

// ringKey is a member's place on the ring: with the group's RingKey, the
// first 8 bytes, big-endian, of the HMAC-SHA256 (RFC 2104) of its ID
// under that key, which nobody without the key can aim at; without one,
// the 64-bit FNV-1a hash of its ID, which anybody can compute, and under
// which IDs that differ only in their last bytes (node-1, node-2, …; an
// attacker's sybil-1, sybil-2, …) are neighbours, their hashes some
// d·2^40 apart.
func ringKey(key []byte, id ID) uint64 {
	if len(key) == 0 {
		h := fnv.New64a()
		h.Write([]byte(id))
		return h.Sum64()
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	return binary.BigEndian.Uint64(h.Sum(nil))
}

// ringCmp orders the probe list in ring order: by distance from this
// member along the ring (peer.ring), then by ID.
func ringCmp(a, b *peer) int {
	if c := cmp.Compare(a.ring, b.ring); c != 0 {
		return c
	}
	return cmp.Compare(a.node.ID, b.node.ID)
}

// placeOnRing sets p's distance from this member along the ring.
func (m *Member) placeOnRing(p *peer) {
	p.ring = ringKey(m.cfg.RingKey, p.node.ID) - m.probing.selfRing
}

// insertInList adds p to the probe list: at its place on the ring, or at
// a random position in ShuffledProbes.
func (m *Member) insertInList(p *peer) {
	if p.inList {
		return
	}
	p.inList = true
	if m.cfg.ShuffledProbes {
		pos := m.rng.IntN(len(m.list) + 1)
		m.list = slices.Insert(m.list, pos, p)
		if pos < m.probing.idx {
			m.probing.idx++
		}
		return
	}
	m.placeOnRing(p)
	pos, _ := slices.BinarySearchFunc(m.list, p, ringCmp)
	m.list = slices.Insert(m.list, pos, p)
}

// orderList puts the probe list in order after Bootstrap appended to it:
// its not yet probed part shuffled (ShuffledProbes), else sorted on the
// ring.
func (m *Member) orderList() {
	if m.cfg.ShuffledProbes {
		// Inserting each at a random position is a uniform shuffle;
		// shuffling the not yet probed part of the list once is the
		// same and O(n).
		rest := m.list[m.probing.idx:]
		m.rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		return
	}
	for _, p := range m.list {
		m.placeOnRing(p)
	}
	slices.SortFunc(m.list, ringCmp)
}

// dropGone removes the members neither alive nor suspect from the probe
// list, keeping its order.
func (m *Member) dropGone() {
	m.filterList(func(p *peer) bool { return p.state == StateAlive || p.state == StateSuspect })
}

// filterList keeps in the probe list, in order, the members for which keep
// is true.
func (m *Member) filterList(keep func(p *peer) bool) {
	kept, idx := m.list[:0], m.probing.idx
	for i, p := range m.list {
		if keep(p) {
			kept = append(kept, p)
			continue
		}
		p.inList = false
		if i < m.probing.idx {
			idx--
		}
	}
	clear(m.list[len(kept):])
	m.list, m.probing.idx = kept, idx
}

// nextTarget returns the next member to probe: a target the detector gate
// asked to retry (inRound false), else, starting a new round, the round's
// member (see above; in ShuffledProbes the next one of the shuffled list)
// or the next one on the list not probed in this pass. A pass ends when
// every live verified member was probed in it; the list then drops the
// dead (at every round on the ring, so that the members' L agree) and, in
// ShuffledProbes, is reshuffled. An unverified member is taken only while
// the probe budget allows (one probe in unverifiedProbeCost, see
// verify.go) and skipped otherwise, to be probed on a later pass; with no
// verified member to probe, the first one skipped. An unverified member
// is never probed while suspect: its probe failed already, or others
// suspect it, and a real one is verified when it probes this member
// (verify.go, “what is sent to or about it”). charged is the budget
// the target took, given back if it answers (verify).
func (m *Member) nextTarget() (t *peer, charged int, inRound bool) {
	if t := m.probing.forceNext; t != nil {
		m.probing.forceNext = nil
		if t.state == StateAlive || t.state == StateSuspect {
			if !t.verified {
				// An unverified member's retry (failProbe) takes the
				// budget of an unverified probe, in debt if need be.
				cost := m.unverifiedProbeCost()
				m.probing.unverifiedTokens -= cost
				return t, cost, false
			}
			return t, 0, false
		}
	}
	m.nextRound()
	cost := m.unverifiedProbeCost()
	m.probing.unverifiedTokens = min(m.probing.unverifiedTokens+1, cost)
	if !m.cfg.ShuffledProbes && len(m.list) != m.live {
		m.dropGone() // the list holds every live member, and then others
	}
	var skipped *peer
	for range 2 {
		// ShuffledProbes walks its list from where it left off to the
		// end; the ring from the round's member all the way round.
		n, start, scan := len(m.list), m.probing.idx, len(m.list)-m.probing.idx
		if !m.cfg.ShuffledProbes && n > 0 {
			start, scan = int(m.probing.round%uint32(n)), n
		}
		for i := range scan {
			k := (start + i) % n
			p := m.list[k]
			if (p.state != StateAlive && p.state != StateSuspect) || p.probedIn == m.probing.pass {
				continue
			}
			if !p.verified && p.state == StateSuspect {
				continue // never while suspect (see above)
			}
			if !p.verified && m.probing.unverifiedTokens < cost {
				if skipped == nil {
					skipped = p
				}
				continue
			}
			if !p.verified {
				m.probing.unverifiedTokens -= cost
				charged = cost
			}
			p.probedIn, m.probing.idx = m.probing.pass, k+1
			return p, charged, true
		}
		m.probing.pass++
		m.dropGone()
		if m.cfg.ShuffledProbes {
			m.rng.Shuffle(len(m.list), func(i, j int) { m.list[i], m.list[j] = m.list[j], m.list[i] })
		}
		m.probing.idx = 0
		if len(m.list) == 0 {
			return nil, 0, true
		}
	}
	if skipped != nil {
		skipped.probedIn = m.probing.pass
	}
	return skipped, 0, true
}
