package agent

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stalling seeds listed before an honest one in one Join (issue 27,
// session 23): three seeds that accept the join's stream and send
// nothing, three that write a frame claiming another sender every 40 ms
// (readAnswer drops them), two ports that refuse streams, then a
// real member b, with x's inbound datagrams all dropped, so only b's
// answer on a join's stream can complete the Join. Seeds that have had
// fewer join streams take over the slots of streams open half a
// ProbeInterval or longer (takeJoinSlot, sendSeedJoins), so b, at index
// 8, gets its stream at the ⌊8/4⌋+1 = 3rd resend, about 300 ms after the
// Join. Before, the first four stalling seeds took the 4 slots at every
// resend, and b never got a stream: the Join failed at its deadline (3 s).
func TestStallingSeedsBeforeHonestSeed(t *testing.T) {
	b, x := memberAndCutJoiner(t, Config{Plain: true, Protocol: fast(), LeaveTimeout: new(100 * time.Millisecond)})
	var seeds []*slowSeed
	var addrs []string
	for i := range 6 {
		every := time.Duration(0) // silent
		if i >= 3 {
			every = 40 * time.Millisecond // foreign frames, well inside joinStall
		}
		s := newSlowSeed(t, every, every > 0)
		seeds = append(seeds, s)
		addrs = append(addrs, s.addr.String())
	}
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addrs = append(addrs, l.Addr().String())
		require.NoError(t, l.Close()) // a port where nothing listens: the dial is refused
	}
	addrs = append(addrs, b.Self().Addr)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t0 := time.Now()
	err := x.Join(ctx, addrs...)
	took := time.Since(t0)
	most, accepted := 0, 0
	for _, s := range seeds {
		_, m, a, _ := s.snapshot()
		most = max(most, m)
		accepted += a
	}
	st := x.Stats()
	t.Logf("6 stalling seeds, 2 refusing, then b: join %v (err %v); %d streams accepted by the stalling seeds, at most %d at once to one; x: StreamJoins %d, StreamJoinsBusy %d, StreamJoinsYielded %d, StreamAnswersIdle %d, StreamJoinAnswers %d, StreamDialErrors %d",
		took.Round(time.Millisecond), err, accepted, most, st.StreamJoins, st.StreamJoinsBusy, st.StreamJoinsYielded, st.StreamAnswersIdle, st.StreamJoinAnswers, st.StreamDialErrors)
	require.NoError(t, err, "the join reaches b over a stream past the stalling seeds")
	assert.Less(t, took, answerIdle(fast().ProbeInterval), "b's stream at the 3rd resend (300 ms), before any stalling stream's idle limit")
	assert.Positive(t, st.StreamJoinAnswers, "b answered on the join's stream")
	assert.Positive(t, st.StreamJoinsYielded, "stalled streams gave up their slots")
	assert.Equal(t, 1, most, "one join's stream to a seed at once")
	assert.Zero(t, x.stream.pings.open()+x.stream.views.open(), "joins' streams take none of the other pools' slots")
}

// Four stalling seeds of an earlier Join, still waiting, hold the 4
// joins' slots when x joins b (issue 27, session 23; user43 measured 706–
// 727 ms for this join). The Join to b starts just after the seeds'
// streams were opened again (their idle limit, 1 s, had cut the earlier
// ones), when the slots would have stayed taken for about 1 s more: b
// has had no stream, so its join takes over the slot of a stalled stream
// at the first resend, one ProbeInterval (100 ms) after the Join. Before,
// it waited for the idle limit: about 1 s.
func TestStalledSeedsYieldToNewJoin(t *testing.T) {
	b, x := memberAndCutJoiner(t, Config{Plain: true, Protocol: fast(), LeaveTimeout: new(100 * time.Millisecond)})
	var seeds []*silentSeed
	var addrs []string
	for range 4 {
		s := newSilentSeed(t)
		seeds = append(seeds, s)
		addrs = append(addrs, s.addr.String())
	}
	hctx, hcancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer hcancel()
	hdone := make(chan error, 1)
	go func() { hdone <- x.Join(hctx, addrs...) }()
	// The second streams: opened at the first resend after the first
	// ones' idle limit.
	require.Eventually(t, func() bool {
		for _, s := range seeds {
			if _, _, n, _, _, _ := s.snapshot(); n < 2 {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "the stalling seeds' streams opened again")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t0 := time.Now()
	err := x.Join(ctx, b.Self().Addr)
	took := time.Since(t0)
	hcancel()
	<-hdone
	st := x.Stats()
	t.Logf("4 stalling seeds, then a Join to b: %v (err %v); x: StreamJoinsBusy %d, StreamJoinsYielded %d, StreamAnswersIdle %d", took.Round(time.Millisecond), err, st.StreamJoinsBusy, st.StreamJoinsYielded, st.StreamAnswersIdle)
	require.NoError(t, err)
	assert.Less(t, took, 500*time.Millisecond, "b's join took a slot over at the first resend (100 ms), not after the idle limit (about 1 s)")
	assert.Positive(t, st.StreamJoinsYielded)
	assert.Positive(t, st.StreamJoinAnswers)
}

// The bound of Join's doc over k silent seeds listed before b (not in
// -short: about 5 s): b, at index k, gets its stream at the ⌊k/4⌋+1-th
// resend, about (⌊k/4⌋+1)·ProbeInterval after the Join; allowed 300 ms
// more for a loaded machine. Each k runs on a fresh x and fresh seeds.
func TestStallingSeedsJoinBound(t *testing.T) {
	if testing.Short() {
		t.Skip("a sweep over the number of stalling seeds")
	}
	cfg := Config{Plain: true, Protocol: fast(), LeaveTimeout: new(100 * time.Millisecond)}
	bc := cfg
	bc.Seed = 1
	b := start(t, bc)
	for i, k := range []int{0, 3, 4, 8, 16, 32} {
		xc := cfg
		xc.Seed = uint64(10 + i)
		x, shim := startShimmed(t, xc)
		shim.blocked.Store(1)
		var addrs []string
		for range k {
			addrs = append(addrs, newSilentSeed(t).addr.String())
		}
		addrs = append(addrs, b.Self().Addr)
		bound := time.Duration(k/4+1) * fast().ProbeInterval
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		t0 := time.Now()
		err := x.Join(ctx, addrs...)
		took := time.Since(t0)
		cancel()
		st := x.Stats()
		t.Logf("k = %2d silent seeds before b: join %v, bound %v; StreamJoins %d, StreamJoinsYielded %d", k, took.Round(time.Millisecond), bound, st.StreamJoins, st.StreamJoinsYielded)
		require.NoError(t, err, "k = %d", k)
		assert.Less(t, took, bound+300*time.Millisecond, "k = %d", k)
		require.NoError(t, x.Close())
	}
}
