package sim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ghostRun starts 8 members; with ghosts > 0, each is sent that many
// forged Alive updates about members that do not exist (plain mode: a
// packet from member 1), 1,000 a packet, at 10 s; member 7 crashes at
// 20 s. It returns when the first member suspected member 7 and when the
// last live member declared it dead, after the crash (-1: not by 80 s), and
// the largest view.
func ghostRun(t *testing.T, seed uint64, mode swim.Mode, ghosts, maxMembers int) (suspected, dead time.Duration, view int) {
	const n, victim = 8, 7
	s, err := New(Config{N: n, Seed: seed, StartSpread: time.Second, Member: swim.Config{Mode: mode, MaxMembers: maxMembers}})
	require.NoError(t, err)
	const crashAt = 20 * time.Second
	suspected, dead = -1, -1
	deadAt := make([]bool, n)
	s.SetEventHook(func(now time.Duration, obs int, ev swim.Event) {
		if ev.Node.ID != s.Node(victim).ID || now < crashAt {
			return
		}
		switch ev.Kind {
		case swim.EventSuspect:
			if suspected < 0 {
				suspected = now - crashAt
			}
		case swim.EventDead:
			deadAt[obs] = true
			if !slices.Contains(deadAt[:victim], false) && dead < 0 {
				dead = now - crashAt
			}
		}
	})
	s.At(10*time.Second, func() {
		for to := range n {
			for k := 0; k < ghosts; k += 1000 {
				var ups []swim.Update
				for g := k; g < min(k+1000, ghosts); g++ {
					id := swim.ID(fmt.Sprintf("ghost%06d", g))
					ups = append(ups, swim.Update{Kind: swim.UpdateAlive, Node: swim.Node{ID: id, Addr: string(id)}, From: id})
				}
				s.Inject(to, swim.Packet{Kind: swim.MsgGossip, From: s.Node(1), To: s.Node(to), Updates: ups}, 0)
			}
		}
	})
	s.At(crashAt, func() { s.Crash(victim) })
	s.RunUntil(crashAt + 60*time.Second)
	for i := range n - 1 {
		view = max(view, len(s.Member(i).Members(s.Now())))
	}
	return suspected, dead, view
}

// A flood of 20,000 forged Alive members sent to every member registers at
// most 64 of them in each view (swim's unverified quota, verify.go); a
// member that then crashes is still suspected and declared dead by all,
// in a median time over 6 seeds (4 under the race detector) within twice
// the median without the flood: the forged members, never heard from,
// are held only up to the quota, take one probe per round over the known
// members, count in the group size only up to the members heard from, are
// not asked to relay, and their failed probes do not count against
// Lifeguard's local health.
func TestSimGhostFloodCrashDetected(t *testing.T) {
	const ghosts, quota = 20000, 64
	maxMembers := swim.DefaultMaxMembers
	seeds := 6
	if raceOn {
		seeds = 4 // the race detector slows the simulator tenfold
	}
	for _, mode := range []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard, swim.ModeDetector} {
		var without, with []time.Duration
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			_, d0, _ := ghostRun(t, seed, mode, 0, maxMembers)
			s1, d1, view := ghostRun(t, seed, mode, ghosts, maxMembers)
			assert.LessOrEqual(t, view, 8+quota, "%v seed %d: the views hold the quota of forged members", mode, seed)
			assert.Greater(t, view, quota, "%v seed %d: the views hold forged members", mode, seed)
			require.Positive(t, d0, "%v seed %d: detected without a flood", mode, seed)
			assert.Positive(t, s1, "%v seed %d: suspected under the flood", mode, seed)
			assert.Positive(t, d1, "%v seed %d: declared dead by all within 60 s under the flood", mode, seed)
			without, with = append(without, d0), append(with, d1)
		}
		slices.Sort(without)
		slices.Sort(with)
		median := func(x []time.Duration) time.Duration { return (x[(len(x)-1)/2] + x[len(x)/2]) / 2 }
		m0, m1 := median(without), median(with)
		assert.LessOrEqual(t, m1, 2*m0, "%v: median time to dead at all", mode)
		t.Logf("%v, %d seeds, dead at all after the crash: without a flood median %v (max %v); with %d forged members sent, median %v (max %v)",
			mode, seeds, m0, without[seeds-1], ghosts, m1, with[seeds-1])
	}
}
