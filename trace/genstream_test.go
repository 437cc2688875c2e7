package trace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Generator yields what a stable sort by arrival of the heartbeats in
// sending order gives, that is, ordered by (Arrival, Seq), while holding
// only the heartbeats still in flight: with delays up to about 1.6 s and
// Δ = 100 ms, a few dozen of 36,000, not the whole stream (about 110 bytes
// a record in fdgen, so an hour at 1 ms would not fit in memory).
func TestGeneratorBoundedInOrder(t *testing.T) {
	cfg := GenConfig{Interval: 100 * time.Millisecond, Duration: time.Hour, Jitter: 10 * time.Millisecond,
		Delay:    Delay{Dist: DelayNormal, Base: 100 * time.Millisecond, Mean: 500 * time.Millisecond, SD: 300 * time.Millisecond},
		Loss:     Loss{Model: LossBernoulli, P: 0.1},
		Pauses:   []Period{{At: 10 * time.Minute, Length: 5 * time.Second}},
		DriftPPM: -20, ReceiverStart: time.Hour}
	g, err := NewGenerator(cfg, NewRand(3))
	require.NoError(t, err)
	var prev Record
	n, most := 0, 0
	for {
		r, ok, err := g.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		if n > 0 {
			require.True(t, prev.Arrival < r.Arrival || (prev.Arrival == r.Arrival && prev.Seq < r.Seq),
				"record %d (seq %d at %v) after seq %d at %v", n, r.Seq, r.Arrival, prev.Seq, prev.Arrival)
		}
		prev = r
		n++
		most = max(most, len(g.pending))
	}
	assert.InDelta(t, 0.9*35950, n, 600, "records: sent less lost")
	assert.LessOrEqual(t, most, 40, "heartbeats held at once")

	all, err := Generate(cfg, NewRand(3))
	require.NoError(t, err)
	assert.Len(t, all, n)
}

// NewMergedGenerator yields exactly Merge of the streams Generate draws in
// turn from one source, which fdgen wrote before it streamed.
func TestMergedGeneratorEqualsMerge(t *testing.T) {
	var cfgs []GenConfig
	for i, d := range []Delay{
		{Dist: DelayPareto, Mean: 300 * time.Millisecond, Alpha: 1.5},
		{Dist: DelayLogNormal, Mean: 50 * time.Millisecond, SD: 80 * time.Millisecond},
		{Dist: DelayConstant, Mean: 20 * time.Millisecond},
	} {
		cfgs = append(cfgs, GenConfig{Sender: string(rune('a' + i)), Interval: 50 * time.Millisecond, Duration: 2 * time.Minute,
			Jitter: 5 * time.Millisecond, Delay: d, Loss: GilbertElliott(0.05, 4)})
	}
	rng := NewRand(11)
	var streams [][]Record
	for _, c := range cfgs {
		recs, err := Generate(c, rng)
		require.NoError(t, err)
		streams = append(streams, recs)
	}
	want := Merge(streams...)
	m, err := NewMergedGenerator(cfgs, 11)
	require.NoError(t, err)
	var got []Record
	for {
		r, ok, err := m.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, r)
	}
	assert.Equal(t, want, got)
}

// A heartbeat whose arrival overflows is an error from Next, after the
// records that were no longer in flight (Generate returns the error alone).
// NewGenerator refuses a stream whose last instants cannot fit with the
// delay's base and mean (TestGenerateOverflow); a draw far above the mean
// (s.d. 10 min, 2 min of room) is found only when drawn.
func TestGeneratorOverflowError(t *testing.T) {
	g, err := NewGenerator(GenConfig{Interval: time.Second, Duration: time.Minute, ReceiverStart: 1<<63 - 1 - 2*time.Minute,
		Delay: Delay{Dist: DelayNormal, SD: 10 * time.Minute}}, NewRand(1))
	require.NoError(t, err)
	var err2 error
	n := 0
	for {
		_, ok, e := g.Next()
		if e != nil || !ok {
			err2 = e
			break
		}
		n++
	}
	require.Error(t, err2)
	assert.Contains(t, err2.Error(), "overflows time.Duration")
	assert.Less(t, n, 60, "the stream stopped at the overflow")
	_, ok, err := g.Next()
	assert.False(t, ok)
	assert.NoError(t, err)
}

// A delay far longer than the interval keeps every heartbeat sent meanwhile
// in flight: the generator stops with ErrTooManyInFlight at its bound
// instead of growing (fdgen --delay-base 3h --interval 1ms held 1.8 GB
// after 2 h of trace). A constant 1 s delay at Δ = 1 ms holds 1,001 (0 to
// 1,000 ms) when the heartbeat sent at 1,001 ms is drawn, before the one
// sent at 0 is released: the bound counts it too.
func TestGeneratorInFlightBound(t *testing.T) {
	cfg := GenConfig{Interval: time.Millisecond, Duration: 3 * time.Second,
		Delay: Delay{Dist: DelayConstant, Base: time.Second}}
	drain := func(next func() (Record, bool, error)) (int, error) {
		n := 0
		for {
			_, ok, err := next()
			if err != nil || !ok {
				return n, err
			}
			n++
		}
	}
	g, err := NewGenerator(cfg, NewRand(1))
	require.NoError(t, err)
	g.SetMaxInFlight(900)
	n, err := drain(g.Next)
	require.ErrorIs(t, err, ErrTooManyInFlight)
	assert.ErrorContains(t, err, `sender "p", heartbeat 900: too many heartbeats in flight: more than 900 sent and not yet arrived at once (delay 1s after a send at 900ms, interval 1ms)`)
	assert.Zero(t, n, "nothing had arrived when the bound was reached")

	g, err = NewGenerator(cfg, NewRand(1))
	require.NoError(t, err)
	g.SetMaxInFlight(1002)
	n, err = drain(g.Next)
	require.NoError(t, err)
	assert.Equal(t, 3000, n)

	// The streams of a MergedGenerator share one bound: two such streams
	// hold about 2,000 together.
	two := []GenConfig{cfg, cfg}
	two[1].Sender = "q"
	m, err := newMergedGenerator(two, 1, 1500)
	if err == nil {
		_, err = drain(m.Next)
	}
	require.ErrorIs(t, err, ErrTooManyInFlight)
	m, err = newMergedGenerator(two, 1, 2004)
	require.NoError(t, err)
	n, err = drain(m.Next)
	require.NoError(t, err)
	assert.Equal(t, 6000, n)
}
