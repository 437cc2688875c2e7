package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// joinDrain starts n members with empty views, member i joining at
// i·50 ms through members 0..i−1 (allSeeds, as bench/memberlist does) or
// through member 0 alone, runs 40 s and returns the join announcements
// (Alive at incarnation 0) piggybacked on pings and acks, and when every
// member first saw all n alive.
func joinDrain(t *testing.T, n int, seed uint64, allSeeds bool) (announcements int, converged time.Duration) {
	s, err := New(Config{N: n, Seed: seed, NoBootstrap: true})
	require.NoError(t, err)
	for i := 1; i < n; i++ {
		s.At(time.Duration(i)*50*time.Millisecond, func() {
			k := 1
			if allSeeds {
				k = i
			}
			var seeds []string
			for j := 0; j < k; j++ {
				seeds = append(seeds, s.Node(j).Addr)
			}
			require.NoError(t, s.Member(i).Join(s.Now(), seeds))
			s.flush(i)
		})
	}
	s.SetPacketHook(func(_ time.Duration, _ int, p *swim.Packet) {
		if p.Kind != swim.MsgPing && p.Kind != swim.MsgAck {
			return
		}
		for _, u := range p.Updates {
			if u.Kind == swim.UpdateAlive && u.Incarnation == 0 {
				announcements++
			}
		}
	})
	converged = -1
	for at := time.Duration(0); at <= 40*time.Second; at += 100 * time.Millisecond {
		s.RunUntil(at)
		if converged >= 0 {
			continue
		}
		all := true
		for i := 0; i < n && all; i++ {
			all = s.Member(i).NumAlive() == n
		}
		if all {
			converged = at
		}
	}
	return announcements, converged
}

// Join announcements stop riding on pings and acks once the members they
// would tell already know: an Alive heard again counts as sent (see
// swim's heardAgain). 32 members joining through every earlier member
// piggybacked 3,968 of them before (3 seeds, mean), all within 6 s of
// convergence; a member joining through one seed is still seen by all.
func TestJoinAnnouncementsDrain(t *testing.T) {
	total := 0
	for seed := uint64(1); seed <= 3; seed++ {
		a, conv := joinDrain(t, 32, seed, true)
		require.GreaterOrEqual(t, conv, time.Duration(0), "seed %d: no full view in 40 s", seed)
		total += a
		a1, conv1 := joinDrain(t, 32, seed, false)
		require.GreaterOrEqual(t, conv1, time.Duration(0), "seed %d, one seed: no full view in 40 s", seed)
		t.Logf("seed %d: every earlier member as seed: %d announcements, full view at %v; one seed: %d, %v", seed, a, conv, a1, conv1)
	}
	assert.Less(t, total/3, 3200, "join announcements piggybacked (mean of 3 seeds)")
}
