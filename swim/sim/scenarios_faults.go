// Scenarios of restarts, partitions, baselines and crash runs.

package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// RestartResult is the outcome of Restart.
type RestartResult struct {
	DeadBefore int  // Dead events about the member before it restarted
	DeadAfter  int  // Dead events about it after the restart (re-kills)
	AllAlive   bool // every member sees it alive at the end
	// IncarnationBefore is the member's incarnation when it crashed (raised
	// by refutations of suspicions during two pauses), so that the restart
	// with incarnation 0 is a restart with a lower incarnation;
	// Incarnation is its incarnation at the end.
	IncarnationBefore swim.Incarnation
	Incarnation       swim.Incarnation
	ConvergedAfter    time.Duration // restart to every member seeing it alive
}

// RestartAfter pauses member x of an n-member group twice for 3 periods
// (it is suspected and refutes, raising its incarnation), crashes it,
// restarts it down after (with incarnation 0, lower than the group's, joining
// through member 0), and checks the group takes it back and never declares
// it dead again.
func RestartAfter(n int, down time.Duration, seed uint64, mc swim.Config) (RestartResult, error) {
	T := periodOf(mc)
	s, err := New(Config{N: n, Seed: seed, Member: mc, StartSpread: T})
	if err != nil {
		return RestartResult{}, err
	}
	x := n - 1
	var res RestartResult
	restarted := false
	s.SetEventHook(func(_ time.Duration, _ int, ev swim.Event) {
		if s.Index(ev.Node.ID) == x && ev.Kind == swim.EventDead {
			if restarted {
				res.DeadAfter++
			} else {
				res.DeadBefore++
			}
		}
	})
	s.At(4*T, func() { s.Pause(x, 3*T) })
	s.At(15*T, func() { s.Pause(x, 3*T) })
	crashAt := 30 * T
	s.RunUntil(crashAt)
	res.IncarnationBefore = s.Member(x).Incarnation()
	s.Crash(x)
	s.RunUntil(crashAt + down)
	restarted = true
	if err := s.Restart(x, 0); err != nil {
		return res, err
	}
	start := s.Now()
	res.ConvergedAfter = -1
	for t := start; t < start+120*T; t += T / 10 {
		s.RunUntil(t)
		if res.ConvergedAfter < 0 && allSee(s, x, swim.StateAlive) {
			res.ConvergedAfter = s.Now() - start
		}
	}
	res.AllAlive = allSee(s, x, swim.StateAlive)
	res.Incarnation = s.Member(x).Incarnation()
	return res, nil
}

// allSee reports whether every live member other than x has x in state st.
func allSee(s *Sim, x int, st swim.State) bool {
	id := s.Node(x).ID
	for i := 0; i < s.N(); i++ {
		if i == x || s.Crashed(i) {
			continue
		}
		if s.Member(i).State(id) != st {
			return false
		}
	}
	return true
}

func runRestart(o ScenarioConfig) ([]Table, error) {
	const n = 32
	t := Table{Title: fmt.Sprintf("Crash and restart of one member of %d with incarnation 0, lower than before the crash (joins through member 0)", n),
		Header: []string{"mode", "down for", "Dead events before", "Dead events after restart", "incarnation at crash", "final incarnation", "all see it alive", "converged after"}}
	for _, mode := range modes {
		for _, down := range []time.Duration{500 * time.Millisecond, 3 * time.Second, 60 * time.Second} {
			if err := o.stopped(); err != nil {
				return nil, err
			}
			r, err := RestartAfter(n, down, o.Seed, swim.Config{Mode: mode})
			if err != nil {
				return nil, err
			}
			conv := "never"
			if r.ConvergedAfter >= 0 {
				conv = r.ConvergedAfter.String()
			}
			t.add(mode.String(), down.String(), itoa(r.DeadBefore), itoa(r.DeadAfter), strconv.FormatUint(uint64(r.IncarnationBefore), 10),
				strconv.FormatUint(uint64(r.Incarnation), 10), strconv.FormatBool(r.AllAlive), conv)
		}
	}
	t.Notes = append(t.Notes, "the restarted member learns its old state from the join's view transfer (or a later suspicion) and refutes it with a higher incarnation.")
	return []Table{t}, nil
}

// PartitionResult is the outcome of PartitionHalves.
type PartitionResult struct {
	DeadDuring   int           // Dead events across the cut during the partition
	Healed       bool          // one full view at the end
	HealedAfter  time.Duration // from the end of the partition to one full view
	FinalDiffers int           // (observer, member) pairs not alive at the end
}

// PartitionHalves splits an n-member group into halves for length, heals
// it, and measures the time until every member sees every other alive.
func PartitionHalves(n int, length time.Duration, seed uint64, mc swim.Config) (PartitionResult, error) {
	T := periodOf(mc)
	s, err := New(Config{N: n, Seed: seed, Member: mc, StartSpread: T})
	if err != nil {
		return PartitionResult{}, err
	}
	var res PartitionResult
	s.SetEventHook(func(_ time.Duration, obs int, ev swim.Event) {
		if ev.Kind == swim.EventDead && (obs < n/2) != (s.Index(ev.Node.ID) < n/2) {
			res.DeadDuring++
		}
	})
	s.RunUntil(10 * T)
	g := make([]int, n)
	for i := n / 2; i < n; i++ {
		g[i] = 1
	}
	if err := s.Partition(g); err != nil {
		return res, err
	}
	s.RunUntil(10*T + length)
	s.SetEventHook(nil)
	s.Heal()
	end := s.Now()
	res.HealedAfter = -1
	for t := end; t < end+300*T; t += T / 2 {
		s.RunUntil(t)
		if oneView(s) == 0 {
			res.HealedAfter = s.Now() - end
			break
		}
	}
	res.FinalDiffers = oneView(s)
	res.Healed = res.FinalDiffers == 0
	return res, nil
}

// oneView counts (observer, member) pairs where a live member does not see
// another live member alive.
func oneView(s *Sim) int {
	bad := 0
	for i := 0; i < s.N(); i++ {
		for j := 0; j < s.N(); j++ {
			if i != j && s.Member(i).State(s.Node(j).ID) != swim.StateAlive {
				bad++
			}
		}
	}
	return bad
}

func runPartition(o ScenarioConfig) ([]Table, error) {
	const n = 32
	t := Table{Title: fmt.Sprintf("Partition of %d members into two halves, then healed", n),
		Header: []string{"mode", "partition length", "Dead events across the cut", "one view after heal", "healed after"}}
	for _, mode := range modes {
		for _, length := range []time.Duration{5 * time.Second, 120 * time.Second} {
			if err := o.stopped(); err != nil {
				return nil, err
			}
			r, err := PartitionHalves(n, length, o.Seed, swim.Config{Mode: mode})
			if err != nil {
				return nil, err
			}
			h := "not within 300 periods"
			if r.HealedAfter >= 0 {
				h = r.HealedAfter.String()
			}
			t.add(mode.String(), length.String(), itoa(r.DeadDuring), strconv.FormatBool(r.Healed), h)
		}
	}
	t.Notes = append(t.Notes, fmt.Sprintf("members declared dead are pinged (with the Dead update) every ReconnectInterval = %v; a live one refutes and the halves merge.", swim.DefaultReconnectInterval))
	return []Table{t}, nil
}

func runBaselines(o ScenarioConfig) ([]Table, error) {
	trials := 30
	if o.Quick {
		trials = 5
	}
	t := Table{Title: "[Field-vi] gossip part (docs/algorithms.md, “Published field measurements”): N = 100, no loss",
		Header: []string{"protocol", "msgs/round", "fact reaches all 100 (rounds)", "reaches all 10,000 (rounds)", "false suspicions T_fail=3 (node-rounds, pair-rounds)", "T_fail=10", "all agree on a crash (rounds, T_fail=10)"}}
	a, err := AllToAll(BaselineConfig{N: 100, Rounds: 50, Seed: o.Seed})
	if err != nil {
		return nil, err
	}
	a10, err := AllToAll(BaselineConfig{N: 100, Rounds: 60, Seed: o.Seed, TFail: 10, Crash: []int{7}, CrashRound: 30})
	if err != nil {
		return nil, err
	}
	t.add("all-to-all", f2(a.MsgsPerRound), "1", "1", "0, 0", itoa(a10.FalseSuspicions), f2(a10.DetectAll))
	for _, fan := range []int{2, 3} {
		var g, g3, g10 BaselineResult
		var fs3n, fs3p, fs10, spread, det float64
		for k := 0; k < trials; k++ {
			if err := o.stopped(); err != nil {
				return nil, err
			}
			seed := o.Seed + uint64(k)*104729
			if g, err = GossipHeartbeat(BaselineConfig{N: 100, Rounds: 100, Seed: seed, Fanout: fan, TFail: 10}); err != nil {
				return nil, err
			}
			if g3, err = GossipHeartbeat(BaselineConfig{N: 100, Rounds: 100, Seed: seed, Fanout: fan, TFail: 3}); err != nil {
				return nil, err
			}
			if g10, err = GossipHeartbeat(BaselineConfig{N: 100, Rounds: 100, Seed: seed, Fanout: fan, TFail: 10, Crash: []int{7}, CrashRound: 50}); err != nil {
				return nil, err
			}
			fs3n += float64(g3.FalseNodeRounds)
			fs3p += float64(g3.FalseSuspicions)
			fs10 += float64(g.FalseSuspicions)
			spread += g.Spread
			det += g10.DetectAll
		}
		big, err := RumorSpread(10000, fan, trials, o.Seed)
		if err != nil {
			return nil, err
		}
		small, err := RumorSpread(100, fan, 20*trials, o.Seed)
		if err != nil {
			return nil, err
		}
		t.add(fmt.Sprintf("gossip fanout %d", fan), f2(g.MsgsPerRound), fmt.Sprintf("%.2f (table), %.2f (rumor)", spread/float64(trials), small),
			f2(big), fmt.Sprintf("%.0f, %.0f", fs3n, fs3p), f2(fs10), f2(det/float64(trials)))
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("false suspicions summed over %d trials of 100 rounds; [Field-vi]: 9,900 vs 194 msgs/round, 7.4 and ≈ 14 rounds (fanout 3: 12.6 at 10,000, 291 msgs/round), 471,970 false suspicions with T_fail = 3, none with 10, ≈ 14 rounds to agree.", trials),
		"10,000 members: single-fact push model (RumorSpread), the same dynamics as one fresh counter in the full table.")
	return []Table{t}, nil
}

func runCompare(o ScenarioConfig) ([]Table, error) {
	const n = 100
	periods := 300
	if o.Quick {
		periods = 100
	}
	t := Table{Title: fmt.Sprintf("N = %d, %d periods/rounds, 1 crash: message load, detection and false positives", n, periods),
		Header: []string{"protocol", "loss", "msgs/member/period", "bytes/member/period", "crash detected by all (periods)", "false positives"}}
	for _, loss := range []float64{0, 0.05} {
		if err := o.stopped(); err != nil {
			return nil, err
		}
		a, err := AllToAll(BaselineConfig{N: n, Rounds: periods, Seed: o.Seed, Loss: loss, TFail: 3, Crash: []int{7}, CrashRound: periods / 2})
		if err != nil {
			return nil, err
		}
		t.add("all-to-all T_fail=3", f2(loss), f2(a.MsgsPerRound/n), f2(a.BytesPerRound/n), f2(a.DetectAll), itoa(a.FalseSuspicions)+" pair-rounds")
		g, err := GossipHeartbeat(BaselineConfig{N: n, Rounds: periods, Seed: o.Seed, Loss: loss, TFail: 10, Crash: []int{7}, CrashRound: periods / 2})
		if err != nil {
			return nil, err
		}
		t.add("gossip fanout 2 T_fail=10", f2(loss), f2(g.MsgsPerRound/n), f2(g.BytesPerRound/n), f2(g.DetectAll), itoa(g.FalseSuspicions)+" pair-rounds")
		for _, mode := range modes {
			if err := o.stopped(); err != nil {
				return nil, err
			}
			r, err := SWIMCrashRun(n, periods, loss, o.Seed, swim.Config{Mode: mode})
			if err != nil {
				return nil, err
			}
			t.add(mode.String(), f2(loss), f2(r.MsgsPerPeriod), f2(r.BytesPerPeriod), f2(r.DetectAll), itoa(r.FP)+" Dead events")
		}
	}
	t.Notes = append(t.Notes, "SWIM detection is to Dead at every member (suspicion timeout included); baselines count suspicion at every member.")
	return []Table{t}, nil
}

// CrashRunResult is the outcome of SWIMCrashRun.
type CrashRunResult struct {
	MsgsPerPeriod, BytesPerPeriod float64
	DetectAll                     float64 // periods from the crash to Dead at every live member (−1: never)
	FP                            int
}

// SWIMCrashRun runs n members for the given periods with random loss,
// crashes one member halfway, and reports load, full detection time and
// false positives.
func SWIMCrashRun(n, periods int, loss float64, seed uint64, mc swim.Config) (CrashRunResult, error) {
	T := periodOf(mc)
	s, err := New(Config{N: n, Seed: seed, Member: mc, Loss: loss, StartSpread: T})
	if err != nil {
		return CrashRunResult{}, err
	}
	healthy := make([]bool, n)
	for i := range healthy {
		healthy[i] = true
	}
	fp := NewFPCounter(s, healthy)
	victim := 7
	crashAt := time.Duration(periods/2) * T
	deadAt := make(map[int]bool)
	var all time.Duration = -1
	inner := fp.Observe
	s.SetEventHook(func(now time.Duration, obs int, ev swim.Event) {
		inner(now, obs, ev)
		if ev.Kind == swim.EventDead && s.Index(ev.Node.ID) == victim && now >= crashAt {
			deadAt[obs] = true
			if len(deadAt) == n-1 && all < 0 {
				all = now - crashAt
			}
		}
	})
	s.At(crashAt, func() { s.Crash(victim) })
	s.RunUntil(time.Duration(periods) * T)
	var msgs, bytes int64
	for i := 0; i < n; i++ {
		msgs += s.Stats(i).SentMsgs
		bytes += s.Stats(i).SentBytes
	}
	r := CrashRunResult{MsgsPerPeriod: float64(msgs) / float64(n) / float64(periods),
		BytesPerPeriod: float64(bytes) / float64(n) / float64(periods), DetectAll: -1, FP: fp.FP}
	if all >= 0 {
		r.DetectAll = float64(all) / float64(T)
	}
	return r, nil
}
