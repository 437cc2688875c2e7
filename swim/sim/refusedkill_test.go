package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// TestRefusedCrashNotRetried: when a member's process dies on a live host
// (its stream port refuses, the sim's crash that is not silent), the
// detector gate does not retry the failed probes of it: a refused stream
// ping is evidence of death, and the retry's ping, ping-reqs, relayed
// pings, nacks and stream ping would only show it again. Every member
// still declares it. The same crash made silent (a hung process: its
// stream pings wait unanswered) is retried, so the gate is active in these
// groups. Before the change, a group of 8 deferred about 2.5 first
// failures per refused crash (bench/memberlist -procs, GateDeferrals).
func TestRefusedCrashNotRetried(t *testing.T) {
	const n, trials = 8, 10
	deferrals := func(s *Sim, victim int) int {
		d := 0
		for i := 0; i < n; i++ {
			if i != victim {
				d += s.Member(i).Stats().GateDeferrals
			}
		}
		return d
	}
	var refused, silent int
	for trial := 0; trial < trials; trial++ {
		for _, hung := range []bool{false, true} {
			s, err := New(Config{N: n, Seed: 105000007 + uint64(trial), StartSpread: time.Second,
				Member: swim.Config{Mode: swim.ModeDetector, StreamProbe: true}})
			require.NoError(t, err)
			victim := trial % n
			crashAt := 20*time.Second + time.Duration(trial)*97*time.Millisecond
			s.RunUntil(crashAt)
			before := deferrals(s, victim)
			s.crash(victim, hung)
			s.RunUntil(crashAt + 20*time.Second)
			if hung {
				silent += deferrals(s, victim) - before
			} else {
				refused += deferrals(s, victim) - before
			}
			for i := 0; i < n; i++ {
				if i != victim {
					assert.Equal(t, swim.StateDead, s.Member(i).State(s.Node(victim).ID), "trial %d hung %v: member %d", trial, hung, i)
				}
			}
		}
	}
	t.Logf("gate deferrals over %d crashes: refused %d, silent %d", trials, refused, silent)
	assert.Zero(t, refused, "a refused stream ping is not retried")
	assert.Positive(t, silent, "the gate retries silent crashes")
}
