package swim

import (
	"fmt"
	"math/rand/v2"
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
		da, db := ringKey(nil, ID(a))-ringKey(nil, ID(self)), ringKey(nil, ID(b))-ringKey(nil, ID(self)) // FNV-1a
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
// hear before each period (from the peer it names, a ping with sequence
// number 2r).
func probeRounds(t *testing.T, m *Member, n int, hear func(i int) (from string, r uint32, ok bool)) (targets []string, seqs []uint32) {
	t.Helper()
	for i := range n {
		now := time.Duration(i) * time.Second
		if hear != nil {
			if from, r, ok := hear(i); ok {
				require.NoError(t, m.Step(now, &Packet{Kind: MsgPing, From: node(from), To: m.self, Ping: Ping{Seq: r << 1}}))
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
// (b, at index i of a's ring, probes a in the rounds r with
// r mod 6 = 6−i−1: a is its (6−i)-th successor), or a ping from a member
// not in the view changes nothing.
func TestRingProbeOrderFollowsRoundsHeard(t *testing.T) {
	peers := []string{"b", "c", "d", "e", "f", "g"}
	ring := ringOrder("a", peers)
	bRound := uint32(36 + 6 - 1 - slices.Index(ring, "b")) // in [36, 41]
	for _, c := range []struct {
		name  string
		from  string
		seq   uint32
		round uint32
		other bool   // received from another source (StepFromOtherSource)
		addr  string // the sender's claimed address, when not its own
	}{
		{"ahead", "b", 2 * bRound, bRound, false, ""},
		{"not b's round to probe a", "b", 2 * (bRound + 1), 3, false, ""},
		{"odd", "b", 2*bRound + 1, 3, false, ""},
		{"behind", "b", 2 * 1, 3, false, ""},
		{"stranger", "zz", 2 * bRound, 3, false, ""},
		{"b's round, from another source", "b", 2 * bRound, 3, true, ""},
		{"b's round, at another address", "b", 2 * bRound, 3, false, "10.9.9.9:1"},
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
// probes of one member are at most 2L−1 periods apart. The jumps are ones
// the member takes (hearRound): from a random peer, to a random round ahead
// in which that peer probes it (ringSender: the peer at index i of its
// ring order probes it in the rounds r with r mod L = L−i−1), so that its
// walk restarts at a random place of the ring every third period.
func TestRingProbeOrderCompleteUnderJumps(t *testing.T) {
	var peers []string
	for i := range 9 {
		peers = append(peers, fmt.Sprint("p", i))
	}
	peers = append(peers, "b")
	L := len(peers)
	ring := ringOrder("a", peers)
	m := newTest(t, "a", ModeLifeguard, nil, peers...)
	rng := rand.New(rand.NewPCG(27, 1))
	r := uint32(0)             // m's round, as the jumps set it
	jumped := map[int]uint32{} // period: the round heard before it
	targets, seqs := probeRounds(t, m, 20*L, func(i int) (string, uint32, bool) {
		r++
		if i%3 != 0 {
			return "", 0, false
		}
		s := rng.IntN(L)
		r += uint32(1 + rng.IntN(2*L)) // at least one round ahead of the next
		r += (uint32(L-1-s) + uint32(L) - r%uint32(L)) % uint32(L)
		jumped[i] = r
		return ring[s], r, true
	})
	require.Len(t, seqs, 20*L)
	taken := 0
	for i, r := range jumped {
		if seqs[i] == 2*r {
			taken++
		}
	}
	require.Len(t, jumped, (20*L+2)/3)
	assert.Equal(t, len(jumped), taken, "jumps taken of %d heard", len(jumped))
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

// The pings that are not a round's probe carry odd sequence numbers, so
// that no member takes them for a round: on the wire, over 70 s of a member
// in ModeDetector whose peer c stops answering at 10 s, every ping it sends is its
// round's probe, with 2r and r one past the last round's, or one of
// the others, each odd: the gate's retry of c's first failed probe, a
// relayed ping (a ping-req from b), a refutation (a suspicion of a that b
// forwards) and the reconnect ping to c once c is dead. The join
// challenge's pings are odd too.
func TestRingProbeOrderOtherPingsOdd(t *testing.T) {
	m := newTest(t, "a", ModeDetector, nil, "b", "c", "d", "e", "f", "g")
	var rounds []uint32        // the sequence numbers of the round's probes
	others := map[string]int{} // the other pings seen, by kind
	odd := func(kind string, p Packet) {
		others[kind]++
		assert.Equal(t, uint32(1), p.Ping.Seq&1, "%s to %s: sequence number %d", kind, p.To.ID, p.Ping.Seq)
	}
	cDead, lastTo := false, ID("")
	ackAll := func(now time.Duration, pk []Packet) {
		for _, p := range only(t, pk, MsgPing) {
			if p.To.ID != "c" || now < 10*time.Second {
				require.NoError(t, m.Step(now, &Packet{Kind: MsgAck, From: p.To, To: m.self, Ack: Ack{Seq: p.Ping.Seq}}))
				drain(m)
			}
		}
	}
	tickUntil(m, 70*time.Second, func(now time.Duration, pk []Packet, ev []Event) {
		for _, p := range only(t, pk, MsgPing) {
			switch {
			case p.To.ID == "c" && cDead:
				odd("reconnect", p)
			case p.To.ID == "c" && lastTo == "c":
				odd("gate's retry", p)
			default:
				rounds = append(rounds, p.Ping.Seq)
			}
			lastTo = p.To.ID
		}
		for _, e := range ev {
			if e.Kind == EventDead && e.Node.ID == "c" {
				cDead = true
			}
		}
		ackAll(now, pk)
		if now >= 20*time.Second && others["relayed ping"] == 0 {
			require.NoError(t, m.Step(now, &Packet{Kind: MsgPingReq, From: node("b"), To: m.self,
				PingReq: PingReq{Seq: 7, Target: node("d"), Nack: true}}))
			out, _ := drain(m)
			for _, p := range only(t, out, MsgPing) {
				odd("relayed ping", p)
			}
			require.NoError(t, m.Step(now, &Packet{Kind: MsgPing, From: node("b"), To: m.self, Ping: Ping{Seq: 9},
				Updates: []Update{{Kind: UpdateSuspect, Node: m.self, Incarnation: 0, From: "d"}}}))
			out, _ = drain(m)
			for _, p := range only(t, out, MsgPing) {
				odd("refutation", p)
			}
		}
	})
	require.True(t, cDead, "c declared dead")
	t.Logf("%d round probes; other pings: %v", len(rounds), others)
	for _, kind := range []string{"reconnect", "gate's retry", "relayed ping", "refutation"} {
		assert.Positive(t, others[kind], kind)
	}
	require.Greater(t, len(rounds), 30)
	for i, seq := range rounds {
		assert.Equal(t, uint32(2*(i+1)), seq, "round %d's probe", i+1)
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

// RingKey keys the ring's hash: a key of 16 to 64 bytes, kept as a copy,
// places the members elsewhere than the empty key, and every member with
// the same key computes the same ring; a shorter or longer key is refused
// by name.
func TestRingKey(t *testing.T) {
	for _, n := range []int{1, 15, 65} {
		_, err := New(Config{Self: node("a"), RingKey: make([]byte, n)}, newTestRand())
		require.ErrorContains(t, err, fmt.Sprintf("RingKey is %d bytes, want 16 to 64", n))
	}
	key := []byte("0123456789abcdef0123456789abcdef")
	peers := []string{"b", "c", "d", "e", "f", "g", "h", "i"}
	ringOf := func(m *Member) []string {
		var ids []string
		for _, p := range m.list {
			ids = append(ids, string(p.node.ID))
		}
		return ids
	}
	keyed := newTest(t, "a", ModeLifeguard, func(c *Config) { c.RingKey = key }, peers...)
	key[0] ^= 1 // the member holds its own copy
	assert.Equal(t, byte('0'), keyed.Config().RingKey[0])
	plain := newTest(t, "a", ModeLifeguard, nil, peers...)
	assert.Equal(t, ringOrder("a", peers), ringOf(plain))
	assert.NotEqual(t, ringOf(plain), ringOf(keyed))
	key[0] ^= 1
	// b on a's keyed ring sees the same cyclic order: the members after b
	// on a's ring, then a, then those before it.
	b := newTest(t, "b", ModeLifeguard, func(c *Config) { c.RingKey = key }, "a", "c", "d", "e", "f", "g", "h", "i")
	ra, rb := ringOf(keyed), ringOf(b)
	i := slices.Index(ra, "b")
	assert.Equal(t, append(append(slices.Clone(ra[i+1:]), "a"), ra[:i]...), rb)
}
