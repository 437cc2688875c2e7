package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// streamRun simulates 16 members for 120 s with every datagram to member
// 5 lost (UDPBlocked) from 10 s on, streams open, and returns the events
// about member 5 and the members' StreamOnly counts.
func streamRun(t *testing.T, mode swim.Mode, stream bool) (dead, streamOnly int, observed []swim.Event) {
	t.Helper()
	const victim = 5
	blocked := false
	s, err := New(Config{
		N: 16, Seed: 3, StartSpread: time.Second,
		Member:     swim.Config{Mode: mode, StreamProbe: stream},
		UDPBlocked: func(_, to int) bool { return blocked && to == victim },
	})
	require.NoError(t, err)
	s.SetEventHook(func(_ time.Duration, obs int, ev swim.Event) {
		if ev.Node.ID == s.Node(victim).ID {
			observed = append(observed, ev)
			if ev.Kind == swim.EventDead {
				dead++
			}
		}
	})
	s.At(10*time.Second, func() { blocked = true })
	s.RunUntil(120 * time.Second)
	for i := range s.N() {
		streamOnly += s.Member(i).Stats().StreamOnly
	}
	return dead, streamOnly, observed
}

// The simulator's “UDP blocked, TCP open” link impairment: with the stream
// fallback probe the member whose datagrams are all lost is never declared
// dead in 110 s and the others warn about it (EventStreamOnly); without it,
// every mode declares it dead. Deterministic (seed 3).
func TestSimUDPBlockedStream(t *testing.T) {
	for _, mode := range []swim.Mode{swim.ModeDetector, swim.ModeLifeguard, swim.ModeSWIM} {
		dead, only, evs := streamRun(t, mode, true)
		warnedLog := 0
		assert.Zero(t, dead, "%v: declared dead with the stream fallback", mode)
		assert.Positive(t, only, "%v", mode)
		warned := 0
		for _, e := range evs {
			if e.Kind == swim.EventStreamOnly {
				warned++
			}
		}
		assert.Positive(t, warned, "%v: no EventStreamOnly", mode)
		// Rate limit: at most one warning per observer per minute, so at
		// most 15 observers × 2 windows in 110 s.
		assert.LessOrEqual(t, warned, 15*2, "%v", mode)
		warnedLog = warned
		onlyLog := only

		dead, only, _ = streamRun(t, mode, false)
		assert.Positive(t, dead, "%v: without the stream fallback the member is declared dead", mode)
		assert.Zero(t, only, "%v", mode)
		t.Logf("%v: with the stream fallback: 0 declarations, %d stream-only probes, %d warnings; without: %d declarations of the member", mode, onlyLog, warnedLog, dead)
	}
}

// The stream fallback does not hide a real failure: a crashed member
// answers no stream ping either and is declared dead by every other member,
// as without the fallback; a partitioned-off one too (streams do not cross
// a partition).
func TestSimStreamDoesNotMaskFailures(t *testing.T) {
	for _, how := range []string{"crash", "partition"} {
		s, err := New(Config{N: 12, Seed: 9, StartSpread: time.Second, Member: swim.Config{StreamProbe: true}})
		require.NoError(t, err)
		const victim = 4
		declared := map[int]bool{}
		s.SetEventHook(func(_ time.Duration, obs int, ev swim.Event) {
			if ev.Node.ID == s.Node(victim).ID && ev.Kind == swim.EventDead {
				declared[obs] = true
			}
		})
		s.At(5*time.Second, func() {
			if how == "crash" {
				s.Crash(victim)
				return
			}
			g := make([]int, s.N())
			g[victim] = 1
			require.NoError(t, s.Partition(g))
		})
		s.RunUntil(60 * time.Second)
		delete(declared, victim)
		assert.Len(t, declared, s.N()-1, "%s: every other member declares it dead", how)
		var probes int
		for i := range s.N() {
			probes += s.Member(i).Stats().StreamProbes
		}
		assert.Positive(t, probes, "%s: stream pings were tried", how)
	}
}

// Datagrams lost both ways for member 3 (from 10 s), and a 2 s pause of it
// at 20 s: its stream pings go unanswered meanwhile and it is suspected.
// Its refutation cannot leave as a datagram; it rides on its next stream
// ack (swim.Member.AnswerStreamPing), so it is not declared dead. The
// same run without that ride (the ack's updates dropped) declares it dead.
func TestSimStreamAckCarriesRefutation(t *testing.T) {
	run := func(carry bool) (dead, refutations int) {
		const victim = 3
		blocked := false
		s, err := New(Config{
			N: 8, Seed: 5, StartSpread: time.Second,
			Member:     swim.Config{Mode: swim.ModeLifeguard, StreamProbe: true},
			UDPBlocked: func(from, to int) bool { return blocked && (to == victim || from == victim) },
		})
		require.NoError(t, err)
		s.noAckUpdates = !carry
		s.SetEventHook(func(_ time.Duration, obs int, ev swim.Event) {
			if ev.Node.ID == s.Node(victim).ID && ev.Kind == swim.EventDead && obs != victim {
				dead++
			}
		})
		s.At(10*time.Second, func() { blocked = true })
		s.At(20*time.Second, func() { s.Pause(victim, 2*time.Second) })
		s.RunUntil(90 * time.Second)
		return dead, s.Member(victim).Stats().Refutations
	}
	dead, ref := run(true)
	assert.Zero(t, dead, "the refutation rode on the stream acks")
	assert.Positive(t, ref)
	dead, _ = run(false)
	assert.Positive(t, dead, "without it the member is declared dead")
	t.Logf("with the refutation on the stream ack: 0 declarations (%d refutations); without: %d of 7 declare it dead", ref, dead)
}
