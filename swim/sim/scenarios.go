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

// ScenarioConfig parameterises the named scenarios. The zero value means the
// documented full-size defaults; Quick shrinks them for tests and smoke runs.
type ScenarioConfig struct {
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

// stopped returns the context's error once ScenarioConfig.Context is done.
func (o ScenarioConfig) stopped() error {
	if o.Context == nil {
		return nil
	}
	return o.Context.Err()
}

// Scenario runs one named experiment.
type Scenario struct {
	Name string
	Doc  string
	Run  func(ScenarioConfig) ([]Table, error)
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

func runLoad(o ScenarioConfig) ([]Table, error) {
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

func runDetect(o ScenarioConfig) ([]Table, error) {
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

func runKill(o ScenarioConfig) ([]Table, error) {
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

func runLifeguard(o ScenarioConfig) ([]Table, error) {
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

func runPause(o ScenarioConfig) ([]Table, error) {
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
