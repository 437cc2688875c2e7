package detector_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

func TestWindowCommonTrace(t *testing.T) {
	// docs/algorithms.md, “Conventions and the common trace”: intervals 105,
	// 93, 122, 82, 108 ms: μ = 102, population σ = 13.608821, sample s.d.
	// 15.215124.
	w, err := detector.NewWindow(5)
	require.NoError(t, err)
	for _, x := range []float64{105, 93, 122, 82, 108} {
		w.Add(ms(x))
	}
	assert.True(t, w.Full())
	assert.InEpsilon(t, 102e6, w.Mean(), 1e-12)
	assert.Equal(t, ms(102), w.MeanDuration())
	assert.InEpsilon(t, 13.608821e6, w.StdDev(), 1e-7)
	assert.InEpsilon(t, 15.215124e6, math.Sqrt(w.SampleVariance()), 1e-7)
}

func TestWindowEvictsOldest(t *testing.T) {
	w, _ := detector.NewWindow(3)
	for i := 1; i <= 3; i++ {
		_, ev := w.Add(time.Duration(i))
		assert.False(t, ev)
	}
	old, ev := w.Add(10)
	assert.True(t, ev)
	assert.Equal(t, time.Duration(1), old)
	assert.Equal(t, []time.Duration{2, 3, 10}, []time.Duration{w.At(0), w.At(1), w.At(2)})
	assert.InEpsilon(t, 5.0, w.Mean(), 1e-15)
	assert.InEpsilon(t, (9.0+4+25)/3, w.Variance(), 1e-12)
}

func TestWindowBadSize(t *testing.T) {
	_, err := detector.NewWindow(0)
	assert.ErrorIs(t, err, detector.ErrWindowSize)
	// A mistyped size is an error, not a 80 GB allocation.
	_, err = detector.NewWindow(10_000_000_000)
	assert.ErrorIs(t, err, detector.ErrWindowSize)
	_, err = detector.NewWindow(detector.MaxWindowSize + 1)
	assert.ErrorIs(t, err, detector.ErrWindowSize)
	w, err := detector.NewWindow(detector.MaxWindowSize)
	require.NoError(t, err)
	assert.Equal(t, detector.MaxWindowSize, w.Size())
}

// Timestamps near 5e16 ns are beyond float64's exact integers; the window
// must still give the exact mean and the variance of the small deviations.
func TestWindowLargeTimestampsExact(t *testing.T) {
	w, _ := detector.NewWindow(4)
	base := time.Duration(47816110312853897)
	for _, d := range []time.Duration{1, 2, 3, 6} {
		w.Add(base + d)
	}
	assert.Equal(t, base+3, w.MeanDuration())
	assert.InDelta(t, 0.0, w.MeanOffset(base+3), 1e-12)
	assert.InEpsilon(t, 3.5, w.Variance(), 1e-12) // deviations -2,-1,0,3
}

// Over millions of samples with a large common offset the running sums must
// agree with a direct computation and the variance must stay non-negative.
func TestWindowNoDriftOverMillions(t *testing.T) {
	const size = 1000
	w, _ := detector.NewWindow(size)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3_000_000
	if testing.Short() {
		n = 300_000
	}
	for i := 0; i < n; i++ {
		x := time.Duration(5e16) + time.Duration(rng.NormFloat64()*1e6)
		if i%100_000 == 0 {
			x += time.Hour // a rare huge sample
		}
		w.Add(x)
		if v := w.Variance(); v < 0 || math.IsNaN(v) {
			t.Fatalf("variance %v after %d samples", v, i+1)
		}
	}
	var sum, sumsq float64
	base := w.At(0)
	for i := 0; i < w.Len(); i++ {
		d := float64(w.At(i) - base)
		sum += d
	}
	mean := sum / size
	for i := 0; i < w.Len(); i++ {
		d := float64(w.At(i)-base) - mean
		sumsq += d * d
	}
	assert.InDelta(t, mean, w.MeanOffset(base), 1e-6)
	assert.InEpsilon(t, sumsq/size, w.Variance(), 1e-9)
}

func TestWindowZeroVariance(t *testing.T) {
	w, _ := detector.NewWindow(10)
	for i := 0; i < 25; i++ {
		w.Add(100 * time.Millisecond)
	}
	assert.Equal(t, 0.0, w.Variance())
	assert.Equal(t, 100*time.Millisecond, w.MeanDuration())
}

func BenchmarkWindowAdd(b *testing.B) {
	w, _ := detector.NewWindow(1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w.Add(time.Duration(100_000_000 + i%1000))
		_ = w.StdDev()
	}
}

// Samples at the ends of the Duration range must not overflow the sums.
func TestWindowExtremeSamples(t *testing.T) {
	w, _ := detector.NewWindow(4)
	for _, x := range []time.Duration{math.MinInt64, math.MaxInt64, 0, math.MaxInt64} {
		w.Add(x)
		assert.False(t, math.IsNaN(w.Mean()))
		assert.GreaterOrEqual(t, w.Variance(), 0.0)
	}
	w2, _ := detector.NewWindow(1000)
	year := 365 * 24 * time.Hour
	for i := 0; i < 2000; i++ {
		x := 100 * time.Millisecond
		if i%2 == 0 {
			x = year
		}
		w2.Add(x)
	}
	assert.Greater(t, w2.Mean(), 0.0, "a sum of year-long gaps must not wrap negative")
}

func TestWindowMeanStdDevMatches(t *testing.T) {
	w, _ := detector.NewWindow(7)
	m, sd := w.MeanStdDev()
	assert.Equal(t, [2]float64{0, 0}, [2]float64{m, sd})
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50; i++ {
		w.Add(time.Duration(1e8 + rng.NormFloat64()*1e7))
		m, sd := w.MeanStdDev()
		assert.InEpsilon(t, w.Mean(), m, 1e-15)
		if i > 0 {
			assert.InEpsilon(t, w.StdDev(), sd, 1e-12)
		} else {
			assert.Equal(t, 0.0, sd)
		}
	}
}

func TestWindowCloneIsIndependentAndBitIdentical(t *testing.T) {
	w, err := detector.NewWindow(7)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10 { // past the first eviction
		w.Add(ms(100 + 30*rng.NormFloat64()))
	}
	c := w.Clone()
	c.Add(ms(5000)) // only the copy
	assert.Equal(t, 7, w.Len())
	assert.Equal(t, ms(5000), c.At(c.Len()-1))
	assert.NotEqual(t, w.At(w.Len()-1), c.At(c.Len()-1))

	w2 := w.Clone()
	for range 20 {
		x := ms(100 + 30*rng.NormFloat64())
		w.Add(x)
		w2.Add(x)
		m1, s1 := w.MeanStdDev()
		m2, s2 := w2.MeanStdDev()
		require.Equal(t, math.Float64bits(m1), math.Float64bits(m2))
		require.Equal(t, math.Float64bits(s1), math.Float64bits(s2))
	}
}

// CloneInto copies w into a window of its size, which it returns, and
// gives a new window for one of another size, which it leaves alone: the
// copies are Equal to w, give its statistics bit for bit, and are
// independent of it.
func TestWindowCloneIntoIsClone(t *testing.T) {
	w, err := detector.NewWindow(7)
	require.NoError(t, err)
	same, _ := detector.NewWindow(7)
	other, _ := detector.NewWindow(8)
	for i := range 10 { // past the first eviction, at other ring positions
		w.Add(ms(100 + 10*float64(i)))
		same.Add(ms(3))
		other.Add(ms(4))
	}
	same.Add(ms(3))
	c := w.CloneInto(same)
	assert.Same(t, same, c)
	n := w.CloneInto(other)
	assert.NotSame(t, other, n)
	assert.Equal(t, 8, other.Size())
	assert.Equal(t, ms(4), other.At(7), "other left alone")
	for _, x := range []*detector.Window{c, n} {
		require.True(t, x.Equal(w))
		for i := range 7 {
			assert.Equal(t, ms(130+10*float64(i)), x.At(i))
		}
		x.Add(ms(5000)) // only the copy
		assert.Equal(t, ms(190), w.At(6))
		w2 := w.Clone()
		w2.Add(ms(5000))
		requireSameStats(t, w2, x)
	}
}

// The statistics are a function of the samples held: windows that reach the
// same samples through different histories (other evicted samples, huge
// ones among them, other ring positions) are Equal and give bit-identical
// statistics, and so after the same additions.
func TestWindowStatisticsDependOnContentsOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a, _ := detector.NewWindow(50)
	b, _ := detector.NewWindow(50)
	for i := range 137 {
		a.Add(time.Duration(5e16) + time.Duration(rng.NormFloat64()*1e9))
		if i%7 == 0 {
			b.Add(math.MaxInt64)
		}
		b.Add(ms(100 + 30*rng.NormFloat64()))
	}
	assert.False(t, a.Equal(b))
	for range 50 {
		x := ms(100 + 30*rng.NormFloat64())
		a.Add(x)
		b.Add(x)
	}
	require.True(t, a.Equal(b))
	for range 20 {
		requireSameStats(t, a, b)
		x := ms(100 + 30*rng.NormFloat64())
		a.Add(x)
		b.Add(x)
	}
	c := a.Clone()
	c.Add(1)
	assert.False(t, a.Equal(c))
	d, _ := detector.NewWindow(51)
	assert.False(t, a.Equal(d), "sizes differ")
}

func requireSameStats(t *testing.T, a, b *detector.Window) {
	t.Helper()
	m1, s1 := a.MeanStdDev()
	m2, s2 := b.MeanStdDev()
	require.Equal(t, math.Float64bits(m1), math.Float64bits(m2))
	require.Equal(t, math.Float64bits(s1), math.Float64bits(s2))
	require.Equal(t, a.MeanDuration(), b.MeanDuration())
	require.Equal(t, math.Float64bits(a.Variance()), math.Float64bits(b.Variance()))
	require.Equal(t, math.Float64bits(a.MeanOffset(ms(7))), math.Float64bits(b.MeanOffset(ms(7))))
}

// The mean and variance equal the exact rational ones (math/big) rounded to
// float64, within the one rounding of the numerator and of each division,
// for samples anywhere in the int64 range.
func TestWindowExactAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gens := []func() time.Duration{
		func() time.Duration { return ms(100 + 10*rng.NormFloat64()) },
		func() time.Duration { return time.Duration(47816110312853897 + rng.Int64N(1e6)) },
		func() time.Duration { return time.Duration(rng.Uint64()) }, // both signs, any size
		func() time.Duration { return []time.Duration{math.MinInt64, math.MaxInt64, -1, 0}[rng.IntN(4)] },
	}
	for g, gen := range gens {
		w, _ := detector.NewWindow(1 + rng.IntN(40))
		for range 300 {
			w.Add(gen())
			n := int64(w.Len())
			sum, sumsq := bigSums(w)
			mean := new(big.Rat).SetFrac(sum, big.NewInt(n))
			wantMean, _ := mean.Float64()
			assert.InDelta(t, wantMean, w.Mean(), math.Abs(wantMean)*0x1p-51, "generator %d", g)
			// Nearest, halves away from zero.
			half := new(big.Rat).SetFrac64(1, 2)
			if mean.Sign() < 0 {
				half.Neg(half)
			}
			r := new(big.Rat).Add(mean, half)
			want := new(big.Int).Quo(r.Num(), r.Denom()) // truncates toward zero
			require.Equal(t, want.Int64(), int64(w.MeanDuration()), "generator %d: mean %v", g, mean)
			if n < 2 {
				continue
			}
			num := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(n), sumsq), new(big.Int).Mul(sum, sum))
			wantVar, _ := new(big.Rat).SetFrac(num, big.NewInt(n*n)).Float64()
			assert.InDelta(t, wantVar, w.Variance(), wantVar*0x1p-50, "generator %d", g)
		}
	}
}

// MeanDuration rounds halves away from zero whatever the samples' sign,
// and whatever sample came first.
func TestWindowMeanDurationHalves(t *testing.T) {
	for _, c := range []struct {
		xs   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{-10, -9}, -10},
		{[]time.Duration{-9, -10}, -10},
		{[]time.Duration{10, 11}, 11},
		{[]time.Duration{11, 10}, 11},
		{[]time.Duration{-1, 0}, -1},
		{[]time.Duration{0, 1}, 1},
		{[]time.Duration{-1, 0, 0}, 0},
		{[]time.Duration{math.MinInt64, math.MinInt64 + 1}, math.MinInt64},
		{[]time.Duration{math.MaxInt64, math.MaxInt64 - 1}, math.MaxInt64},
	} {
		w, _ := detector.NewWindow(len(c.xs))
		for _, x := range c.xs {
			w.Add(x)
		}
		assert.Equal(t, c.want, w.MeanDuration(), "%v", c.xs)
	}
}

// Variance rounds the exact n'·Σx² − (Σx)² to float64 once, to nearest
// (then divides by n'²), also where it takes more than 64 bits: spreads
// from 2^64 up, as inter-arrival times with a standard deviation of a few
// milliseconds give in a window of 1000.
func TestWindowVarianceNumeratorRoundedOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	bad := 0
	for trial := range 20000 {
		n := 2 + rng.IntN(8)
		w, _ := detector.NewWindow(n)
		sd := []float64{4e6, 3e9, 1e12, 1e16}[trial%4]
		for range n {
			w.Add(time.Duration(1e8 + sd*rng.NormFloat64()))
		}
		sum, sumsq := bigSums(w)
		num := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(int64(n)), sumsq), new(big.Int).Mul(sum, sum))
		f, _ := new(big.Float).SetInt(num).Float64()
		if want := f / float64(n*n); w.Variance() != want {
			bad++
			if bad <= 3 {
				xs := make([]time.Duration, w.Len())
				for i := range xs {
					xs[i] = w.At(i)
				}
				t.Errorf("samples %d: variance %v, want %v (numerator %v)", xs, w.Variance(), want, num)
			}
		}
	}
	assert.Zero(t, bad, "variances not rounded once")
}

// The sums take shortcuts for samples in [0, 2^32) (whose squares fit in
// a word) and for the spread where it fits in two words. The variance
// must stay the exact numerator rounded once, divided by n'², and
// MeanStdDev's one step the same bits as Mean and StdDev, at every
// step of windows that slide between small samples, samples across 2^32,
// negative ones, and {MaxInt64, 0, 0, 0}, whose n'·Σx² needs a third word
// while Σx < 2^64.
func TestWindowShortcutsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	gens := []func() time.Duration{
		func() time.Duration { return time.Duration(1e8 + 1.4e7*rng.NormFloat64()) },
		func() time.Duration { return time.Duration(1<<32 - 1000 + rng.Int64N(2000)) },
		func() time.Duration { return time.Duration(rng.Int64N(1<<33) - 1<<32) },
		func() time.Duration { return []time.Duration{math.MaxInt64, 0, 0, 0, 1 << 31}[rng.IntN(5)] },
	}
	for g, gen := range gens {
		for _, size := range []int{4, 7, 1000} {
			w, _ := detector.NewWindow(size)
			for step := range 3 * size {
				w.Add(gen())
				if w.Len() < 2 || size == 1000 && step%97 != 0 {
					continue
				}
				n := int64(w.Len())
				sum, sumsq := bigSums(w)
				num := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(n), sumsq), new(big.Int).Mul(sum, sum))
				f, _ := new(big.Float).SetInt(num).Float64()
				require.Equal(t, math.Float64bits(f/float64(n*n)), math.Float64bits(w.Variance()), "generator %d, size %d, step %d", g, size, step)
				mean, _ := new(big.Rat).SetFrac(sum, big.NewInt(n)).Float64()
				require.InDelta(t, mean, w.Mean(), math.Abs(mean)*0x1p-51, "generator %d, size %d, step %d", g, size, step)
				m, sd := w.MeanStdDev()
				require.Equal(t, [2]uint64{math.Float64bits(w.Mean()), math.Float64bits(w.StdDev())},
					[2]uint64{math.Float64bits(m), math.Float64bits(sd)}, "generator %d, size %d, step %d", g, size, step)
			}
		}
	}
}

// bigSums returns Σx and Σx² of the samples w holds, exactly.
func bigSums(w *detector.Window) (sum, sumsq *big.Int) {
	sum, sumsq = new(big.Int), new(big.Int)
	for i := range w.Len() {
		x := big.NewInt(int64(w.At(i)))
		sum.Add(sum, x)
		sumsq.Add(sumsq, new(big.Int).Mul(x, x))
	}
	return sum, sumsq
}
