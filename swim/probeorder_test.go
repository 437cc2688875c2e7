package swim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundAhead(t *testing.T) {
	for _, c := range []struct {
		a, b uint32
		want bool
	}{
		{1, 0, true},
		{0, 1, false},
		{5, 5, false},
		{0, roundMask, true}, // 2^31−1 wraps to 0
		{roundMask, 0, false},
		{1<<30 - 1, 0, true},
		{1 << 30, 0, false}, // half the circle: not ahead
		{1<<30 + 7, 7, false},
	} {
		assert.Equal(t, c.want, roundAhead(c.a, c.b), "roundAhead(%d, %d)", c.a, c.b)
	}
}

// ringOrder returns the IDs in ring order starting after self.
func ringOrder(self string, ids []string) []string {
	o := slices.Clone(ids)
	slices.SortFunc(o, func(a, b string) int {
		da, db := ringKey(ID(a))-ringKey(ID(self)), ringKey(ID(b))-ringKey(ID(self))
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
	return o
}

// probeRounds ticks m once a period from 0 for n periods, acking every
// ping of its own probes at once, and returns each period's direct probe:
// its target and sequence number. hear, when not nil, gives a round to
// hear before each period (from peer b, a ping with sequence number 2r).
func probeRounds(t *testing.T, m *Member, n int, hear func(i int) (uint32, bool)) (targets []string, seqs []uint32) {
	t.Helper()
	for i := range n {
		now := time.Duration(i) * time.Second
		if hear != nil {
			if r, ok := hear(i); ok {
				require.NoError(t, m.Step(now, &Packet{Kind: MsgPing, From: node("b"), To: m.self, Ping: Ping{Seq: r << 1}}))
				drain(m)
			}
		}
		m.Tick(now)
		pk, _ := drain(m)
		for _, p := range only(t, pk, MsgPing) {
			targets, seqs = append(targets, string(p.To.ID)), append(seqs, p.Ping.Seq)
			require.NoError(t, m.Step(now, &Packet{Kind: MsgAck, From: p.To, To: m.self, Ack: Ack{Seq: p.Ping.Seq}}))
			drain(m)
		}
	}
	return targets, seqs
}

// On the ring a member probes, in round r, its (1 + r mod L)-th successor,
// and carries 2r as the probe's sequence number: rounds 1, 2, ... from its
// first period.
func TestRingProbeOrderWalksTheRing(t *testing.T) {
	peers := []string{"b", "c", "d", "e", "f", "g"}
	m := newTest(t, "a", ModeLifeguard, nil, peers...)
	targets, seqs := probeRounds(t, m, 2*len(peers), nil)
	ring := ringOrder("a", peers)
	for i, id := range targets {
		r := i + 1
		assert.Equal(t, ring[r%len(ring)], id, "round %d", r)
		assert.Equal(t, uint32(2*r), seqs[i], "round %d", r)
	}
}

// A round heard ahead in a verified member's probe is this member's next
// one: the walk jumps there. An odd sequence number (no round's probe), a
// round behind, a round in which the sender would not probe this member
// (b probes a in the rounds 40 + 6k: a is its (1 + 40 mod 6)-th
// successor), or a ping from a member not in the view changes nothing.
func TestRingProbeOrderFollowsRoundsHeard(t *testing.T) {
	peers := []string{"b", "c", "d", "e", "f", "g"}
	ring := ringOrder("a", peers)
	for _, c := range []struct {
		name  string
		from  string
		seq   uint32
		round uint32
		other bool   // received from another source (StepFromOtherSource)
		addr  string // the sender's claimed address, when not its own
	}{
		{"ahead", "b", 2 * 40, 40, false, ""},
		{"not b's round to probe a", "b", 2 * 41, 3, false, ""},
		{"odd", "b", 2*40 + 1, 3, false, ""},
		{"behind", "b", 2 * 1, 3, false, ""},
		{"stranger", "zz", 2 * 40, 3, false, ""},
		{"b's round, from another source", "b", 2 * 40, 3, true, ""},
		{"b's round, at another address", "b", 2 * 40, 3, false, "10.9.9.9:1"},
	} {
		m := newTest(t, "a", ModeLifeguard, nil, peers...)
		probeRounds(t, m, 2, nil) // rounds 1 and 2
		from := node(c.from)
		if c.addr != "" {
			from.Addr = c.addr
		}
		step := m.Step
		if c.other {
			step = m.StepFromOtherSource
		}
		require.NoError(t, step(2*time.Second, &Packet{Kind: MsgPing, From: from, To: m.self, Ping: Ping{Seq: c.seq}}))
		drain(m)
		m.Tick(2 * time.Second)
		pk, _ := drain(m)
		ping := only(t, pk, MsgPing)
		require.Len(t, ping, 1, c.name)
		assert.Equal(t, 2*c.round, ping[0].Ping.Seq, c.name)
		assert.Equal(t, ring[int(c.round)%len(ring)], string(ping[0].To.ID), c.name)
	}
}

// Rounds jumping ahead at random (a member that counts ahead, or one that
// shifts the group's rounds on purpose) never keep a member from being
// probed: each pass of the list probes every member once, so any two
// probes of one member are at most 2L−1 periods apart.
func TestRingProbeOrderCompleteUnderJumps(t *testing.T) {
	var peers []string
	for i := range 9 {
		peers = append(peers, fmt.Sprint("p", i))
	}
	peers = append(peers, "b")
	L := len(peers)
	m := newTest(t, "a", ModeLifeguard, nil, peers...)
	r := uint32(0)
	jumps := 0
	targets, _ := probeRounds(t, m, 20*L, func(i int) (uint32, bool) {
		r++
		if i%3 == 0 {
			r += uint32(1 + (i*7919)%(2*L))
			jumps++
			return r, true
		}
		return 0, false
	})
	require.Positive(t, jumps)
	last := map[string]int{}
	for i, id := range targets {
		if j, ok := last[id]; ok {
			assert.LessOrEqual(t, i-j, 2*L-1, "%s probed at periods %d and %d", id, j, i)
		} else {
			assert.Less(t, i, L, "%s first probed at period %d", id, i)
		}
		last[id] = i
	}
	for _, id := range peers {
		assert.GreaterOrEqual(t, last[id], len(targets)-(2*L-1), "%s", id)
	}
}

// The pings that are not a round's probe carry odd sequence numbers, the
// join challenge's included, so that no member takes them for a round.
func TestRingProbeOrderOtherPingsOdd(t *testing.T) {
	m := newTest(t, "a", ModeLifeguard, nil, "b", "c", "d")
	for range 5 {
		assert.Equal(t, uint32(1), m.otherSeq()&1)
	}
	s := newTest(t, "s", ModeLifeguard, nil, "b")
	s.join.noChallenge = false
	for i := range 20 {
		j := Node{ID: ID(fmt.Sprint("j", i)), Addr: fmt.Sprint("j", i, ":7946")}
		require.NoError(t, s.Step(0, &Packet{Kind: MsgJoin, From: j, To: node("s"),
			Updates: []Update{{Kind: UpdateAlive, Node: j, From: j.ID}}}))
	}
	pk, _ := drain(s)
	pings := only(t, pk, MsgPing)
	require.NotEmpty(t, pings)
	for _, p := range pings {
		assert.Equal(t, uint32(1), p.Ping.Seq&1, "challenge to %s", p.To.ID)
	}
}
