package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// pauseCrashTrial is one trial of the pause-length experiment: KillOne's
// group number trial (killTrial: the same members, victim and instant)
// run once with the victim crashed silently and once per pause length with
// the victim paused. Until a pause ends the two runs are one run: a paused
// member and a silently crashed one send nothing, and a stream ping to
// either is accepted and held (Sim.streamArrive).
type pauseCrashTrial struct {
	// Crash, from the crash: the first live member's own suspicion, the
	// first declaration, the declaration by most live members (more than
	// half) and by all of them; -1 when not reached within 40 periods.
	fs, first, most, full time.Duration
	// msgs is the messages a live member sent per second, on average, in
	// the 40 periods after the crash.
	msgs float64
	// Per pause length: how many members declared the paused member
	// dead, the first declaration from the pause's start (-1 if none),
	// how many of the declarations came after the pause had ended, and
	// how many of those more than 10 ms after (a refutation can reach no
	// one sooner than a link's delay, 0.5–1.5 ms, after the pause; these
	// are declarations it failed to prevent).
	declarers   []int
	pauseFirst  []time.Duration
	after, late []int
}

// watchDeclarations installs a hook on s recording, for every member
// other than victim, the first instant at or after from at which it
// declared victim dead (-1: never), and in *fs the first instant at or
// after from at which a member suspected victim on its own failed probe.
func watchDeclarations(s *Sim, victim int, from time.Duration, fs *time.Duration) []time.Duration {
	at := make([]time.Duration, s.N())
	for i := range at {
		at[i] = -1
	}
	*fs = -1
	s.SetEventHook(func(now time.Duration, obs int, ev swim.Event) {
		if now < from || obs == victim || s.Index(ev.Node.ID) != victim {
			return
		}
		if ev.Kind == swim.EventSuspect && *fs < 0 && s.Index(ev.From) == obs {
			*fs = now
		}
		if ev.Kind == swim.EventDead && at[obs] < 0 {
			at[obs] = now
		}
	})
	return at
}

// kth returns the k-th earliest (k from 1) of the instants of at that are
// set (not negative), less from; -1 when fewer than k are set.
func kth(at []time.Duration, k int, from time.Duration) time.Duration {
	set := slices.DeleteFunc(slices.Clone(at), func(t time.Duration) bool { return t < 0 })
	if len(set) < k {
		return -1
	}
	slices.Sort(set)
	return set[k-1] - from
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// pauseCrashRun runs one trial of n members: the silent crash, then one
// pause per length.
func pauseCrashRun(n int, lengths []time.Duration, trial int, seed uint64, mc swim.Config) (pauseCrashTrial, error) {
	T := periodOf(mc)
	var r pauseCrashTrial
	s, victim, at, err := killTrial(n, trial, seed, mc)
	if err != nil {
		return r, err
	}
	dead := watchDeclarations(s, victim, at, &r.fs)
	s.RunUntil(at - 1)
	sent := func() (k int64) {
		for i := range n {
			if i != victim {
				k += s.Stats(i).SentMsgs
			}
		}
		return k
	}
	before := sent()
	s.At(at, func() { s.CrashSilent(victim) })
	s.RunUntil(at + 40*T)
	r.msgs = float64(sent()-before) / float64(n-1) / (40 * T).Seconds()
	r.first, r.most, r.full = kth(dead, 1, at), kth(dead, (n-1)/2+1, at), kth(dead, n-1, at)
	if r.fs >= 0 {
		r.fs -= at
	}
	for _, d := range lengths {
		s, victim, at, err := killTrial(n, trial, seed, mc)
		if err != nil {
			return r, err
		}
		var fs time.Duration
		dead := watchDeclarations(s, victim, at, &fs)
		s.RunUntil(at - 1)
		s.At(at, func() { s.Pause(victim, d) })
		s.RunUntil(at + d + 10*T)
		k, after, late := 0, 0, 0
		for _, t := range dead {
			if t >= 0 {
				k++
				after += b2i(t >= at+d)
				late += b2i(t > at+d+10*time.Millisecond)
			}
		}
		r.declarers = append(r.declarers, k)
		r.pauseFirst = append(r.pauseFirst, kth(dead, 1, at))
		r.after, r.late = append(r.after, after), append(r.late, late)
	}
	return r, nil
}

// A pause of length L and a silent crash at the same instant are one run
// until L: the pause is declared before it ends exactly when the crash's
// first declaration comes before L, at the same instant, whatever the
// probe order. So no protocol that hears only the network declares fewer
// pauses of length L without declaring fewer crashes by L: P(pause of L
// declared) is the CDF of the crash's first declaration at L, plus the
// declarations made after the pause ended, before its refutation arrived.
// Four trials of 32 members per order with the bench's settings
// (bench/memberlist), 7.5 s pauses, about the median first declaration,
// so that both outcomes occur; docs/experiments.md, “SWIM: pause length
// against crash detection at N = 32 (issue 27)”, has 400 trials per
// configuration and seven lengths.
func TestPauseIsACrashUntilItEnds(t *testing.T) {
	const n, L = 32, 7500 * time.Millisecond
	for _, shuffled := range []bool{false, true} {
		mc := swim.Config{Mode: swim.ModeDetector, ProbeInterval: time.Second, ProbeTimeout: 500 * time.Millisecond,
			StreamProbe: true, ShuffledProbes: shuffled}
		var declared, not int
		for trial := range 4 {
			r, err := pauseCrashRun(n, []time.Duration{L}, trial, 117000042, mc)
			require.NoError(t, err)
			require.Positive(t, r.full, "shuffled %v, trial %d: the crash is declared by all", shuffled, trial)
			if r.first < L {
				declared++
				assert.Equal(t, r.first, r.pauseFirst[0], "shuffled %v, trial %d: the pause is declared when the crash is", shuffled, trial)
			} else {
				not++
				assert.True(t, r.pauseFirst[0] < 0 || r.pauseFirst[0] >= L, "shuffled %v, trial %d: a pause declared before it ended at %v, the crash at %v",
					shuffled, trial, r.pauseFirst[0], r.first)
			}
		}
		assert.Positive(t, declared, "shuffled %v: some crashes declared before %v", shuffled, L)
		assert.Positive(t, not, "shuffled %v: some crashes declared after %v", shuffled, L)
	}
}
