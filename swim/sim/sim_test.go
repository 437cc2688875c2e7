package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eSWIM is the SWIM paper's expected first-detection time in periods,
// 1/(1 − e^−1) (docs/algorithms.md, “SWIM probes and ping-req”).
var eSWIM = 1 / (1 - math.Exp(-1))

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{N: 0}, {N: 3, Loss: 1.5}, {N: 3, StartSpread: -1}, {N: 3, Member: swim.Config{ProbeInterval: -1}}} {
		_, err := New(c)
		assert.Error(t, err)
	}
	s, err := New(Config{N: 2})
	require.NoError(t, err)
	assert.Error(t, s.Partition([]int{0}))
	assert.Error(t, s.Restart(0, 1), "not crashed")
}

// The same seed gives the same run, event for event.
func TestDeterministic(t *testing.T) {
	run := func() ([]swim.Event, []MemberStats) {
		s, err := New(Config{N: 24, Seed: 42, Loss: 0.05, StartSpread: time.Second})
		require.NoError(t, err)
		var evs []swim.Event
		s.SetEventHook(func(_ time.Duration, _ int, ev swim.Event) { evs = append(evs, ev) })
		s.At(5*time.Second, func() { s.Crash(3) })
		s.At(7*time.Second, func() { s.Pause(9, 3*time.Second) })
		s.RunUntil(40 * time.Second)
		var st []MemberStats
		for i := 0; i < s.N(); i++ {
			st = append(st, s.Stats(i))
		}
		return evs, st
	}
	e1, s1 := run()
	e2, s2 := run()
	assert.NotEmpty(t, e1)
	assert.Equal(t, e1, e2)
	assert.Equal(t, s1, s2)
}

// SWIM's constant load: about 2 messages sent (and received) per member per
// period, whatever N (the SWIM paper's message-load figure).
func TestLoadIndependentOfN(t *testing.T) {
	sizes := []int{8, 32, 128}
	if !testing.Short() {
		sizes = append(sizes, 512, 1000)
	}
	for _, n := range sizes {
		r, err := Load(n, 30, 1, swim.Config{})
		require.NoError(t, err)
		// Probing: one ping and one ack per period; anti-entropy adds
		// one packet per member per push-pull interval (30 periods,
		// times ceil(N/32)): the digest, since the views agree.
		assert.InDelta(t, 2.0, r.SentPerPeriod-r.SyncPerPeriod, 0.05, "N = %d", n)
		assert.InDelta(t, 1/float64(30*((n+31)/32)), r.SyncPerPeriod, 0.01, "N = %d", n)
		assert.InDelta(t, 2.1, r.RecvPerPeriod, 0.1, "N = %d", n)
	}
}

// Mean first-detection time ≈ e/(e−1) periods in SWIM's shuffled order,
// independent of N, and one period on the ring (every member is probed in
// every round); the crash is declared dead by every live member; the
// suspicion spreads in O(log N) periods.
func TestDetection(t *testing.T) {
	type row struct {
		n, trials int
		tol       float64
	}
	rows := []row{{16, 150, 0.3}, {64, 50, 0.3}}
	if !testing.Short() {
		rows = []row{{16, 400, 0.15}, {64, 400, 0.15}, {256, 100, 0.15}, {1000, 20, 0.15}}
	}
	var prevDiss float64
	for _, r := range rows {
		res, err := Detection(r.n, r.trials, 7, swim.Config{Mode: swim.ModeSWIM, ShuffledProbes: true})
		require.NoError(t, err)
		assert.Zero(t, res.Undetected, "every crash is declared dead by every live member (N = %d)", r.n)
		assert.InDelta(t, eSWIM, res.FirstDetection, r.tol, "N = %d", r.n)
		assert.Less(t, res.Dissemination, 1.5*math.Log2(float64(r.n)), "O(log N), N = %d", r.n)
		assert.Greater(t, res.Dissemination, prevDiss, "grows with N")
		prevDiss = res.Dissemination
		ring, err := Detection(r.n, r.trials, 7, swim.Config{Mode: swim.ModeSWIM})
		require.NoError(t, err)
		assert.Zero(t, ring.Undetected, "ring, N = %d", r.n)
		// The crash comes 1 ms before a boundary of the aligned
		// periods: the next round's probe of it fails a period later,
		// unless its prober is among the n/100 crashed.
		assert.InDelta(t, 1.0, ring.FirstDetection, 0.05, "ring, N = %d", r.n)
	}
	// The default mode declares every crash too.
	res, err := Detection(32, 10, 3, swim.Config{})
	require.NoError(t, err)
	assert.Zero(t, res.Undetected)
	assert.Equal(t, 10, res.Crashes)
}

// A member paused for less than the suspicion timeout is never declared
// dead in the default mode (the pause guard refutes as soon as it resumes);
// one paused for longer is, in every mode (the counter works). SWIM and
// Lifeguard refute only through piggybacked gossip, so their refutation can
// reach a suspecter after its timer: for them the property is asserted only
// for a quarter of the timeout under Lifeguard (fdswim sim pause shows the
// rest).
func TestPauseShorterThanSuspicionTimeout(t *testing.T) {
	const n = 32
	minT := time.Duration(4 * math.Log10(n) * float64(time.Second))
	seeds := uint64(2)
	if !testing.Short() {
		seeds = 10
	}
	for _, c := range []struct {
		mode swim.Mode
		fs   []float64
	}{
		{swim.ModeDetector, []float64{0.25, 0.5, 0.75}},
		{swim.ModeLifeguard, []float64{0.25}},
	} {
		for _, f := range c.fs {
			for seed := uint64(1); seed <= seeds; seed++ {
				r, err := PauseOne(n, time.Duration(f*float64(minT)), 20, seed, swim.Config{Mode: c.mode})
				require.NoError(t, err)
				assert.Zero(t, r.DeadEvents, "%v, pause %.2f·Min, seed %d", c.mode, f, seed)
				if f == 0.75 {
					assert.Positive(t, r.Suspects, "%v, pause %.2f·Min: it was suspected", c.mode, f)
				}
			}
		}
	}
	for _, mode := range []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard, swim.ModeDetector} {
		r, err := PauseOne(n, 2*minT, 2, 11, swim.Config{Mode: mode})
		require.NoError(t, err)
		assert.Positive(t, r.DeadEvents, "%v: a pause of 2·Min is declared", mode)
	}
}

// A member that restarts with incarnation 0 is not kept dead or re-killed:
// it refutes its old state and every member sees it alive.
func TestRestartWithLowerIncarnation(t *testing.T) {
	for _, mode := range []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard, swim.ModeDetector} {
		for _, down := range []time.Duration{3 * time.Second, 60 * time.Second} {
			r, err := RestartAfter(24, down, 5, swim.Config{Mode: mode})
			require.NoError(t, err)
			require.Positive(t, r.IncarnationBefore, "%v: the restart is below the old incarnation", mode)
			assert.Greater(t, r.Incarnation, r.IncarnationBefore, "%v, down %v: refuted its old state", mode, down)
			if down > 30*time.Second {
				assert.Positive(t, r.DeadBefore, "%v: declared dead while down", mode)
			}
			assert.Zero(t, r.DeadAfter, "%v, down %v: not re-killed", mode, down)
			assert.True(t, r.AllAlive, "%v, down %v: everyone sees it alive", mode, down)
			assert.GreaterOrEqual(t, r.ConvergedAfter, time.Duration(0), "%v, down %v", mode, down)
		}
	}
}

// A partition into halves long enough for each half to declare the other
// dead heals into one view after it ends.
func TestPartitionHeals(t *testing.T) {
	modes := []swim.Mode{swim.ModeDetector}
	if !testing.Short() {
		modes = []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard, swim.ModeDetector}
	}
	for _, mode := range modes {
		r, err := PartitionHalves(24, 90*time.Second, 3, swim.Config{Mode: mode})
		require.NoError(t, err)
		assert.Equal(t, 2*12*12, r.DeadDuring, "%v: every member declared every member of the other half dead", mode)
		assert.True(t, r.Healed, "%v: %d (observer, member) pairs still not alive", mode, r.FinalDiffers)
		assert.Less(t, r.HealedAfter, 2*swim.DefaultReconnectInterval, "%v", mode)
	}
}

// A group built by joins through one known member converges to the full
// view; a member that leaves is seen as left (not failed) by all.
func TestJoinAndLeave(t *testing.T) {
	const n = 32
	s, err := New(Config{N: n, Seed: 9, NoBootstrap: true})
	require.NoError(t, err)
	for i := 1; i < n; i++ {
		s.At(time.Duration(i)*100*time.Millisecond, func() {
			assert.NoError(t, s.Join(i, 0))
		})
	}
	s.RunUntil(30 * time.Second)
	assert.Zero(t, oneView(s), "every member sees every other alive")
	for i := 0; i < n; i++ {
		assert.Equal(t, n, s.Member(i).NumAlive())
	}
	healthy := make([]bool, n)
	fp := NewFPCounter(s, healthy)
	fp.MarkLeft(5)
	left := 0
	inner := fp.Observe
	s.SetEventHook(func(now time.Duration, obs int, ev swim.Event) {
		inner(now, obs, ev)
		if ev.Kind == swim.EventLeave && ev.Node.ID == s.Node(5).ID {
			left++
		}
	})
	require.NoError(t, s.Leave(5))
	s.RunUntil(60 * time.Second)
	assert.True(t, s.Member(5).Left())
	assert.Equal(t, n-1, left, "every other member saw the leave")
	assert.Zero(t, fp.FP)
	for i := 0; i < n; i++ {
		if i != 5 {
			assert.Equal(t, swim.StateLeft, s.Member(i).State(s.Node(5).ID))
		}
	}
}

// Pauses queue packets by default and drop them on request.
func TestPauseQueuesOrDrops(t *testing.T) {
	for _, drop := range []bool{false, true} {
		s, err := New(Config{N: 4, Seed: 1, DropWhilePaused: drop})
		require.NoError(t, err)
		s.RunUntil(2 * time.Second)
		before := s.Stats(1).RecvMsgs
		s.Pause(1, 3*time.Second)
		assert.True(t, s.Paused(1))
		s.RunUntil(5*time.Second - time.Millisecond)
		assert.Equal(t, before, s.Stats(1).RecvMsgs, "nothing processed while paused")
		d0 := s.Dropped()
		s.RunUntil(5 * time.Second)
		assert.False(t, s.Paused(1))
		if drop {
			assert.Equal(t, before, s.Stats(1).RecvMsgs)
			assert.Positive(t, d0)
		} else {
			assert.Greater(t, s.Stats(1).RecvMsgs, before, "queued packets delivered at resume")
		}
	}
}

// Per-link delay and loss: a member behind a lossy, slow link.
func TestPerLinkDelayAndLoss(t *testing.T) {
	slow := func(from, to int, _ *rand.Rand) time.Duration {
		if from == 0 || to == 0 {
			return 200 * time.Millisecond
		}
		return time.Millisecond
	}
	lossy := func(from, to int) float64 {
		if from == 0 || to == 0 {
			return 1
		}
		return 0
	}
	s, err := New(Config{N: 8, Seed: 1, Delay: slow, LinkLoss: lossy, Member: swim.Config{Mode: swim.ModeSWIM}})
	require.NoError(t, err)
	s.RunUntil(60 * time.Second)
	assert.Equal(t, int64(0), s.Stats(0).RecvMsgs, "every packet to member 0 is lost")
	assert.Equal(t, swim.StateDead, s.Member(1).State(s.Node(0).ID))
	s2, err := New(Config{N: 8, Seed: 1, Delay: slow})
	require.NoError(t, err)
	s2.RunUntil(10 * time.Second)
	to, ok := s2.Member(1).ProbeTimeout(s2.Node(0).ID)
	require.True(t, ok)
	assert.Greater(t, to, 400*time.Millisecond, "RTT-derived probe timeout of the slow member")
	to, _ = s2.Member(1).ProbeTimeout(s2.Node(2).ID)
	assert.Equal(t, 100*time.Millisecond, to, "fast link: clamped to MinProbeTimeout")
}

// [Field-vi] gossip figures (docs/algorithms.md, “Published field
// measurements”): 100 nodes, all-to-all 9,900 messages per round, gossip fanout
// 2 about 200 (the source says 194), a new fact reaches all 100 in ≈ 7.4 rounds
// and all 10,000 in ≈ 14; T_fail of 3 rounds gives many false suspicions, 10
// none.
func TestFieldViBaselines(t *testing.T) {
	a, err := AllToAll(BaselineConfig{N: 100, Rounds: 20, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, 9900.0, a.MsgsPerRound)
	assert.Zero(t, a.FalseSuspicions)
	g, err := GossipHeartbeat(BaselineConfig{N: 100, Rounds: 60, Seed: 1, Fanout: 2, TFail: 10})
	require.NoError(t, err)
	assert.Equal(t, 200.0, g.MsgsPerRound)
	assert.Zero(t, g.FalseSuspicions)
	assert.InDelta(t, 7.4, g.Spread, 1.5)
	g3, err := GossipHeartbeat(BaselineConfig{N: 100, Rounds: 60, Seed: 1, Fanout: 2, TFail: 3})
	require.NoError(t, err)
	assert.Greater(t, g3.FalseNodeRounds, 1000)
	r100, err := RumorSpread(100, 2, 400, 1)
	require.NoError(t, err)
	assert.InDelta(t, 7.4, r100, 0.3)
	trials := 5
	if !testing.Short() {
		trials = 40
	}
	r10k, err := RumorSpread(10000, 2, trials, 1)
	require.NoError(t, err)
	assert.InDelta(t, 14, r10k, 0.8)
	// A crash: all-to-all agrees after T_fail+1 rounds; gossip later.
	a, err = AllToAll(BaselineConfig{N: 50, Rounds: 40, Seed: 1, TFail: 5, Crash: []int{3}, CrashRound: 10})
	require.NoError(t, err)
	assert.Equal(t, 6.0, a.DetectAll)
	g, err = GossipHeartbeat(BaselineConfig{N: 50, Rounds: 60, Seed: 1, TFail: 10, Crash: []int{3}, CrashRound: 20})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, g.DetectAll, 11.0)
	assert.Zero(t, g.FalseSuspicions)
	// Loss makes all-to-all with a short T_fail suspect: p^(T_fail+1) per pair-round.
	a, err = AllToAll(BaselineConfig{N: 30, Rounds: 400, Seed: 1, TFail: 1, Loss: 0.2})
	require.NoError(t, err)
	expected := 0.2 * 0.2 * 30 * 29 * 400 // ≈ P(two consecutive losses) per pair-round
	assert.InEpsilon(t, expected, float64(a.FalseSuspicions), 0.15)
	_, err = GossipHeartbeat(BaselineConfig{N: 1})
	assert.Error(t, err)
	_, err = RumorSpread(1, 1, 1, 1)
	assert.Error(t, err)
}

// FP counts every Dead event about a live member; FP− only those by a
// healthy member about a healthy member; crashed and left members are not
// false positives.
func TestFPCounter(t *testing.T) {
	s, err := New(Config{N: 4})
	require.NoError(t, err)
	c := NewFPCounter(s, []bool{true, true, false, true})
	dead := func(obs, subj int) {
		c.Observe(0, obs, swim.Event{Kind: swim.EventDead, Node: s.Node(subj)})
	}
	dead(0, 1) // healthy about healthy: FP and FP−
	dead(2, 1) // unhealthy observer: FP only
	dead(0, 2) // about an unhealthy member: FP only
	c.Observe(0, 0, swim.Event{Kind: swim.EventSuspect, Node: s.Node(3)})
	s.Crash(3)
	dead(0, 3) // crashed: a true positive
	c.MarkLeft(1)
	dead(3, 1) // left: not a failure
	assert.Equal(t, 3, c.FP)
	assert.Equal(t, 1, c.FPMinus)
	assert.Equal(t, 2, c.Subjects)
}

// Every scenario stops, with the context's error, once ScenarioConfig.Context is
// done.
func TestScenarioCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, sc := range Scenarios() {
		tables, err := sc.Run(ScenarioConfig{Quick: true, Context: ctx})
		assert.ErrorIs(t, err, context.Canceled, sc.Name)
		assert.Empty(t, tables, sc.Name)
	}
}

// The lifeguard scenario separates what the per-peer detectors add from
// what the local-pause guard adds: a row of the detector mode without it.
func TestLifeguardScenarioAblation(t *testing.T) {
	sc, ok := Lookup("lifeguard")
	require.True(t, ok)
	tables, err := sc.Run(ScenarioConfig{Quick: true, Counts: []int{1}, Duration: 20 * time.Second})
	require.NoError(t, err)
	require.Len(t, tables, 1)
	var names []string
	for _, r := range tables[0].Rows {
		names = append(names, r[1])
	}
	assert.Equal(t, []string{"swim", "swim+lifeguard", "swim+lifeguard+detector", "swim+lifeguard+detector, no pause guard"}, names)
}

// The kill scenario's experiment: every trial's crash is declared by every
// live member, first no later than full, and eager dissemination makes full
// dissemination faster for the same first declaration in ModeDetector.
func TestKillOne(t *testing.T) {
	on, err := KillOne(8, 10, 1, swim.Config{}, false)
	require.NoError(t, err)
	off, err := KillOne(8, 10, 1, swim.Config{GossipFanout: new(0)}, false)
	require.NoError(t, err)
	for _, r := range []KillResult{on, off} {
		assert.Equal(t, 10, r.Crashes)
		assert.Zero(t, r.Undeclared)
		assert.LessOrEqual(t, r.First, r.Full)
		// Min = 4 s (log10 8 < 1): no declaration before it.
		assert.Greater(t, r.First, 4*time.Second)
		// Every declaration follows an own suspicion by at least Min.
		assert.Positive(t, r.FirstSuspicion)
		assert.GreaterOrEqual(t, r.First, r.FirstSuspicion+4*time.Second)
		assert.Greater(t, r.FirstP90, 4*time.Second)
		assert.Positive(t, r.MsgsPerSecond)
	}
	assert.Less(t, on.Full, off.Full)
	_, err = KillOne(1, 1, 1, swim.Config{}, false)
	assert.Error(t, err)
}
