package sim

import (
	"cmp"
	"hash/fnv"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// ringRank returns the index of victim in the probe list of member self
// on the ring: the others sorted by the distance of the FNV-1a hash of
// their ID from self's, as every member of the group computes it.
func ringRank(s *Sim, self, victim int) int {
	key := func(id swim.ID) uint64 {
		h := fnv.New64a()
		h.Write([]byte(id))
		return h.Sum64()
	}
	var others []swim.ID
	for i := range s.N() {
		if i != self {
			others = append(others, s.Node(i).ID)
		}
	}
	ks := key(s.Node(self).ID)
	slices.SortFunc(others, func(a, b swim.ID) int {
		if c := cmp.Compare(key(a)-ks, key(b)-ks); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return slices.Index(others, s.Node(victim).ID)
}

// steerRun runs a group of n in which member attacker, a verified member
// like any other, pings every other member just before each of its
// periods with a round (sequence number 2r) chosen so that the member's
// probe skips victim except once every L = n−1 periods, the same period
// for all: the probe list walks past the victim to the end of each pass,
// and every member's pass holds the victim's one probe at the periods
// T + kL. It returns the mean wait, from an instant uniform in
// [attackFrom, end), until the next probe of victim by a member other
// than the attacker (any ping: ShuffledProbes numbers its probes from one
// counter): the sum of the squared gaps between those pings
// over twice the window.
//
// With consistent, the attacker sends each member only rounds in which
// it would probe that member itself (the rounds hearRound takes), every
// period, each one pushing the member to its one target of those rounds.
func steerRun(t *testing.T, n int, seed uint64, cfg swim.Config, attack, consistent bool) time.Duration {
	const attacker, victim = 1, 2
	const attackFrom, end = 20 * time.Second, 140 * time.Second
	s, err := New(Config{N: n, Seed: seed, StartSpread: time.Second, Member: cfg})
	require.NoError(t, err)
	L := uint32(n - 1)
	var probed []time.Duration
	s.SetPacketHook(func(now time.Duration, to int, p *swim.Packet) {
		if to == victim && p.Kind == swim.MsgPing && now >= attackFrom && s.Index(p.From.ID) != attacker {
			probed = append(probed, now)
		}
	})
	if attack {
		var steer func(x int)
		steer = func(x int) {
			// Just before x's tick: rounds that grow with the time of
			// sending, so that the one sent last (to the member ticking
			// last) is ahead of every round x heard from its probers.
			tick := s.members[x].scheduled
			period := uint32(tick / time.Second)
			base := uint32(s.Now()/(100*time.Microsecond)) * L
			idx := uint32(ringRank(s, x, victim))
			if period%L != 0 {
				idx = (idx + 1) % L // walk from past the victim
			}
			if consistent {
				idx = L - uint32(ringRank(s, x, attacker)) - 1
			}
			s.Inject(x, swim.Packet{Kind: swim.MsgPing, From: s.Node(attacker), To: s.Node(x),
				Ping: swim.Ping{Seq: (base + idx) << 1}}, 0)
			s.At(tick+time.Microsecond, func() {
				s.At(s.members[x].scheduled-10*time.Microsecond, func() { steer(x) })
			})
		}
		s.At(attackFrom, func() {
			for x := range n {
				if x != attacker && x != victim {
					s.At(s.members[x].scheduled-10*time.Microsecond, func() { steer(x) })
				}
			}
		})
	}
	s.RunUntil(end)
	require.NotEmpty(t, probed)
	return meanWait(probed, attackFrom, end)
}

// meanWait returns the mean wait, from an instant uniform in [from, end),
// until the next of the instants at (sorted, in [from, end)): the sum of
// the squared gaps between them over twice the window.
func meanWait(at []time.Duration, from, end time.Duration) time.Duration {
	sq, last := 0.0, from
	for _, a := range append(at, end) {
		g := (a - last).Seconds()
		sq += g * g
		last = a
	}
	return time.Duration(sq / (2 * (end - from).Seconds()) * float64(time.Second))
}

// One verified member can steer the ring: the rounds heard in probes set
// every member's target, so an attacker that sends each member a round
// just before its period makes all of them probe a chosen victim in the
// same period once every n−1 periods and never in between: a crash of the
// victim right after such a period goes unprobed for n−2 periods, and one
// at a random instant for (n−1)/2 on average, where SWIM's independent
// orders (ShuffledProbes), which no round moves, wait about one period.
// A member takes a round only from a member that probes it in that round
// (hearRound), which leaves an attacker one target per member it pings:
// pushing every member to it each period moves the group's rounds
// together, and the victim is still probed once per period. Each prober still probes the victim once per
// pass (probeorder.go): the bound per prober holds, the group's first
// probe is what the attacker delays.
func TestRingRoundsSteeredByOneMember(t *testing.T) {
	if raceOn {
		t.Skip("120 s of a group of 16 under -race")
	}
	const n = 16
	for _, mode := range []swim.Mode{swim.ModeLifeguard, swim.ModeDetector} {
		cfg := swim.Config{Mode: mode}
		shuffled := cfg
		shuffled.ShuffledProbes = true
		for _, seed := range []uint64{11, 12, 13} {
			ring := steerRun(t, n, seed, cfg, false, false)
			ringSteered := steerRun(t, n, seed, cfg, true, false)
			ringPushed := steerRun(t, n, seed, cfg, true, true)
			shuffledSteered := steerRun(t, n, seed, shuffled, true, false)
			t.Logf("%v seed %d: mean wait for a probe of the victim: ring %v, ring steered %v, ring pushed %v, shuffled steered %v",
				mode, seed, ring, ringSteered, ringPushed, shuffledSteered)
			assert.LessOrEqual(t, ringSteered, shuffledSteered,
				"%v seed %d: one member's rounds starve the victim on the ring", mode, seed)
			assert.LessOrEqual(t, ringPushed, shuffledSteered,
				"%v seed %d: rounds the attacker may send starve the victim on the ring", mode, seed)
		}
	}
}
