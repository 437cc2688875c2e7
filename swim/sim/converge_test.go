package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// concurrentJoins starts n members with empty views; members 1…n−1 join
// through member 0 within a few milliseconds of each other (as agents
// started together do), and, when loseSync, the first sync packet member 0
// sends to member lost is lost. It returns, at each of the check instants,
// the number of (observer, member) pairs missing from a live view.
func concurrentJoins(t *testing.T, n int, seed uint64, loss float64, loseSync bool, checks []time.Duration) []int {
	t.Helper()
	lost := 1 + int(seed%uint64(n-1))
	dropped := false
	cfg := Config{N: n, Seed: seed, NoBootstrap: true, Loss: loss, StartSpread: time.Second}
	if loseSync {
		cfg.Drop = func(_ time.Duration, from, to int, p *swim.Packet) bool {
			if !dropped && from == 0 && to == lost && p.Kind == swim.MsgSync {
				dropped = true
				return true
			}
			return false
		}
	}
	s, err := New(cfg)
	require.NoError(t, err)
	for i := 1; i < n; i++ {
		at := time.Second + time.Duration(i)*3*time.Millisecond
		s.At(at, func() { assert.NoError(t, s.Join(i, 0)) })
	}
	var missing []int
	for _, c := range checks {
		s.RunUntil(c)
		missing = append(missing, oneView(s))
	}
	return missing
}

// TestConcurrentJoinsConverge: five members joining through one seed at
// about the same time reach a full view, for many seeds, with and without
// a lost sync packet and with 5% loss. Anti-entropy (push-pull) is what
// closes the gap: without it a member could stay unaware of another for
// good, since packets from unknown members teach nothing and only dead
// members are re-contacted.
func TestConcurrentJoinsConverge(t *testing.T) {
	seeds := 400
	if testing.Short() {
		seeds = 100
	}
	checks := []time.Duration{90 * time.Second}
	for _, loseSync := range []bool{false, true} {
		for _, loss := range []float64{0, 0.05} {
			bad := 0
			for seed := uint64(1); seed <= uint64(seeds); seed++ {
				if m := concurrentJoins(t, 5, seed, loss, loseSync, checks); m[0] != 0 {
					bad++
					if bad <= 3 {
						t.Logf("seed %d, loss %v, lost sync %v: %d pairs missing at %v", seed, loss, loseSync, m[0], checks[0])
					}
				}
			}
			assert.Zero(t, bad, "runs without a full view after %v (loss %v, lost sync %v), of %d", checks[0], loss, loseSync, seeds)
		}
	}
}

// TestRestartedMemberNotKeptDead: a member restarts with incarnation 0
// after the group declared it dead at incarnation 0; one member misses
// every Alive about it for the first 20 s (the gossip of the refutation is
// over by then). It must still see the member alive soon after: before
// push-pull and the direct refutation, it kept it dead until a reconnect
// ping happened to reach it.
func TestRestartedMemberNotKeptDead(t *testing.T) {
	const n, x, y = 5, 4, 2
	seeds := 40
	if testing.Short() {
		seeds = 16
	}
	bad := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		var restartAt time.Duration = -1
		cfg := Config{N: n, Seed: seed, StartSpread: time.Second,
			Drop: func(now time.Duration, _, to int, p *swim.Packet) bool {
				if to != y || restartAt < 0 || now > restartAt+20*time.Second {
					return false
				}
				for _, u := range p.Updates {
					if u.Node.ID == "m0004" && u.Kind == swim.UpdateAlive {
						return true
					}
				}
				return false
			}}
		s, err := New(cfg)
		require.NoError(t, err)
		s.At(5*time.Second, func() { s.Crash(x) })
		s.RunUntil(40 * time.Second)
		require.Equal(t, swim.StateDead, s.Member(y).State(s.Node(x).ID), "seed %d: crash not detected", seed)
		restartAt = s.Now()
		require.NoError(t, s.Restart(x, 0))
		s.RunUntil(restartAt + 60*time.Second)
		if st := s.Member(y).State(s.Node(x).ID); st != swim.StateAlive {
			bad++
			t.Logf("seed %d: member %d sees the restarted member %v 60 s after the restart", seed, y, st)
		}
	}
	assert.Zero(t, bad, "of %d runs", seeds)
}

// TestLeaveReachesEveryone: in a group of 6 (100 ms periods, no
// anti-entropy), a member leaves and is gone 300 ms later (fdswim's tests
// run agents with --leave-timeout 300ms); every other member must end with
// it Left. The leave rides on a few packets only (λ·ceil(log10 n) per
// holder), so now and then a member misses it, suspects the leaver and
// declares it dead; before members that knew of the leave corrected such a
// Dead, about 1 leave in 40 ended with a member keeping Dead (CI saw it in
// TestAgentsEncrypted).
func TestLeaveReachesEveryone(t *testing.T) {
	const n, leaver = 6, 1
	trials := 100
	if testing.Short() {
		trials = 60
	}
	for _, mode := range []swim.Mode{swim.ModeDetector, swim.ModeLifeguard, swim.ModeSWIM} {
		mc := swim.Config{Mode: mode, ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond, PushPullInterval: new(time.Duration(0))}
		bad := 0
		for trial := 0; trial < trials; trial++ {
			s, err := New(Config{N: n, Seed: uint64(trial) + 1, Member: mc, StartSpread: 100 * time.Millisecond,
				Delay: UniformDelay(500*time.Microsecond, 5*time.Millisecond)})
			require.NoError(t, err)
			at := 3*time.Second + time.Duration(trial)*time.Millisecond
			s.At(at, func() { require.NoError(t, s.Leave(leaver)) })
			s.At(at+300*time.Millisecond, func() { s.Crash(leaver) })
			s.RunUntil(at + 15*time.Second)
			for i := 0; i < n; i++ {
				if st := s.Member(i).State(s.Node(leaver).ID); i != leaver && st != swim.StateLeft {
					bad++
					t.Logf("%v, trial %d: member %d sees the leaver %v", mode, trial, i, st)
				}
			}
		}
		assert.Zero(t, bad, "%v: views not Left, of %d leaves", mode, trials)
	}
}

// TestLeaveOfMemberStoppedAtOnce: a member stopped right after Leave, before
// its next probe (an agent whose leave timeout runs out while its period is
// stretched by LHM, on a loaded machine), still gets its leave to the group
// in the Lifeguard modes, which send it at once to GossipFanout members,
// so that nobody declares the leaver dead (as every agent of
// swim/agent's TestAgentsEncrypted would otherwise).
func TestLeaveOfMemberStoppedAtOnce(t *testing.T) {
	const n, leaver = 6, 1
	for _, mode := range []swim.Mode{swim.ModeDetector, swim.ModeLifeguard} {
		mc := swim.Config{Mode: mode, ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond, PushPullInterval: new(time.Duration(0))}
		bad := 0
		for trial := 0; trial < 20; trial++ {
			s, err := New(Config{N: n, Seed: uint64(trial) + 1, Member: mc, StartSpread: 100 * time.Millisecond})
			require.NoError(t, err)
			at := 3*time.Second + time.Duration(trial)*time.Millisecond
			s.At(at, func() {
				require.NoError(t, s.Leave(leaver))
				s.Crash(leaver)
			})
			s.RunUntil(at + 15*time.Second)
			for i := 0; i < n; i++ {
				if st := s.Member(i).State(s.Node(leaver).ID); i != leaver && st != swim.StateLeft {
					bad++
				}
			}
		}
		assert.Zero(t, bad, "%v: views not Left, of 20 leaves", mode)
	}
}
