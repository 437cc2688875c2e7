package trace

import (
	"math"
	"slices"
	"time"
)

// exactSamples is how many samples an Accumulator keeps per series (inter-
// arrival times, send intervals, clock points) for exact statistics. Past
// it, a series moves to a summary of bounded size: its mean and standard
// deviation by Welford's running update, its minimum and maximum exactly,
// and its quantiles from a histogram with 2^histBits buckets per power of
// two, so that a quantile is off by less than 2^−(histBits+1) of its
// value (0.05 %); the clock fit uses running co-moments. Memory then stays
// bounded however long the stream is.
const exactSamples = 1 << 18

const histBits = 10

// series is one accumulated series of float64 samples.
type series struct {
	exact []float64
	big   bool // past exactSamples: the fields below hold the series
	n     int
	mean  float64
	m2    float64
	lo    float64
	hi    float64
	hist  histogram
}

// add adds v; past limit samples the series is summarized.
func (s *series) add(v float64, limit int) {
	if !s.big {
		if len(s.exact) < limit {
			s.exact = appendExact(s.exact, v, limit)
			return
		}
		// The limit+1 samples, v the last, go to the summary.
		s.big, s.lo, s.hi = true, math.Inf(1), math.Inf(-1)
		mid := v
		if i := (len(s.exact) + 1) / 2; i < len(s.exact) {
			mid = s.exact[i]
		}
		s.hist.center(histKey(mid))
		for _, x := range s.exact {
			s.fold(x)
		}
		s.fold(v)
		s.exact = nil
		return
	}
	s.fold(v)
}

// appendExact appends v to s, a series' exact samples, which holds fewer
// than limit. From 256 samples on, a full s doubles its capacity, up to
// limit, where append grows large slices by about a quarter: a long
// series then allocates about twice the bytes of its limit before it is
// summarized instead of about five times. Below 256 it grows as append
// does (doubling), so that a stream of a few heartbeats keeps as little.
func appendExact(s []float64, v float64, limit int) []float64 {
	if n := len(s); n == cap(s) && n >= 256 {
		t := make([]float64, n, n+min(n, limit-n))
		copy(t, s)
		s = t
	}
	return append(s, v)
}

func (s *series) fold(v float64) {
	s.n++
	d := v - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (v - s.mean)
	s.lo, s.hi = min(s.lo, v), max(s.hi, v)
	s.hist.add(histKey(v))
}

// histKey orders float64 values by buckets of 2^histBits per power of two.
func histKey(v float64) int64 {
	b := math.Float64bits(math.Abs(v)) >> (52 - histBits)
	if v < 0 {
		return -int64(b) - 1
	}
	return int64(b)
}

// histDense is how many consecutive buckets a histogram counts in an
// array: two powers of two, the values within a factor 2 of a series'
// typical value either way, where nearly all of a stream's intervals
// fall.
const histDense = 1 << (histBits + 1)

// histogram counts samples per bucket (histKey): those of the histDense
// buckets from base in an array, the others in a map, so that a sample
// near the series' typical value costs an increment, not a map update.
type histogram struct {
	base  int64
	dense []int
	other map[int64]int
}

// center makes the array count the buckets around key k; h must be empty.
func (h *histogram) center(k int64) {
	h.base, h.dense = k-histDense/2, make([]int, histDense)
}

func (h *histogram) add(k int64) {
	if i := uint64(k - h.base); i < uint64(len(h.dense)) {
		h.dense[i]++
		return
	}
	if h.other == nil {
		h.other = map[int64]int{}
	}
	h.other[k]++
}

// each calls fn with every bucket that holds samples and its count, in
// increasing order of keys.
func (h *histogram) each(fn func(k int64, c int)) {
	keys := make([]int64, 0, len(h.other))
	for k := range h.other {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	j := 0
	for ; j < len(keys) && keys[j] < h.base; j++ {
		fn(keys[j], h.other[keys[j]])
	}
	for i, c := range h.dense {
		if c > 0 {
			fn(h.base+int64(i), c)
		}
	}
	for ; j < len(keys); j++ {
		fn(keys[j], h.other[keys[j]])
	}
}

// histMid returns the middle of bucket k.
func histMid(k int64) float64 {
	neg := k < 0
	if neg {
		k = -k - 1
	}
	lo := math.Float64frombits(uint64(k) << (52 - histBits))
	hi := math.Float64frombits(uint64(k+1) << (52 - histBits))
	m := lo + (hi-lo)/2
	if neg {
		return -m
	}
	return m
}

func (s *series) len() int {
	if s.big {
		return s.n
	}
	return len(s.exact)
}

// robustMean returns the mean of the samples within a factor 2 of their
// median (the median itself when that is not positive).
func (s *series) robustMean() time.Duration {
	med := float64(s.dist().P50)
	if !(med > 0) {
		return dur(med)
	}
	lo, hi := med/2, 2*med
	var sum float64
	n := 0
	if !s.big {
		for _, v := range s.exact {
			if v >= lo && v <= hi {
				sum += v
				n++
			}
		}
	} else {
		s.hist.each(func(k int64, c int) {
			if v := histMid(k); v >= lo && v <= hi {
				sum += v * float64(c)
				n += c
			}
		})
	}
	if n == 0 {
		return dur(med)
	}
	return dur(sum / float64(n))
}

// dist returns the series' Dist (exact while it holds its samples).
func (s *series) dist() Dist {
	if !s.big {
		return dist(s.exact)
	}
	d := Dist{N: s.n, Min: dur(s.lo), Max: dur(s.hi), Mean: dur(s.mean)}
	if s.n > 1 {
		d.SD = dur(math.Sqrt(s.m2 / float64(s.n-1)))
	}
	q := func(p float64) time.Duration {
		r := int(math.Ceil(p*float64(s.n))) - 1 // gonum's Empirical rank
		r = max(r, 0)
		c := 0
		at := s.hi
		s.hist.each(func(k int64, n int) {
			if c <= r {
				if c += n; c > r {
					at = min(max(histMid(k), s.lo), s.hi)
				}
			}
		})
		return dur(at)
	}
	d.P50, d.P90, d.P99 = q(0.50), q(0.90), q(0.99)
	return d
}

// fit is the least-squares line through the clock points (x, y).
type fit struct {
	x, y []float64
	big  bool
	n    int
	mx   float64
	my   float64
	cxx  float64
	cxy  float64
}

// add adds the point (x, y); past limit points the fit is summarized.
func (f *fit) add(x, y float64, limit int) {
	if !f.big {
		if len(f.x) < limit {
			f.x, f.y = appendExact(f.x, x, limit), appendExact(f.y, y, limit)
			return
		}
		f.big = true // the limit+1 points, (x, y) the last
		for i := range f.x {
			f.fold(f.x[i], f.y[i])
		}
		f.fold(x, y)
		f.x, f.y = nil, nil
		return
	}
	f.fold(x, y)
}

func (f *fit) fold(x, y float64) {
	f.n++
	dx := x - f.mx
	f.mx += dx / float64(f.n)
	f.my += (y - f.my) / float64(f.n)
	f.cxx += dx * (x - f.mx)
	f.cxy += dx * (y - f.my)
}

func (f *fit) len() int {
	if f.big {
		return f.n
	}
	return len(f.x)
}
