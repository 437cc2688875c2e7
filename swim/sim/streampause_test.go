package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
)

// A stream ping to a paused member is not refused: the target's kernel
// accepts the connection and holds the ping until the process runs again,
// which answers it then, or the prober gives up at the ping's deadline
// (swim.StreamProbe.Deadline); likewise across a partition the connection
// is never set up and the ping fails at its deadline. Only a crashed
// process (nothing listens: reset at once) or an unknown address fails at
// once. The simulator failed the ping at once for a paused or partitioned
// target, which a member takes as proof that nothing listens there (the
// detector gate then retries a first failure at once rather than at the
// end of the period: swim's pathsDone).
//
// Member 3's datagrams are all lost (a UDP firewall, TCP open) and it
// pauses for 150 ms every 1.3 s: a stream ping that comes during a pause is
// answered when it ends, well before the period does, and the member is
// reached over the stream every time: the simulator holds those pings
// rather than failing them at once (which suspected member 3 14 times in
// the run).
func TestSimStreamPingHeldByPausedMember(t *testing.T) {
	const victim = 3
	blocked := false
	s, err := New(Config{
		N: 6, Seed: 4, StartSpread: time.Second,
		Member:     swim.Config{Mode: swim.ModeDetector, StreamProbe: true},
		UDPBlocked: func(from, to int) bool { return blocked && to == victim },
	})
	require.NoError(t, err)
	suspected, dead := 0, 0
	s.SetEventHook(func(_ time.Duration, obs int, ev swim.Event) {
		if ev.Node.ID != s.Node(victim).ID || obs == victim {
			return
		}
		switch ev.Kind {
		case swim.EventSuspect:
			suspected++
		case swim.EventDead:
			dead++
		}
	})
	s.At(10*time.Second, func() { blocked = true })
	for at := 11 * time.Second; at < 70*time.Second; at += 1300 * time.Millisecond {
		s.At(at, func() { s.Pause(victim, 150*time.Millisecond) })
	}
	s.RunUntil(75 * time.Second)
	only := 0
	for i := range s.N() {
		only += s.Member(i).Stats().StreamOnly
	}
	assert.Positive(t, only, "reached over the stream")
	assert.Zero(t, suspected, "suspicions of the member whose stream pings were held by its pauses")
	assert.Zero(t, dead, "declarations")
}

// Across a partition a stream ping fails at its deadline, not at once (the
// connection is never set up); to a crashed member at once (reset), and a
// ping answered after its deadline is a failure at the deadline.
func TestSimStreamPingFailureTimes(t *testing.T) {
	s, err := New(Config{N: 4, Seed: 2, Member: swim.Config{Mode: swim.ModeDetector, StreamProbe: true}})
	require.NoError(t, err)
	s.RunUntil(5 * time.Second)
	type outcome struct {
		at time.Duration
		ok bool
	}
	got := map[uint32]outcome{}
	s.streamHook = func(now time.Duration, sp swim.StreamProbe, ok bool) {
		if sp.Seq >= 1<<30 {
			got[sp.Seq] = outcome{now, ok}
		}
	}
	at := s.Now()
	require.NoError(t, s.Partition([]int{0, 0, 1, 1}))
	s.streamProbe(0, swim.StreamProbe{To: s.Node(3), Seq: 1 << 30, Deadline: at + 700*time.Millisecond})
	s.Heal()
	s.Crash(2)
	s.streamProbe(0, swim.StreamProbe{To: s.Node(2), Seq: 1<<30 + 1, Deadline: at + 700*time.Millisecond})
	s.streamProbe(0, swim.StreamProbe{To: s.Node(1), Seq: 1<<30 + 2, Deadline: at}) // answered too late
	s.streamProbe(0, swim.StreamProbe{To: s.Node(1), Seq: 1<<30 + 3, Deadline: at + time.Second})
	s.RunUntil(at + 2*time.Second)
	assert.Equal(t, outcome{at + 700*time.Millisecond, false}, got[1<<30], "partition: at the deadline")
	assert.False(t, got[1<<30+1].ok, "crashed")
	assert.Less(t, got[1<<30+1].at, at+700*time.Millisecond, "crashed: before the deadline (reset)")
	assert.Equal(t, outcome{at, false}, got[1<<30+2], "an answer after the deadline: failed at the deadline")
	assert.True(t, got[1<<30+3].ok, "answered")
	assert.Less(t, got[1<<30+3].at, at+time.Second)
}
