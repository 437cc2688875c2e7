package detector

import (
	"errors"
	"math"
	"math/bits"
	"slices"
	"time"
)

// Window is a sliding window of the most recent Size() duration samples
// (inter-arrival times, Chen's arrival offsets A_j − Δ·s_j, ...) with O(1)
// updates of their mean and variance. It is the one statistics type shared by
// the adaptive detectors.
//
// Numerics. Samples are kept as int64 nanoseconds, and the window keeps the
// exact sum Σx (a 128-bit integer) and the exact sum of squares Σx² (a
// 192-bit integer) of the samples it holds, for any int64 samples and up to
// MaxWindowSize of them. The mean is computed from the exact quotient and
// remainder of Σx/n'; the variance
// is computed from the exact integer n'·Σx² − (Σx)² (which does not depend
// on any offset common to the samples, so nanosecond timestamps near 5e16,
// beyond 2^53, lose nothing) and rounded to float64 once before the division
// by n'². Every statistic is therefore a function of the samples held only:
// two windows holding the same samples give bit-identical statistics, whatever
// samples they held before, and no rounding error accumulates over millions
// of samples.
//
// A Window is not safe for concurrent use. The zero value is not usable; call
// NewWindow.
type Window struct {
	buf   []time.Duration
	start int // index of the oldest sample
	n     int // samples held
	sum   int128
	sumsq uint192
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
	return &Window{buf: make([]time.Duration, size)}, nil
}

// Size returns the capacity n of the window.
func (w *Window) Size() int { return len(w.buf) }

// Len returns the number of samples held, n' ≤ n.
func (w *Window) Len() int { return w.n }

// Full reports whether the window holds Size() samples.
func (w *Window) Full() bool { return w.n == len(w.buf) }

// Reset empties the window, keeping its size.
func (w *Window) Reset() {
	w.start, w.n, w.sum, w.sumsq = 0, 0, int128{}, uint192{}
}

// Clone returns an independent copy of w: the same size and samples.
func (w *Window) Clone() *Window {
	c := *w
	c.buf = slices.Clone(w.buf)
	return &c
}

// CloneInto makes dst an independent copy of w (the same size and
// samples, as Clone gives) and returns it, reusing dst's buffer when dst
// has w's size; with dst nil or of another size it returns Clone() and
// leaves dst alone. dst's former samples are lost.
func (w *Window) CloneInto(dst *Window) *Window {
	if dst == nil || len(dst.buf) != len(w.buf) {
		return w.Clone()
	}
	buf := dst.buf
	*dst = *w
	dst.buf = buf
	copy(buf, w.buf)
	return dst
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

// Equal reports whether w and o have the same size and hold the same
// samples in the same order: they then give the same statistics, and the
// same after the same additions.
func (w *Window) Equal(o *Window) bool {
	if len(w.buf) != len(o.buf) || w.n != o.n || w.sum != o.sum || w.sumsq != o.sumsq {
		return false
	}
	a1, a2 := w.held()
	b1, b2 := o.held()
	for len(a1) > 0 { // compare the two rings in runs
		if len(b1) == 0 {
			b1, b2 = b2, nil
		}
		k := min(len(a1), len(b1))
		if !slices.Equal(a1[:k], b1[:k]) {
			return false
		}
		a1, b1 = a1[k:], b1[k:]
		if len(a1) == 0 {
			a1, a2 = a2, nil
		}
	}
	return true
}

// held returns the samples held, oldest first, as two runs of the ring.
func (w *Window) held() (older, newer []time.Duration) {
	if end := w.start + w.n; end <= len(w.buf) {
		return w.buf[w.start:end], nil
	}
	return w.buf[w.start:], w.buf[:w.start+w.n-len(w.buf)]
}

// Add appends x, evicting the oldest sample when the window is full. It
// returns the evicted sample and whether one was evicted.
func (w *Window) Add(x time.Duration) (evicted time.Duration, didEvict bool) {
	if w.n == len(w.buf) {
		evicted, didEvict = w.buf[w.start], true
		w.buf[w.start] = x
		if w.start++; w.start == len(w.buf) {
			w.start = 0
		}
		if uint64(evicted)|uint64(x) < 1<<32 {
			// Both below 2^32 (inter-arrival times up to 4.29 s): Σx
			// changes by x − evicted, Σx² by x² − evicted² (the
			// difference of two words sign-extended to three).
			w.sum.add(int64(x) - int64(evicted))
			d, b := bits.Sub64(uint64(x)*uint64(x), uint64(evicted)*uint64(evicted), 0)
			var c uint64
			w.sumsq[0], c = bits.Add64(w.sumsq[0], d, 0)
			w.sumsq[1], c = bits.Add64(w.sumsq[1], -b, c)
			w.sumsq[2] += -b + c
			return evicted, didEvict
		}
		if uint64(evicted) < 1<<32 {
			w.sum.subSmall(uint64(evicted))
			w.sumsq.subSmall(uint64(evicted) * uint64(evicted))
		} else {
			w.sum.sub(int64(evicted))
			w.sumsq.subSquare(int64(evicted))
		}
	} else {
		w.buf[w.n] = x // not full: start is 0 (only a full window evicts)
		w.n++
	}
	if uint64(x) < 1<<32 { // inter-arrival times up to 4.29 s: x² < 2^64
		w.sum.addSmall(uint64(x))
		w.sumsq.addSmall(uint64(x) * uint64(x))
	} else {
		w.sum.add(int64(x))
		w.sumsq.addSquare(int64(x))
	}
	return evicted, didEvict
}

// meanParts returns the mean Σx/n' as q + r/n', q = ⌊Σx/n'⌋ and 0 ≤ r <
// n' (n' > 0).
func (w *Window) meanParts() (q int64, r uint64) {
	n := uint64(w.n)
	neg := w.sum.negative()
	mag := w.sum.abs() // |Σx| ≤ n'·2^63, so its high word is below n'
	qm, rm := bits.Div64(mag.hi, mag.lo, n)
	if !neg {
		return int64(qm), rm
	}
	if rm == 0 {
		return -int64(qm), 0
	}
	return -int64(qm) - 1, n - rm
}

// Mean returns the mean of the samples in nanoseconds, or 0 when empty.
// For samples beyond 2^53 ns use MeanDuration, which is exact to the
// nanosecond.
func (w *Window) Mean() float64 {
	if w.n == 0 {
		return 0
	}
	if s := int64(w.sum.lo); w.sum.hi == uint64(s>>63) && -1<<53 <= s && s <= 1<<53 {
		return float64(s) / float64(w.n) // both exact: one rounding
	}
	q, r := w.meanParts()
	return float64(q) + float64(r)/float64(w.n)
}

// MeanDuration returns the mean of the samples rounded to the nearest
// nanosecond (halves away from zero), exact for any int64 samples; 0 when
// empty.
func (w *Window) MeanDuration() time.Duration {
	if w.n == 0 {
		return 0
	}
	q, r := w.meanParts()
	if 2*r > uint64(w.n) || 2*r == uint64(w.n) && q >= 0 {
		q++ // q + r/n' < MaxInt64 when r > 0
	}
	return time.Duration(q)
}

// MeanOffset returns the mean minus base in nanoseconds, computed without
// converting large absolute values to float64: use it when samples are
// absolute timestamps and only their distance to base matters.
func (w *Window) MeanOffset(base time.Duration) float64 {
	if w.n == 0 {
		return 0
	}
	q, r := w.meanParts()
	return float64(q-int64(base)) + float64(r)/float64(w.n)
}

// Variance returns the population variance (divide by n') in ns², never
// negative; 0 with fewer than two samples. It is (n'·Σx² − (Σx)²)/n'²,
// the numerator exact and rounded to float64 once.
func (w *Window) Variance() float64 {
	if w.n < 2 {
		return 0
	}
	n := float64(w.n)
	return w.spread() / (n * n)
}

// spread returns n'·Σx² − (Σx)² = Σ_{i<j} (x_i − x_j)², an exact
// non-negative integer below 2^167, converted to float64.
func (w *Window) spread() float64 {
	n := uint64(w.n)
	if w.sum.hi == 0 && w.sumsq[2] == 0 {
		// 0 ≤ Σx < 2^64 and Σx² < 2^128 (windows of samples below 2^32,
		// as inter-arrival times are): the same integer in two words
		// when n'·Σx² < 2^128.
		h1, l1 := bits.Mul64(w.sumsq[1], n)
		h0, l0 := bits.Mul64(w.sumsq[0], n)
		a1, c := bits.Add64(l1, h0, 0)
		if h1 == 0 && c == 0 {
			p1, p0 := bits.Mul64(w.sum.lo, w.sum.lo)
			d0, br := bits.Sub64(l0, p0, 0)
			d1, _ := bits.Sub64(a1, p1, br)
			return roundUint192(0, d1, d0)
		}
	}
	// n'·Σx²: Σx² < 2^146, so its top word times n' fits in a word.
	h0, l0 := bits.Mul64(w.sumsq[0], n)
	h1, l1 := bits.Mul64(w.sumsq[1], n)
	a1, c := bits.Add64(l1, h0, 0)
	a2 := w.sumsq[2]*n + h1 + c
	// (Σx)²: |Σx| < 2^84, so its high word is below 2^20.
	s := w.sum.abs()
	p1, p0 := bits.Mul64(s.lo, s.lo)
	m1, m0 := bits.Mul64(s.hi, s.lo) // the cross term, doubled below
	m1 = m1<<1 | m0>>63
	m0 <<= 1
	b1, c := bits.Add64(p1, m0, 0)
	b2 := s.hi*s.hi + m1 + c
	d0, br := bits.Sub64(l0, p0, 0)
	d1, br := bits.Sub64(a1, b1, br)
	d2, _ := bits.Sub64(a2, b2, br)
	if int64(d2) < 0 { // cannot happen: the spread is a sum of squares
		return 0
	}
	return roundUint192(d2, d1, d0)
}

// roundUint192 returns d2·2^128 + d1·2^64 + d0 rounded to the nearest
// float64 (ties to even), once: its 64 leading bits, the bits below them
// folded into the last one (a sticky bit, far below the 53 kept), are
// converted exactly as the whole would be, then scaled.
func roundUint192(d2, d1, d0 uint64) float64 {
	switch {
	case d2 != 0:
		s := uint(bits.LeadingZeros64(d2))
		top := d2<<s | d1>>(64-s) // x >> 64 is 0 in Go
		if d1<<s|d0 != 0 {
			top |= 1
		}
		return topFloat(top) * pow2(128-s)
	case d1 != 0:
		return roundUint128(d1, d0)
	}
	return float64(d0)
}

// roundUint128 is roundUint192(0, d1, d0) for d1 ≠ 0, small enough to
// inline.
func roundUint128(d1, d0 uint64) float64 {
	s := uint(bits.LeadingZeros64(d1))
	top := d1<<s | d0>>(64-s)
	if d0<<s != 0 {
		top |= 1
	}
	return topFloat(top) * pow2(64-s)
}

// topFloat returns float64(top) for top ≥ 2^63, as the conversion
// does it: halved, the lost bit kept as a sticky bit (so that it rounds
// the same), converted as a signed integer and doubled (exactly).
func topFloat(top uint64) float64 { return float64(int64(top>>1|top&1)) * 2 }

// pow2 returns 2^e (0 ≤ e ≤ 1023), a product by which is exact.
func pow2(e uint) float64 { return math.Float64frombits(uint64(1023+e) << 52) }

// SampleVariance returns the sample variance (divide by n'−1) in ns²; 0 with
// fewer than two samples.
func (w *Window) SampleVariance() float64 {
	if w.n < 2 {
		return 0
	}
	return w.Variance() * float64(w.n) / float64(w.n-1)
}

// MeanStdDev returns Mean and StdDev together, in nanoseconds (the φ
// detectors need both on every heartbeat): the same values, in one step
// when 0 ≤ Σx ≤ 2^53 and n'·Σx² < 2^128 (windows of inter-arrival times).
func (w *Window) MeanStdDev() (mean, sd float64) {
	if w.n >= 2 && w.sum.hi == 0 && w.sum.lo <= 1<<53 && w.sumsq[2] == 0 {
		// Mean's quotient and spread's two-word numerator, inline.
		n := uint64(w.n)
		h1, l1 := bits.Mul64(w.sumsq[1], n)
		h0, l0 := bits.Mul64(w.sumsq[0], n)
		a1, c := bits.Add64(l1, h0, 0)
		if h1|c == 0 {
			p1, p0 := bits.Mul64(w.sum.lo, w.sum.lo)
			d0, br := bits.Sub64(l0, p0, 0)
			d1, _ := bits.Sub64(a1, p1, br)
			var sp float64
			if d1 == 0 {
				sp = float64(d0)
			} else {
				sp = roundUint128(d1, d0)
			}
			fn := float64(w.n)
			return float64(int64(w.sum.lo)) / fn, math.Sqrt(sp / (fn * fn))
		}
	}
	return w.Mean(), w.StdDev()
}

// Sums is the exact sums of N samples: Σx = Sum and Σx² = Sq1·2^64 + Sq0
// (MeanStdDevs).
type Sums struct {
	N        int
	Sum      uint64
	Sq1, Sq0 uint64
}

// MeanStdDevs sets mean[i] and sd[i] to the mean and population standard
// deviation in nanoseconds of the samples whose sums are ss[i] (mean and
// sd at least as long as ss), as a Window holding them computes them
// (MeanStdDev's one step: Σx/n' and √(s/n'²), s = n'·Σx² − (Σx)² exact and
// rounded to float64 once), bit for bit, for sums with 0 ≤ Σx ≤ 2^53 and
// n'·Σx² < 2^128. Samples in [0, 2^32) never leave that range (Σx <
// 2^52, n'·Σx² < 2^104 for n' ≤ MaxWindowSize), so a caller that keeps
// the sums of such samples itself gets MeanStdDev's values; ok reports
// whether every ss[i] was in range (the others, and those with N = 0, get
// 0). One loop of independent iterations, so that the divisions and
// square roots of many windows overlap: a threshold sweep keeps many
// windows side by side (phi.NormalHistories).
func MeanStdDevs(ss []Sums, mean, sd []float64) (ok bool) {
	mean, sd = mean[:len(ss)], sd[:len(ss)]
	ok = true
	for i := range ss {
		s := &ss[i]
		n := uint64(s.N)
		h1, l1 := bits.Mul64(s.Sq1, n)
		h0, l0 := bits.Mul64(s.Sq0, n)
		a1, c := bits.Add64(l1, h0, 0)
		if h1|c != 0 || s.Sum > 1<<53 || n == 0 {
			mean[i], sd[i] = 0, 0
			ok = ok && n == 0
			continue
		}
		// MeanStdDev's one step.
		p1, p0 := bits.Mul64(s.Sum, s.Sum)
		d0, br := bits.Sub64(l0, p0, 0)
		d1, _ := bits.Sub64(a1, p1, br)
		var sp float64
		if d1 == 0 {
			sp = float64(d0)
		} else {
			sp = roundUint128(d1, d0)
		}
		fn := float64(s.N)
		mean[i], sd[i] = float64(int64(s.Sum))/fn, math.Sqrt(sp/(fn*fn))
	}
	return ok
}

// StdDev returns the population standard deviation in nanoseconds.
func (w *Window) StdDev() float64 { return math.Sqrt(w.Variance()) }

// int128 is a two's-complement 128-bit integer.
type int128 struct{ hi, lo uint64 }

func (a *int128) add(x int64) {
	var c uint64
	a.lo, c = bits.Add64(a.lo, uint64(x), 0)
	a.hi += c + uint64(x>>63)
}

func (a *int128) sub(x int64) {
	var b uint64
	a.lo, b = bits.Sub64(a.lo, uint64(x), 0)
	a.hi -= b + uint64(x>>63)
}

// addSmall adds x < 2^63.
func (a *int128) addSmall(x uint64) {
	var c uint64
	a.lo, c = bits.Add64(a.lo, x, 0)
	a.hi += c
}

// subSmall subtracts x < 2^63.
func (a *int128) subSmall(x uint64) {
	var b uint64
	a.lo, b = bits.Sub64(a.lo, x, 0)
	a.hi -= b
}

func (a int128) negative() bool { return int64(a.hi) < 0 }

// abs returns |a| (a > −2^127).
func (a int128) abs() int128 {
	if !a.negative() {
		return a
	}
	lo, b := bits.Sub64(0, a.lo, 0)
	return int128{hi: -a.hi - b, lo: lo}
}

// uint192 is an unsigned 192-bit integer, least significant word first.
type uint192 [3]uint64

// square returns x² as a 128-bit (high, low) pair.
func square(x int64) (hi, lo uint64) {
	m := uint64(x)
	if x < 0 {
		m = -m // 2^63 for MinInt64
	}
	return bits.Mul64(m, m)
}

func (a *uint192) addSquare(x int64) {
	h, l := square(x)
	var c uint64
	a[0], c = bits.Add64(a[0], l, 0)
	a[1], c = bits.Add64(a[1], h, c)
	a[2] += c
}

func (a *uint192) subSquare(x int64) {
	h, l := square(x)
	var b uint64
	a[0], b = bits.Sub64(a[0], l, 0)
	a[1], b = bits.Sub64(a[1], h, b)
	a[2] -= b
}

// addSmall adds a square below 2^64.
func (a *uint192) addSmall(sq uint64) {
	var c uint64
	a[0], c = bits.Add64(a[0], sq, 0)
	a[1], c = bits.Add64(a[1], 0, c)
	a[2] += c
}

// subSmall subtracts a square below 2^64.
func (a *uint192) subSmall(sq uint64) {
	var b uint64
	a[0], b = bits.Sub64(a[0], sq, 0)
	a[1], b = bits.Sub64(a[1], 0, b)
	a[2] -= b
}
