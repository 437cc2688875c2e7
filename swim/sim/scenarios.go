package sim

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// Table is a scenario's result: a title, a header, rows of cells, and notes
// printed under it.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
}

func (t *Table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Options parameterise the named scenarios. The zero value means the
// documented full-size defaults; Quick shrinks them for tests and smoke runs.
type Options struct {
	Seed  uint64
	Quick bool
	// Sizes overrides the group sizes of the load, detect and kill
	// scenarios.
	Sizes []int
	// Trials overrides the number of detection trials (detect) or crashes
	// (kill) per size.
	Trials int
	// Pause and Every are D and I of the lifeguard scenario (default: one
	// table each for D = 6, 9 and 12 s, I = 2·D); Counts its list of C
	// (default 1, 2, 4, 8, 16); Duration its length (default 600 s).
	Pause, Every time.Duration
	Counts       []int
	Duration     time.Duration
	// Alpha and Beta are the lifeguard scenario's α and β (default 5, 6).
	Alpha, Beta int
	// Context, when set, stops a scenario between two of its runs once it
	// is done; Run then returns its error (context.Canceled on Ctrl-C).
	Context context.Context
}

// stopped returns the context's error once Options.Context is done.
func (o Options) stopped() error {
	if o.Context == nil {
		return nil
	}
	return o.Context.Err()
}

// Scenario runs one named experiment.
type Scenario struct {
	Name string
	Doc  string
	Run  func(Options) ([]Table, error)
}

// Scenarios lists the named scenarios in the order `all` runs them.
func Scenarios() []Scenario {
	return []Scenario{
		{"load", "messages per member per period vs N (SWIM: ≈ 2, constant)", runLoad},
		{"detect", "first detection ≈ e/(e−1) periods, dissemination O(log N), crash declared by all", runDetect},
		{"kill", "one member crashes at a random instant: first and full declaration, load, per mode (bench/memberlist's kill)", runKill},
		{"lifeguard", "Lifeguard interval experiment: FP and FP− of SWIM, +Lifeguard, +detectors", runLifeguard},
		{"pause", "one member paused for 0.25 to 1.5 times the suspicion timeout Min, and Min + 1 to 3 s: Dead events about it, per mode", runPause},
		{"restart", "a member restarting with a lower incarnation rejoins and is not re-killed", runRestart},
		{"partition", "a partition into halves heals into one view", runPartition},
		{"baselines", "[Field-vi] all-to-all and gossip heartbeating figures", runBaselines},
		{"compare", "SWIM and the heartbeating baselines on equal terms (N = 100)", runCompare},
	}
}

// Lookup returns the scenario called name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
func itoa(x int) string   { return strconv.Itoa(x) }

var modes = []swim.Mode{swim.ModeSWIM, swim.ModeLifeguard, swim.ModeDetector}

func runLoad(o Options) ([]Table, error) {
	sizes, periods := []int{8, 16, 32, 64, 128, 256, 512, 1000}, 100
	if o.Quick {
		sizes, periods = []int{8, 32, 128}, 30
	}
	if o.Sizes != nil {
		sizes = o.Sizes
	}
	t := Table{Title: fmt.Sprintf("Per-member load, failure-free, %d periods after warm-up, defaults (%v)", periods, swim.ModeDetector),
		Header: []string{"N", "sent/period", "of which push-pull", "received/period", "max sent/period", "bytes sent/period"}}
	for _, n := range sizes {
		if err := o.stopped(); err != nil {
			return nil, err
		}
		r, err := Load(n, periods, o.Seed, swim.Config{})
		if err != nil {
			return nil, err
		}
		t.add(itoa(n), f3(r.SentPerPeriod), f3(r.SyncPerPeriod), f3(r.RecvPerPeriod), f2(r.MaxSentPerPeriod), f2(r.BytesPerPeriod))
	}
	t.Notes = append(t.Notes, "SWIM paper: each member sends one ping and on average one ack per period; load independent of N.",
		fmt.Sprintf("push-pull: one exchange per member every %v·ceil(N/32): a view digest (1 packet) while views agree, else both views (about 3 packets per 32 members each).", swim.DefaultPushPullInterval))
	return []Table{t}, nil
}

func runDetect(o Options) ([]Table, error) {
	sizes, trials := []int{8, 16, 32, 64, 128, 256, 512, 1000}, 200
	if o.Quick {
		sizes, trials = []int{8, 32, 128}, 30
	}
	if o.Sizes != nil {
		sizes = o.Sizes
	}
	if o.Trials > 0 {
		trials = o.Trials
	}
	var out []Table
	for _, mode := range []swim.Mode{swim.ModeSWIM, swim.ModeDetector} {
		t := Table{Title: fmt.Sprintf("Crash detection, %v, aligned periods, crash 1 ms before a period boundary", mode),
			Header: []string{"N", "crashes", "first detection (periods)", "dissemination (periods)", "log2 N", "all declared dead (periods)", "not declared by all"}}
		for _, n := range sizes {
			if err := o.stopped(); err != nil {
				return nil, err
			}
			tr := max(1, trials*100/max(n, 100)) // about `trials` crashes per size
			r, err := Detection(n, tr, o.Seed, swim.Config{Mode: mode})
			if err != nil {
				return nil, err
			}
			t.add(itoa(n), itoa(r.Crashes), f3(r.FirstDetection), f2(r.Dissemination), f2(math.Log2(float64(n))), f2(r.AllDead), itoa(r.Undetected))
		}
		t.Notes = append(t.Notes,
			fmt.Sprintf("SWIM: E[first detection] = 1/(1 − e^−1) = %.3f periods for random targets (limit of large N); finite N with round-robin is a little faster.", 1/(1-math.Exp(-1))),
			"dissemination: first suspicion to every live member suspecting (or having declared dead) the crashed member.")
		if mode == swim.ModeDetector {
			t.Notes = append(t.Notes, "detector mode: the gate retries a failed probe once when the prober's own detector still trusts the peer; the retry sends its ping-reqs at once and suspects when all have nacked, which adds a fraction of a period.")
		}
		out = append(out, t)
	}
	return out, nil
}

// killVariants are the rows of the kill scenario: each mode, and the
// Lifeguard modes without eager dissemination.
var killVariants = []struct {
	name   string
	mc     swim.Config
	silent bool
}{
	{swim.ModeSWIM.String(), swim.Config{Mode: swim.ModeSWIM}, false},
	{swim.ModeLifeguard.String(), swim.Config{Mode: swim.ModeLifeguard}, false},
	{swim.ModeLifeguard.String() + ", no eager gossip", swim.Config{Mode: swim.ModeLifeguard, GossipFanout: new(0)}, false},
	{swim.ModeLifeguard.String() + ", stream probe, silent", swim.Config{Mode: swim.ModeLifeguard, StreamProbe: true}, true},
	{swim.ModeDetector.String(), swim.Config{Mode: swim.ModeDetector}, false},
	{swim.ModeDetector.String() + ", no eager gossip", swim.Config{Mode: swim.ModeDetector, GossipFanout: new(0)}, false},
	{swim.ModeDetector.String() + ", stream probe, refused", swim.Config{Mode: swim.ModeDetector, StreamProbe: true}, false},
	{swim.ModeDetector.String() + ", stream probe, silent", swim.Config{Mode: swim.ModeDetector, StreamProbe: true}, true},
}

func runKill(o Options) ([]Table, error) {
	sizes, trials := []int{8, 16, 32}, 100
	if o.Quick {
		sizes, trials = []int{8}, 20
	}
	if o.Sizes != nil {
		sizes = o.Sizes
	}
	if o.Trials > 0 {
		trials = o.Trials
	}
	t := Table{Title: fmt.Sprintf("One member crashes at a random instant after 20 periods (starts spread over a period), %d trials per size, defaults", trials),
		Header: []string{"N", "mode", "first suspicion", "first declaration", "p90", "full dissemination", "msgs/member/s after the crash", "not declared by all"}}
	for _, n := range sizes {
		for _, v := range killVariants {
			if err := o.stopped(); err != nil {
				return nil, err
			}
			r, err := KillOne(n, trials, o.Seed, v.mc, v.silent)
			if err != nil {
				return nil, err
			}
			ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
			t.add(itoa(n), v.name, ms(r.FirstSuspicion), ms(r.First), ms(r.FirstP90), ms(r.Full), f3(r.MsgsPerSecond), itoa(r.Undeclared))
		}
	}
	t.Notes = append(t.Notes,
		"first suspicion: crash to the first live member suspecting it on its own failed probe (the probing order's share of the first declaration); p90: the first declaration's 90th percentile.",
		"first/full: crash to the first/last live member declaring it dead; msgs/member/s: sent by each live member in the 40 periods after the crash.",
		"stream probe: the TCP fallback ping of swim/agent (swim.Config.StreamProbe); refused: the crashed process's host refuses it at once (swim/sim's Crash), silent: the host is down, cut off or hung and nothing answers before the probe's deadline (CrashSilent).",
		"eager gossip: own confirmations, declarations and refutations pushed at once (swim.Config.GossipFanout); bench/memberlist runs the same scenario over UDP against hashicorp/memberlist.")
	return []Table{t}, nil
}

func runLifeguard(o Options) ([]Table, error) {
	pauses := []time.Duration{6 * time.Second, 9 * time.Second, 12 * time.Second}
	dur := 600 * time.Second
	counts := []int{1, 2, 4, 8, 16}
	if o.Quick {
		pauses, dur, counts = pauses[1:2], 200*time.Second, []int{1, 4, 16}
	}
	if o.Pause > 0 {
		pauses = []time.Duration{o.Pause}
	}
	if o.Duration > 0 {
		dur = o.Duration
	}
	if o.Counts != nil {
		counts = o.Counts
	}
	alpha, beta := 5, 6
	if o.Alpha > 0 {
		alpha = o.Alpha
	}
	if o.Beta > 0 {
		beta = o.Beta
	}
	const n = 128
	minT := time.Duration(float64(alpha) * math.Log10(n) * float64(time.Second))
	var out []Table
	for _, D := range pauses {
		I := 2 * D
		if o.Every > 0 {
			I = o.Every
		}
		t := Table{Title: fmt.Sprintf("Lifeguard interval experiment: N = %d, C members paused %v every %v, %v, α = %d, β = %d (plain SWIM: β = 1)", n, D, I, dur, alpha, beta),
			Header: []string{"C", "mode", "FP", "FP−", "members falsely declared", "FP vs SWIM", "FP− vs SWIM", "msgs/member/period"}}
		for _, c := range counts {
			var base IntervalResult
			for _, v := range lifeguardVariants {
				if err := o.stopped(); err != nil {
					return nil, err
				}
				mc := v.mc
				mc.SuspicionMult, mc.SuspicionMaxTimeoutMult = alpha, beta
				r, err := Interval(IntervalConfig{N: n, C: c, D: D, I: I, Duration: dur, Seed: o.Seed, Member: mc})
				if err != nil {
					return nil, err
				}
				if mc.Mode == swim.ModeSWIM {
					base = r
				}
				t.add(itoa(c), v.name, itoa(r.FP), itoa(r.FPMinus), itoa(r.Subjects), ratio(r.FP, base.FP), ratio(r.FPMinus, base.FPMinus), f3(r.MsgsPerPeriod))
			}
		}
		t.Notes = append(t.Notes,
			fmt.Sprintf("suspicion timeout Min = α·log10 N·1 s = %v; FP counts (observer, member) Dead events about live members; FP− those by a healthy member about a healthy one.", minT.Round(time.Millisecond)),
			"Lifeguard paper (α = 5, β = 6): FP and FP− under 2% of plain SWIM.",
			"no pause guard: the detector mode without its local-pause guard (PauseGuard < 0), i.e. what the per-peer detectors (gate, RTT probe timeout) add to Lifeguard by themselves.")
		out = append(out, t)
	}
	return out, nil
}

// lifeguardVariants are the rows of the lifeguard scenario for each C: the
// three modes, and the detector mode without its local-pause guard, which
// separates what the per-peer detectors add from what the pause guard (a
// member noticing its own stall) adds.
var lifeguardVariants = []struct {
	name string
	mc   swim.Config
}{
	{swim.ModeSWIM.String(), swim.Config{Mode: swim.ModeSWIM}},
	{swim.ModeLifeguard.String(), swim.Config{Mode: swim.ModeLifeguard}},
	{swim.ModeDetector.String(), swim.Config{Mode: swim.ModeDetector}},
	{swim.ModeDetector.String() + ", no pause guard", swim.Config{Mode: swim.ModeDetector, PauseGuard: new(time.Duration(0))}},
}

func ratio(a, b int) string {
	if b == 0 {
		if a == 0 {
			return "–"
		}
		return "∞"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// PauseResult is the outcome of PauseOne.
type PauseResult struct {
	Pauses     int
	DeadEvents int
	// Suspects counts Suspect events about the paused member.
	Suspects int
}

// PauseOne pauses one member of an n-member group for d, reps times, 30 s
// apart, and counts Dead events about it.
func PauseOne(n int, d time.Duration, reps int, seed uint64, mc swim.Config) (PauseResult, error) {
	T := periodOf(mc)
	s, err := New(Config{N: n, Seed: seed, Member: mc, StartSpread: T})
	if err != nil {
		return PauseResult{}, err
	}
	victim := n / 2
	var res PauseResult
	s.SetEventHook(func(_ time.Duration, _ int, ev swim.Event) {
		if s.Index(ev.Node.ID) != victim {
			return
		}
		switch ev.Kind {
		case swim.EventDead:
			res.DeadEvents++
		case swim.EventSuspect:
			res.Suspects++
		}
	})
	for k := 0; k < reps; k++ {
		at := 10*T + time.Duration(k)*30*T + time.Duration(k)*T/7
		s.At(at, func() { s.Pause(victim, d) })
	}
	res.Pauses = reps
	s.RunUntil(10*T + time.Duration(reps)*30*T + 30*T)
	return res, nil
}

func runPause(o Options) ([]Table, error) {
	sizes := []int{32}
	reps, seeds := 20, 10
	if o.Quick {
		seeds = 2
	}
	if o.Sizes != nil {
		sizes = o.Sizes
	}
	var out []Table
	for _, n := range sizes {
		minT := time.Duration(4 * math.Max(1, math.Log10(float64(n))) * float64(time.Second)).Truncate(time.Millisecond)
		t := Table{Title: fmt.Sprintf("One member of %d paused %d times in each of %d runs (defaults: α = 4, Min suspicion timeout %v)", n, reps, seeds, minT),
			Header: []string{"mode", "pause", "pause / Min", "Suspect events about it", "Dead events about it", "of"}}
		var lengths []time.Duration
		for _, f := range []float64{0.25, 0.5, 0.75, 0.9} {
			lengths = append(lengths, time.Duration(f*float64(minT)).Truncate(time.Millisecond))
		}
		// Just past Min, where the modes and the dissemination of a
		// declaration make the difference, then 1.5·Min (every member).
		for _, extra := range []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, 3 * time.Second} {
			if 2*(minT+extra) < 3*minT {
				lengths = append(lengths, minT+extra)
			}
		}
		lengths = append(lengths, time.Duration(1.5*float64(minT)).Truncate(time.Millisecond))
		for _, mode := range modes {
			for _, d := range lengths {
				var susp, dead int
				for k := 0; k < seeds; k++ {
					if err := o.stopped(); err != nil {
						return nil, err
					}
					r, err := PauseOne(n, d, reps, o.Seed+uint64(k), swim.Config{Mode: mode})
					if err != nil {
						return nil, err
					}
					susp += r.Suspects
					dead += r.DeadEvents
				}
				t.add(mode.String(), d.String(), f2(float64(d)/float64(minT)), itoa(susp), itoa(dead), itoa(seeds*reps*(n-1)))
			}
		}
		t.Notes = append(t.Notes, "a Dead event is one member declaring (or adopting) the paused member's death; of: pauses × other members, the most there can be.",
			"plain SWIM refutes only by piggybacking, so a refutation can reach a suspecter after its timer: a pause below Min is not always safe there;",
			"the Lifeguard modes also send the new Alive at once to every member named as suspecter and to k random members.",
			"past Min the count grows with the time between the first declaration and the paused member's refutation, and with how fast declarations spread.")
		out = append(out, t)
	}
	return out, nil
}

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

func runRestart(o Options) ([]Table, error) {
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

func runPartition(o Options) ([]Table, error) {
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

func runBaselines(o Options) ([]Table, error) {
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

func runCompare(o Options) ([]Table, error) {
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
