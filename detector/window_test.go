package detector_test

import (
	"math"
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
	for range 10 { // past a rebase, so the sums carry history
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
