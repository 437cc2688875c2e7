package swim

import (
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
// arrives. A refusal for an ID conflict is reported (EventConflict) for
// every call, however soon after an earlier one: a caller that retries a
// refused join waits for it.
func (m *Member) Join(now time.Duration, seeds []string) error {
	if m.st != running {
		return ErrLeft
	}
	if len(seeds) == 0 {
		return ErrNoSeeds
	}
	m.joining, m.refusal = true, nil
	m.lastConflict = conflictNote{} // this attempt's refusal is news (conflictEvery)
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
