package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// settleCost starts n members with empty views (first Ticks spread over
// 1 s), member i joining at 1 s + i·50 ms through members 0..i−1 (as
// bench/memberlist does) or through member 0 alone, and returns the bytes
// sent (swim.Packet.Size, every packet) per member per second in
// bench/memberlist's steady window, from 2 s to 32 s after every member
// first saw all n alive, and in a later window of 120 s starting 60 s after
// that, when the group has long settled.
func settleCost(t *testing.T, n int, seed uint64, single bool) (conv time.Duration, window, late float64) {
	t.Helper()
	s, err := New(Config{N: n, Seed: seed, NoBootstrap: true, StartSpread: time.Second})
	require.NoError(t, err)
	for i := 1; i < n; i++ {
		s.At(time.Second+time.Duration(i)*50*time.Millisecond, func() {
			k := i
			if single {
				k = 1
			}
			var seeds []string
			for j := 0; j < k; j++ {
				seeds = append(seeds, s.Node(j).Addr)
			}
			require.NoError(t, s.Member(i).Join(s.Now(), seeds))
			s.flush(i)
		})
	}
	conv = -1
	var w, l int
	s.SetPacketHook(func(now time.Duration, _ int, p *swim.Packet) {
		switch {
		case conv < 0:
		case now >= conv+2*time.Second && now < conv+32*time.Second:
			w += p.Size()
		case now >= conv+60*time.Second && now < conv+180*time.Second:
			l += p.Size()
		}
	})
	for at := time.Second; conv < 0 && at <= 61*time.Second; at += 10 * time.Millisecond {
		s.RunUntil(at)
		all := true
		for i := 0; i < n && all; i++ {
			all = s.Member(i).NumAlive() == n
		}
		if all {
			conv = at
		}
	}
	require.GreaterOrEqual(t, conv, time.Duration(0), "N = %d seed %d: no full view within 60 s", n, seed)
	s.RunUntil(conv + 180*time.Second)
	return conv - time.Second, float64(w) / float64(n) / 30, float64(l) / float64(n) / 120
}

// TestSettleCostInSteadyWindow: the settling exchange (swim's settlePull),
// which a group that just formed runs a few seconds after the last join,
// falls in bench/memberlist's steady window (2 s to 32 s after
// convergence) but adds less than 4 % there to the bytes the settled group
// sends per member per second. Measured before it (4 seeds, this window,
// B/member/s): 82.9, 81.5 and 80.7 at N = 32, 64 and 128 with every
// earlier member as seed, 82.9 and 81.4 through one seed at N = 32 and 64;
// with it 83.0, 83.0, 82.9, 81.2 and 80.0.
func TestSettleCostInSteadyWindow(t *testing.T) {
	for _, n := range []int{32, 64} {
		for _, single := range []bool{false, true} {
			for seed := uint64(1); seed <= 2; seed++ {
				conv, w, l := settleCost(t, n, seed, single)
				t.Logf("N = %d, one seed %v, seed %d: full view after %v; %.1f B/member/s in the window, %.1f later",
					n, single, seed, conv, w, l)
				assert.Less(t, w, 1.04*l, "N = %d, one seed %v, seed %d: bytes in the steady window", n, single, seed)
			}
		}
	}
}
