package trace

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Past exactSamples the accumulator's summary stays within its stated
// bounds of the exact statistics: quantiles within 2^−(histBits+1) of
// their value, mean, s.d. and the clock fit to rounding, min and max
// exact.
func TestAccumulatorBoundedSummary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []Record
	sent := time.Duration(0)
	for i := range 20000 {
		sent += 10*time.Millisecond + time.Duration(rng.NormFloat64()*float64(300*time.Microsecond))
		d := 2*time.Millisecond + time.Duration(rng.ExpFloat64()*float64(time.Millisecond)) + time.Duration(i)*time.Microsecond/100
		recs = append(recs, Record{Sender: "a", Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + d, HasArrival: true})
	}
	want := Summarize(recs)
	small := Accumulator{exact: 1000}
	for _, r := range recs {
		small.Add(r)
	}
	got := small.Stats()
	require.True(t, small.ia.big && small.si.big && small.clock.big, "the series are summarized")
	near := func(w, g time.Duration, rel float64, what string) {
		t.Helper()
		require.InDelta(t, float64(w), float64(g), rel*math.Abs(float64(w))+1, what)
	}
	const q = 1.0 / (1 << (histBits + 1))
	for _, p := range [][2]Dist{{want.InterArrival, got.InterArrival}, {want.SendInterval, got.SendInterval}} {
		w, g := p[0], p[1]
		require.Equal(t, w.N, g.N)
		require.Equal(t, w.Min, g.Min)
		require.Equal(t, w.Max, g.Max)
		near(w.Mean, g.Mean, 1e-9, "mean")
		near(w.SD, g.SD, 1e-6, "sd")
		near(w.P50, g.P50, q, "p50")
		near(w.P90, g.P90, q, "p90")
		near(w.P99, g.P99, q, "p99")
	}
	near(want.ClockOffset, got.ClockOffset, 1e-6, "offset")
	require.InDelta(t, want.DriftPPM, got.DriftPPM, 1e-6*math.Abs(want.DriftPPM))
	near(want.Interval, got.Interval, q, "interval")
	require.Equal(t, want.Lost, got.Lost)
}

// A histogram counts as a map would, in its array or its map, and lists
// the buckets in increasing order of keys, those below and above the
// array's included.
func TestHistogramCountsAsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var h histogram
	h.center(histKey(1e7))
	want := map[int64]int{}
	for range 100000 {
		var v float64
		switch rng.IntN(10) {
		case 0:
			v = -rng.ExpFloat64() * 1e6 // negative keys
		case 1:
			v = rng.ExpFloat64() * 1e9 // far above
		case 2:
			v = rng.Float64() * 1e3 // far below
		default:
			v = 1e7 + rng.NormFloat64()*2e6
		}
		h.add(histKey(v))
		want[histKey(v)]++
	}
	require.NotEmpty(t, h.other)
	got := map[int64]int{}
	var keys []int64
	h.each(func(k int64, c int) {
		got[k] = c
		keys = append(keys, k)
	})
	require.Equal(t, want, got)
	require.True(t, slices.IsSorted(keys))
}

// A series' exact samples grow as append's below 256 samples and double
// from there (append would add about a quarter), never past the limit;
// the limit+1-th sample moves them all to the summary.
func TestSeriesExactGrowth(t *testing.T) {
	var a series
	a.add(1, 4096)
	require.Equal(t, 1, cap(a.exact), "a single sample: as append")
	for len(a.exact) < 513 {
		a.add(2, 4096)
	}
	require.Equal(t, 1024, cap(a.exact), "doubled at 512 samples (append: 832)")
	for len(a.exact) < 1025 {
		a.add(2, 4096)
	}
	require.Equal(t, 2048, cap(a.exact))

	var s series
	for len(s.exact) < 513 {
		s.add(3, 1000)
	}
	require.Equal(t, 1000, cap(s.exact), "no room past the limit")
	for len(s.exact) < 1000 {
		s.add(3, 1000)
	}
	require.False(t, s.big)
	s.add(4, 1000)
	require.True(t, s.big)
	require.Nil(t, s.exact)
	require.Equal(t, 1001, s.n)
	require.Equal(t, 4.0, s.hi)

	var f fit
	for i := range 1001 {
		f.add(float64(i), 2*float64(i), 1000)
	}
	require.True(t, f.big)
	require.Equal(t, 1001, f.len())
	require.Equal(t, 500.0, f.mx)
}
