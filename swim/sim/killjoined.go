package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// KillJoinedResult reports KillJoined: per crash, from the crash to the
// first live member's own suspicion, to the first declaration and to the
// last live member's declaration (full dissemination), sorted.
type KillJoinedResult struct {
	N                     int
	FirstSuspicion, First []time.Duration
	Full                  []time.Duration
	// Spread is, per crash, full dissemination less first declaration
	// (in crash order, not sorted).
	Spread []time.Duration
	// Undeclared counts crashes some live member had not declared 40
	// periods after.
	Undeclared int
}

// KillJoined runs trials groups of n members formed as bench/memberlist
// forms them: members 1…n−1 join through member 0, 3 ms apart, each
// starting at a random point of a period; 2 s after every member sees all
// n and at a random point of the next period, one random member other
// than the seed crashes silently (CrashSilent: stream pings accepted and
// never answered, mc.StreamProbe decides whether there are any). Unlike
// KillOne's groups (bootstrapped, 20 periods old), these are young: most
// members have no round-trip sample of most others, as in the bench's
// kill rows.
func KillJoined(n, trials int, seed uint64, mc swim.Config) (KillJoinedResult, error) {
	if n < 3 || trials < 1 {
		return KillJoinedResult{}, fmt.Errorf("sim: KillJoined needs n >= 3 and trials >= 1")
	}
	res := KillJoinedResult{N: n}
	T := periodOf(mc)
	for trial := range trials {
		fs, f, l, err := killJoinedOnce(n, seed+uint64(trial)*7919, T, mc)
		if err != nil {
			return res, err
		}
		if l < 0 {
			res.Undeclared++
			continue
		}
		res.FirstSuspicion = append(res.FirstSuspicion, fs)
		res.First = append(res.First, f)
		res.Full = append(res.Full, l)
		res.Spread = append(res.Spread, l-f)
	}
	slices.Sort(res.FirstSuspicion)
	slices.Sort(res.First)
	slices.Sort(res.Full)
	return res, nil
}

// killJoinedOnce is one trial of KillJoined: the crash's first own
// suspicion, first declaration and full dissemination (−1: none).
func killJoinedOnce(n int, seed uint64, T time.Duration, mc swim.Config) (fs, first, full time.Duration, err error) {
	s, err := New(Config{N: n, Seed: seed, NoBootstrap: true, StartSpread: T, Member: mc})
	if err != nil {
		return 0, 0, 0, err
	}
	const gap = 3 * time.Millisecond
	for i := 1; i < n; i++ {
		s.At(T+time.Duration(i)*gap, func() { err = s.Join(i, 0) })
	}
	formed := T + time.Duration(n-1)*gap
	for ; formed <= 60*T; formed += 10 * time.Millisecond {
		s.RunUntil(formed)
		if err != nil {
			return 0, 0, 0, err
		}
		all := true
		for i := 0; i < n && all; i++ {
			all = s.Member(i).NumAlive() == n
		}
		if all {
			break
		}
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	crashAt := formed + 2*time.Second + time.Duration(rng.Int64N(int64(T)))
	victim := 1 + rng.IntN(n-1)
	w := watchCrash(s, victim, crashAt)
	s.RunUntil(crashAt - 1)
	s.At(crashAt, func() { s.CrashSilent(victim) })
	s.RunUntil(crashAt + 40*T)
	since := func(at time.Duration) time.Duration {
		if at < 0 {
			return -1
		}
		return at - crashAt
	}
	return since(w.fs), since(w.first), since(w.full), nil
}

// crashWatch holds the instants, after a crash, of the first live member's
// own suspicion of the crashed member (fs), of the first declaration and
// of the last live member's (full); −1 until then.
type crashWatch struct {
	fs, first, full time.Duration
}

// watchCrash installs s's event hook to fill a crashWatch for member
// victim crashing at at.
func watchCrash(s *Sim, victim int, at time.Duration) *crashWatch {
	w := &crashWatch{fs: -1, first: -1, full: -1}
	dead := make([]bool, s.N())
	nd := 0
	s.SetEventHook(func(now time.Duration, obs int, ev swim.Event) {
		if now < at || s.Index(ev.Node.ID) != victim {
			return
		}
		if ev.Kind == swim.EventSuspect && w.fs < 0 && s.Index(ev.From) == obs {
			w.fs = now
		}
		if ev.Kind != swim.EventDead || dead[obs] {
			return
		}
		dead[obs] = true
		if nd++; nd == 1 {
			w.first = now
		}
		if nd == s.N()-1 {
			w.full = now
		}
	})
	return w
}
