package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// periodOf returns the base protocol period of a member template.
func periodOf(mc swim.Config) time.Duration {
	if mc.ProbeInterval > 0 {
		return mc.ProbeInterval
	}
	return swim.DefaultProbeInterval
}

// LoadResult is the traffic of a steady group.
type LoadResult struct {
	N       int
	Periods int
	// SentPerPeriod and RecvPerPeriod are messages per member per protocol
	// period (mean over members); MaxSentPerPeriod is the busiest member's.
	SentPerPeriod    float64
	RecvPerPeriod    float64
	MaxSentPerPeriod float64
	// BytesPerPeriod is estimated bytes sent per member per period.
	BytesPerPeriod float64
	// SyncPerPeriod is the part of SentPerPeriod that is anti-entropy
	// (push-pull MsgSync and MsgJoin packets) rather than probing.
	SyncPerPeriod float64
}

// Load runs a failure-free group of n members for the given number of
// periods (after a warm-up of 5 periods that is not counted) and reports
// per-member message load: SWIM's constant ≈ 2 messages (a ping and an ack)
// sent per member per period.
func Load(n, periods int, seed uint64, mc swim.Config) (LoadResult, error) {
	T := periodOf(mc)
	s, err := New(Config{N: n, Seed: seed, Member: mc, StartSpread: T})
	if err != nil {
		return LoadResult{}, err
	}
	warm := 5 * T
	s.RunUntil(warm)
	before := make([]MemberStats, n)
	for i := range before {
		before[i] = s.Stats(i)
	}
	s.RunUntil(warm + time.Duration(periods)*T)
	r := LoadResult{N: n, Periods: periods}
	for i := 0; i < n; i++ {
		st := s.Stats(i)
		sent := float64(st.SentMsgs-before[i].SentMsgs) / float64(periods)
		r.SentPerPeriod += sent
		r.RecvPerPeriod += float64(st.RecvMsgs-before[i].RecvMsgs) / float64(periods)
		r.BytesPerPeriod += float64(st.SentBytes-before[i].SentBytes) / float64(periods)
		r.SyncPerPeriod += float64(st.SentSync-before[i].SentSync) / float64(periods)
		r.MaxSentPerPeriod = math.Max(r.MaxSentPerPeriod, sent)
	}
	r.SentPerPeriod /= float64(n)
	r.RecvPerPeriod /= float64(n)
	r.BytesPerPeriod /= float64(n)
	r.SyncPerPeriod /= float64(n)
	return r, nil
}

// DetectionResult summarises crash-detection trials.
type DetectionResult struct {
	N       int
	Crashes int
	// FirstDetection is the mean time from a crash to the first suspicion
	// of the crashed member by anyone, in protocol periods. Crashes happen
	// just before a period boundary of aligned members, so this is, in
	// SWIM's shuffled order (swim.Config.ShuffledProbes), the SWIM paper's
	// E[T] = T'·e/(e−1) ≈ 1.582 T', and on the ring one period.
	FirstDetection float64
	// Dissemination is the mean time from the first suspicion to the
	// instant every live member suspects (or has declared dead) the crashed
	// member, in periods: pure infection-style spread, O(log N).
	Dissemination float64
	// AllDead is the mean time from the crash to the instant every live
	// member has declared it dead, in periods.
	AllDead float64
	// Undetected counts crashes not declared dead by every live member by
	// the end of the trial.
	Undetected int
}

// Detection crashes members of an n-member group and measures
// first-detection, dissemination and full-declaration times. Each trial
// starts a fresh group with aligned periods, runs 5 periods, crashes
// max(1, n/100) random members 1 ms before a period boundary, and runs until
// every live member has declared all of them dead (at most 200 periods).
func Detection(n, trials int, seed uint64, mc swim.Config) (DetectionResult, error) {
	T := periodOf(mc)
	res := DetectionResult{N: n}
	var sumFirst, sumDiss, sumDead float64
	for trial := 0; trial < trials; trial++ {
		s, err := New(Config{N: n, Seed: seed + uint64(trial)*7919, Member: mc})
		if err != nil {
			return res, err
		}
		rng := rand.New(rand.NewPCG(seed, uint64(trial)))
		k := max(1, n/100)
		victims := rng.Perm(n)[:k]
		isVictim := make(map[int]int, k)
		for vi, v := range victims {
			isVictim[v] = vi
		}
		crashAt := 5*T - time.Millisecond
		// One record per victim: instants (-1 until seen) and who has
		// suspected or declared it.
		type track struct {
			first, allSusp, allDead time.Duration
			susp, dead              []bool
			nSusp, nDead            int
		}
		tr := make([]track, k)
		for vi := range tr {
			tr[vi] = track{first: -1, allSusp: -1, allDead: -1, susp: make([]bool, n), dead: make([]bool, n)}
		}
		live := n - k
		s.SetEventHook(func(now time.Duration, obs int, ev swim.Event) {
			vi, ok := isVictim[s.Index(ev.Node.ID)]
			if !ok || now < crashAt {
				return
			}
			v := &tr[vi]
			if ev.Kind == swim.EventSuspect || ev.Kind == swim.EventDead {
				if v.first < 0 {
					v.first = now
				}
				if !v.susp[obs] {
					v.susp[obs] = true
					if v.nSusp++; v.nSusp == live {
						v.allSusp = now
					}
				}
			}
			if ev.Kind == swim.EventDead && !v.dead[obs] {
				v.dead[obs] = true
				if v.nDead++; v.nDead == live {
					v.allDead = now
				}
			}
		})
		s.RunUntil(crashAt - 1)
		s.At(crashAt, func() {
			for _, v := range victims {
				s.Crash(v)
			}
		})
		allDeclared := func() bool {
			for _, v := range tr {
				if v.allDead < 0 {
					return false
				}
			}
			return true
		}
		for t := crashAt; t < crashAt+200*T && !allDeclared(); t += T {
			s.RunUntil(t)
		}
		for _, v := range tr {
			res.Crashes++
			if v.allDead < 0 || v.first < 0 || v.allSusp < 0 {
				res.Undetected++
				continue
			}
			sumFirst += float64(v.first-crashAt) / float64(T)
			sumDiss += float64(v.allSusp-v.first) / float64(T)
			sumDead += float64(v.allDead-crashAt) / float64(T)
		}
	}
	if d := res.Crashes - res.Undetected; d > 0 {
		res.FirstDetection = sumFirst / float64(d)
		res.Dissemination = sumDiss / float64(d)
		res.AllDead = sumDead / float64(d)
	}
	return res, nil
}

// FPCounter counts false positives from membership events: FP is every
// EventDead about a member that is live (not crashed, not left) at that
// instant, whoever declared it; FPMinus is the subset observed by a healthy
// member about a healthy member (Lifeguard's FP−). Healthy is set by the
// experiment (members never paused, crashed or otherwise anomalous).
type FPCounter struct {
	Healthy []bool
	FP      int
	FPMinus int
	// Subjects counts distinct live members declared dead at least once.
	Subjects int
	seen     []bool
	sim      *Sim
	left     []bool
}

// NewFPCounter installs an FP counter as s's event hook.
func NewFPCounter(s *Sim, healthy []bool) *FPCounter {
	c := &FPCounter{Healthy: healthy, seen: make([]bool, s.N()), sim: s, left: make([]bool, s.N())}
	s.SetEventHook(c.Observe)
	return c
}

// MarkLeft records that member i left voluntarily (its Dead events are
// then not false positives).
func (c *FPCounter) MarkLeft(i int) { c.left[i] = true }

// Observe is the event hook.
func (c *FPCounter) Observe(_ time.Duration, obs int, ev swim.Event) {
	if ev.Kind != swim.EventDead {
		return
	}
	j := c.sim.Index(ev.Node.ID)
	if j < 0 || c.sim.Crashed(j) || c.left[j] {
		return
	}
	c.FP++
	if !c.seen[j] {
		c.seen[j] = true
		c.Subjects++
	}
	if c.Healthy[obs] && c.Healthy[j] {
		c.FPMinus++
	}
}

// IntervalConfig is Lifeguard's interval experiment (Dadgar et al. 2018,
// §V): in a group of N members, C members are each paused for D every I (at
// a random phase), for Duration.
type IntervalConfig struct {
	N, C     int
	D, I     time.Duration
	Duration time.Duration
	Seed     uint64
	Member   swim.Config
}

// IntervalResult is the outcome of one interval experiment.
type IntervalResult struct {
	Mode     swim.Mode
	C        int
	FP       int
	FPMinus  int
	Subjects int
	// MsgsPerPeriod is the mean number of messages sent per member per
	// base protocol period.
	MsgsPerPeriod float64
}

// Interval runs one interval experiment.
func Interval(cfg IntervalConfig) (IntervalResult, error) {
	if cfg.C > cfg.N || cfg.C < 0 || cfg.D <= 0 || cfg.I <= cfg.D {
		return IntervalResult{}, fmt.Errorf("sim: interval experiment needs 0 <= C <= N and 0 < D < I")
	}
	T := periodOf(cfg.Member)
	s, err := New(Config{N: cfg.N, Seed: cfg.Seed, Member: cfg.Member, StartSpread: T})
	if err != nil {
		return IntervalResult{}, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xA1))
	healthy := make([]bool, cfg.N)
	for i := range healthy {
		healthy[i] = true
	}
	for _, a := range rng.Perm(cfg.N)[:cfg.C] {
		healthy[a] = false
		phase := time.Duration(rng.Int64N(int64(cfg.I)))
		for t := 10*T + phase; t < cfg.Duration; t += cfg.I {
			s.At(t, func() { s.Pause(a, cfg.D) })
		}
	}
	c := NewFPCounter(s, healthy)
	s.RunUntil(cfg.Duration)
	var sent int64
	for i := 0; i < cfg.N; i++ {
		sent += s.Stats(i).SentMsgs
	}
	return IntervalResult{Mode: cfg.Member.Mode, C: cfg.C, FP: c.FP, FPMinus: c.FPMinus, Subjects: c.Subjects,
		MsgsPerPeriod: float64(sent) / float64(cfg.N) / (float64(cfg.Duration) / float64(T))}, nil
}

// KillResult summarises KillOne: the bench/memberlist kill scenario in the
// simulator.
type KillResult struct {
	N, Crashes int
	// First and Full are the mean times from the crash to the first and to
	// the last live member declaring the crashed member dead (trials in
	// which every live member did, within 40 periods).
	First, Full time.Duration
	// FirstSuspicion is the mean time from the crash to the first live
	// member suspecting the crashed one on its own failed probe (not on a
	// suspicion heard), over the same trials: the part of First that the
	// probing order decides, before the suspicion timeout. FirstP90 is the
	// 90th percentile of the first declaration (nearest rank).
	FirstSuspicion, FirstP90 time.Duration
	// Undeclared counts trials in which some live member had not declared
	// the crash by the end.
	Undeclared int
	// MsgsPerSecond is the mean number of messages a live member sent per
	// second in the 40 periods after the crash.
	MsgsPerSecond float64
}

// KillOne runs trials groups of n members (start instants spread over a
// period, as in a real deployment), crashes one random member at a random
// instant of the 21st period, and measures how long the group takes to
// declare it dead: first declaration and full dissemination, as
// bench/memberlist's kill scenario reports them for real UDP members.
//
// With silent, the crash is CrashSilent (a host down, cut off or hung:
// stream pings get no answer), else Crash (a process that died on a live
// host: stream pings are refused). The difference shows only with
// swim.Config.StreamProbe.
func KillOne(n, trials int, seed uint64, mc swim.Config, silent bool) (KillResult, error) {
	if n < 2 || trials < 1 {
		return KillResult{}, fmt.Errorf("sim: kill needs n >= 2 and trials >= 1")
	}
	T := periodOf(mc)
	res := KillResult{N: n}
	var first, full, susp time.Duration
	var firsts []time.Duration
	var sent int64
	for trial := 0; trial < trials; trial++ {
		s, victim, crashAt, err := killTrial(n, trial, seed, mc)
		if err != nil {
			return res, err
		}
		w := watchCrash(s, victim, crashAt)
		s.RunUntil(crashAt - 1)
		var before int64
		for i := 0; i < n; i++ {
			if i != victim {
				before += s.Stats(i).SentMsgs
			}
		}
		s.At(crashAt, func() { s.crash(victim, silent) })
		s.RunUntil(crashAt + 40*T)
		for i := 0; i < n; i++ {
			if i != victim {
				sent += s.Stats(i).SentMsgs
			}
		}
		sent -= before
		res.Crashes++
		f, l, fs := w.first, w.full, w.fs
		if l < 0 {
			res.Undeclared++
			continue
		}
		first += f - crashAt
		full += l - crashAt
		firsts = append(firsts, f-crashAt)
		if fs < 0 || fs > f {
			fs = f // declared on a heard suspicion only: no earlier own one
		}
		susp += fs - crashAt
	}
	if d := res.Crashes - res.Undeclared; d > 0 {
		res.First = first / time.Duration(d)
		res.Full = full / time.Duration(d)
		res.FirstSuspicion = susp / time.Duration(d)
		slices.Sort(firsts)
		res.FirstP90 = firsts[(9*d+9)/10-1]
	}
	res.MsgsPerSecond = float64(sent) / float64(trials*(n-1)) / (40 * T).Seconds()
	return res, nil
}

// killTrial builds KillOne's group number trial: n members started over a
// period, 20 periods before the fault; it returns the group, the member
// the fault strikes and the fault's instant (a random point of the 21st
// period).
func killTrial(n, trial int, seed uint64, mc swim.Config) (*Sim, int, time.Duration, error) {
	T := periodOf(mc)
	s, err := New(Config{N: n, Seed: seed + uint64(trial)*7919, Member: mc, StartSpread: T})
	if err != nil {
		return nil, 0, 0, err
	}
	rng := rand.New(rand.NewPCG(seed, uint64(trial)))
	victim := rng.IntN(n)
	return s, victim, 20*T + time.Duration(rng.Int64N(int64(T))), nil
}
