package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// silentSeed is a TCP listener on 127.0.0.1 that accepts every stream
// and never writes on it, reading until the dialler closes it: a seed
// that takes joins' streams and never answers (a slowSeed that writes
// nothing). It records the streams open at once (now and at most), how
// many it accepted, and how long each closed one lived.
type silentSeed struct{ *slowSeed }

func newSilentSeed(t *testing.T) *silentSeed {
	t.Helper()
	return &silentSeed{newSlowSeed(t, 0, false)}
}

func (s *silentSeed) snapshot() (open, most, accepted, closed int, longest time.Duration, firstAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open, s.most, s.accepted, s.closedByDialler, s.longest, s.firstAt
}

// F4 (issue 27): a seed that accepts the streams of a member's joins and
// never answers them. The member x joins through it and keeps resending
// the join, over a new stream every ProbeInterval (100 ms); x's inbound
// datagrams are all dropped, so its join to a real member b, two seconds
// later, succeeds only over a stream. The silent seed must never hold
// more than one of x's streams at once (takeJoinSlot; streamOutPerAddr,
// 4, from ce507a1 to user43 F1), each must be closed by x within
// answerIdle (1 s here) of the join and a second of slack, counted
// (StreamAnswersIdle, StreamJoinsBusy), and
// x's join to b must get its stream. Before, every answer stream was
// read until StreamTimeout (10 s): the seed held all 16 of x's dialling
// slots 1.6 s after its first stream, and the join to b went as a
// datagram that b's challenge never got an answer to.
func TestSilentSeedFreesStreamSlots(t *testing.T) {
	b, x := memberAndCutJoiner(t, Config{Keys: [][]byte{testKey}, Protocol: fast(), LeaveTimeout: new(100 * time.Millisecond)})
	seed := newSilentSeed(t)
	idle := answerIdle(fast().ProbeInterval)
	require.Equal(t, time.Second, idle)

	silentCtx, stopSilent := context.WithTimeout(context.Background(), 8*time.Second)
	defer stopSilent()
	silentDone := make(chan error, 1)
	go func() { silentDone <- x.Join(silentCtx, seed.ln.Addr().String()) }()
	require.Eventually(t, func() bool { _, _, n, _, _, _ := seed.snapshot(); return n > 0 },
		5*time.Second, 10*time.Millisecond, "the join resent over a stream to the silent seed")
	_, _, _, _, _, first := seed.snapshot()
	time.Sleep(2*time.Second - time.Since(first)) // past 16 resends and past answerIdle

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t0 := time.Now()
	err := x.Join(ctx, b.Self().Addr)
	joinTook := time.Since(t0)
	stopSilent()
	<-silentDone
	open, most, accepted, closed, longest, _ := seed.snapshot()
	st := x.Stats()
	t.Logf("silent seed: %d streams accepted, %d closed by x, %d open now, at most %d at once, longest %v; join to b %v (err %v); x: StreamJoins %d, StreamJoinAnswers %d, StreamAnswersIdle %d, StreamsAddrBusy %d, StreamTimeouts %d",
		accepted, closed, open, most, longest, joinTook, err, st.StreamJoins, st.StreamJoinAnswers, st.StreamAnswersIdle, st.StreamsAddrBusy, st.StreamTimeouts)
	require.NoError(t, err, "the join to b over a stream, past the silent seed")
	assert.Positive(t, st.StreamJoinAnswers, "b answered on the join's stream")
	assert.Equal(t, 1, most, "streams to the silent seed at once")
	assert.Positive(t, closed, "x closed its streams to the silent seed")
	assert.Less(t, longest, idle+time.Second, "a silent answer stream held for the idle limit, not StreamTimeout")
	assert.Positive(t, st.StreamAnswersIdle)
	assert.Positive(t, st.StreamJoinsBusy)
	assert.Zero(t, st.StreamsAddrBusy, "joins' streams are apart from the protocol's")
	assert.Zero(t, st.StreamTimeouts, "silent answers are not counted as timeouts")
}
