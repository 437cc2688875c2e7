package detector

import (
	"errors"
	"math"
	"slices"
	"time"
)

// Window is a sliding window of the most recent Size() duration samples
// (inter-arrival times, Chen's arrival offsets A_j − Δ·s_j, ...) with O(1)
// updates of their mean and variance. It is the one statistics type shared by
// the adaptive detectors.
//
// Numerics. Samples are kept as int64 nanoseconds. Running sums are taken of
// x − shift, where shift is an integer near the window mean: the first-order
// sum is an exact int64 and the sum of squares is a float64 of small numbers,
// so nanosecond timestamps near 5e16 (beyond 2^53) lose nothing. Every Size()
// additions the sums are recomputed exactly from the buffer around a new
// shift (amortised O(1)), so rounding error cannot accumulate over millions
// of samples and the variance cannot drift negative (it is also clamped at 0).
//
// Samples farther than MaxInt64/(2·Size()) ns from the window mean (107 days
// for a window of 1000) enter the statistics clamped to that distance.
//
// A Window is not safe for concurrent use. The zero value is not usable; call
// NewWindow.
type Window struct {
	buf         []time.Duration
	start       int // index of the oldest sample
	n           int // samples held
	shift       time.Duration
	sum         int64   // Σ (x − shift), exact
	sumsq       float64 // Σ (x − shift)², ns²
	sinceRebase int
	maxDev      int64 // |x − shift| is clamped to this so the int64 sum cannot overflow
}

// MaxWindowSize bounds a window's size: 2^20 samples (8 MiB of
// durations), far above the windows of the literature (Akka, Cassandra and
// Chen et al. use 1000), so that a mistyped size (window=10000000000 in a
// spec or flag) is an error rather than an allocation that kills the
// process.
const MaxWindowSize = 1 << 20

// ErrWindowSize is returned by NewWindow for a size below 1 or above
// MaxWindowSize.
var ErrWindowSize = errors.New("detector: window size must be between 1 and 1048576 (MaxWindowSize)")

// NewWindow returns an empty window holding at most size samples, or
// ErrWindowSize for a size outside [1, MaxWindowSize].
func NewWindow(size int) (*Window, error) {
	if size < 1 || size > MaxWindowSize {
		return nil, ErrWindowSize
	}
	return &Window{buf: make([]time.Duration, size), maxDev: math.MaxInt64 / int64(2*size)}, nil
}

// Size returns the capacity n of the window.
func (w *Window) Size() int { return len(w.buf) }

// Len returns the number of samples held, n' ≤ n.
func (w *Window) Len() int { return w.n }

// Full reports whether the window holds Size() samples.
func (w *Window) Full() bool { return w.n == len(w.buf) }

// Reset empties the window, keeping its size.
func (w *Window) Reset() {
	w.start, w.n, w.shift, w.sum, w.sumsq, w.sinceRebase = 0, 0, 0, 0, 0, 0
}

// Clone returns an independent copy of w: the same samples and the same
// running sums, so that the copy and w give bit-identical statistics after
// the same additions (refilling a new window with the samples would not:
// the sums carry the rounding of their history).
func (w *Window) Clone() *Window {
	c := *w
	c.buf = slices.Clone(w.buf)
	return &c
}

// At returns the i-th sample held, 0 being the oldest and Len()-1 the newest.
// It panics if i is out of range, like a slice index.
func (w *Window) At(i int) time.Duration {
	if i < 0 || i >= w.n {
		panic("detector: Window.At index out of range")
	}
	j := w.start + i
	if j >= len(w.buf) {
		j -= len(w.buf)
	}
	return w.buf[j]
}

// Add appends x, evicting the oldest sample when the window is full. It
// returns the evicted sample and whether one was evicted.
func (w *Window) Add(x time.Duration) (evicted time.Duration, didEvict bool) {
	if w.n == 0 {
		w.shift = x
	}
	if w.n == len(w.buf) {
		evicted, didEvict = w.buf[w.start], true
		w.buf[w.start] = x
		if w.start++; w.start == len(w.buf) {
			w.start = 0
		}
		d := w.dev(evicted)
		w.sum -= d
		w.sumsq -= float64(d) * float64(d)
	} else {
		w.buf[w.n] = x // not full: start is 0 (only a full window evicts)
		w.n++
	}
	d := w.dev(x)
	w.sum += d
	w.sumsq += float64(d) * float64(d)
	w.sinceRebase++
	if w.sinceRebase >= len(w.buf) {
		w.rebase()
	}
	return evicted, didEvict
}

// dev returns x − shift, clamped to ±maxDev (MaxInt64/(2n) ns: about 107
// days for n = 1000) so that the exact int64 sum of n deviations cannot
// overflow. Only samples that far from the window's mean are affected, and
// addition and eviction clamp alike, so the sums stay consistent.
func (w *Window) dev(x time.Duration) int64 {
	d := int64(x) - int64(w.shift)
	if int64(x)^int64(w.shift) < 0 && d^int64(x) < 0 { // x − shift overflowed
		if x > 0 {
			return w.maxDev
		}
		return -w.maxDev
	}
	return min(max(d, -w.maxDev), w.maxDev)
}

// rebase recomputes the sums exactly around a shift equal to the rounded mean.
func (w *Window) rebase() {
	w.shift = w.MeanDuration()
	w.sum, w.sumsq = 0, 0
	for _, x := range w.buf[:w.n] { // the sums do not depend on the order
		d := w.dev(x)
		w.sum += d
		w.sumsq += float64(d) * float64(d)
	}
	w.sinceRebase = 0
}

// Mean returns the mean of the samples in nanoseconds, or 0 when empty.
// For samples beyond 2^53 ns use MeanDuration, which is exact to the
// nanosecond.
func (w *Window) Mean() float64 {
	if w.n == 0 {
		return 0
	}
	return float64(w.shift) + float64(w.sum)/float64(w.n)
}

// MeanDuration returns the mean of the samples rounded to the nearest
// nanosecond (halves away from zero), exact for any int64 samples; 0 when
// empty.
func (w *Window) MeanDuration() time.Duration {
	if w.n == 0 {
		return 0
	}
	n := int64(w.n)
	q, r := w.sum/n, w.sum%n
	if 2*r >= n {
		q++
	} else if -2*r >= n {
		q--
	}
	return w.shift + time.Duration(q)
}

// MeanOffset returns the mean minus base in nanoseconds, computed without
// converting large absolute values to float64: use it when samples are
// absolute timestamps and only their distance to base matters.
func (w *Window) MeanOffset(base time.Duration) float64 {
	if w.n == 0 {
		return 0
	}
	return float64(w.shift-base) + float64(w.sum)/float64(w.n)
}

// Variance returns the population variance (divide by n') in ns², never
// negative; 0 with fewer than two samples.
func (w *Window) Variance() float64 {
	if w.n < 2 {
		return 0
	}
	n := float64(w.n)
	m := float64(w.sum) / n
	v := w.sumsq/n - m*m
	if v < 0 || math.IsNaN(v) {
		return 0
	}
	return v
}

// SampleVariance returns the sample variance (divide by n'−1) in ns²; 0 with
// fewer than two samples.
func (w *Window) SampleVariance() float64 {
	if w.n < 2 {
		return 0
	}
	return w.Variance() * float64(w.n) / float64(w.n-1)
}

// MeanStdDev returns Mean and StdDev together, in nanoseconds, with one
// division instead of two (the φ detectors need both on every heartbeat).
func (w *Window) MeanStdDev() (mean, sd float64) {
	if w.n == 0 {
		return 0, 0
	}
	inv := 1 / float64(w.n)
	m := float64(w.sum) * inv
	mean = float64(w.shift) + m
	if w.n < 2 {
		return mean, 0
	}
	v := w.sumsq*inv - m*m
	if v > 0 {
		sd = math.Sqrt(v)
	}
	return mean, sd
}

// StdDev returns the population standard deviation in nanoseconds.
func (w *Window) StdDev() float64 { return math.Sqrt(w.Variance()) }
