package qos

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/internal/selection"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// CI holds 95 % confidence intervals for the QoS of one setting, from a
// circular block bootstrap over time cells (Künsch, Ann. Statist. 17(3),
// 1989; Politis and Romano 1992) with the block length of Politis and
// White (Econometric Rev. 23(1), 2004; corrected by Patton, Politis and
// White, Econometric Rev. 28(4), 2009); see docs/algorithms.md,
// “Confidence intervals for TD, MR and QAP”. Each pair is [low, high].
//
// Assumptions: the stream is stationary and weakly dependent over time
// (dependence dies out within a few blocks), and a cell (1/128 of the
// stream) is short next to the stream. A setting without mistakes gets
// MR ∈ [0, 3/T_obs] (the “rule of three”, a one-sided 95 % bound for a
// Poisson count of 0) and QAP ∈ [1, 1]; one with fewer than 10 mistakes
// gets an MR interval at least as wide as the exact Poisson interval of
// its count (Garwood 1936), which the bootstrap alone falls short of.
type CI struct {
	// Level is the coverage the intervals aim at (0.95).
	Level float64 `json:"level"`
	// MRPerSecond, QAP and TDMean bound Result.MRPerSecond, Result.QAP
	// and Result.TD.Mean.
	MRPerSecond [2]float64       `json:"mr_per_second"`
	QAP         [2]float64       `json:"qap"`
	TDMean      [2]time.Duration `json:"td_mean_ns"`
	// Cells is the number of time cells resampled, CellWidth their width
	// and Block the block length in cells chosen from the data.
	Cells     int           `json:"cells"`
	CellWidth time.Duration `json:"cell_ns"`
	Block     int           `json:"block_cells"`
}

const (
	ciLevel = 0.95
	// bootstrapReps resamples per interval: the 2.5 % and 97.5 % points
	// are then the 13th and 488th of 499 ordered values.
	bootstrapReps = 499
	// minCells is the least number of cells with observed time for an
	// interval: fewer leave nothing to resample.
	minCells = 8
	// fewMistakes: below this many mistakes the MR interval is at least
	// the exact Poisson interval of the count (poissonMR).
	fewMistakes = 10
)

// active returns the range [lo, hi) of cells from the first to the last
// one with observed time or an evaluated heartbeat.
func (s *cellSeries) active() (lo, hi int) {
	lo, hi = -1, -1
	for c := range s.span {
		if s.span[c] > 0 || s.tdN[c] > 0 {
			if lo < 0 {
				lo = c
			}
			hi = c + 1
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

// qosSums are the totals a resample adds up.
type qosSums struct{ span, mist, susp, tdSum, tdN float64 }

// sums returns the totals of s over cells [lo, hi).
func (s *cellSeries) sums(lo, hi int) qosSums {
	var q qosSums
	for c := lo; c < hi; c++ {
		q.span += s.span[c]
		q.mist += s.mist[c]
		q.susp += s.susp[c]
		q.tdSum += s.tdSum[c]
		q.tdN += s.tdN[c]
	}
	return q
}

// linearized returns the series whose sums drive the three ratios' errors
// (their influence functions: x_c − R·y_c for R = Σx/Σy), for the block
// length rule.
func (s *cellSeries) linearized(lo, hi int, tot qosSums) [3][]float64 {
	var z [3][]float64
	for i := range z {
		z[i] = make([]float64, hi-lo)
	}
	for c := lo; c < hi; c++ {
		z[0][c-lo] = s.mist[c] - tot.mist/tot.span*s.span[c]
		z[1][c-lo] = s.susp[c] - tot.susp/tot.span*s.span[c]
		if tot.tdN > 0 {
			z[2][c-lo] = s.tdSum[c] - tot.tdSum/tot.tdN*s.tdN[c]
		}
	}
	return z
}

// setCI sets res.CI (and keeps cells for paired comparisons) from the
// cells of res; it leaves CI nil when fewer than minCells cells have
// observed time.
func (res *Result) setCI(cells *cellSeries) {
	res.cells = cells
	res.CI = nil
	lo, hi := cells.active()
	if hi-lo < minCells || res.Span <= 0 {
		return
	}
	tot := cells.sums(lo, hi)
	if tot.span <= 0 {
		return
	}
	b := 1
	for _, z := range cells.linearized(lo, hi, tot) {
		b = max(b, blockLength(z))
	}
	reps := bootstrap(hi-lo, b, cells, nil, lo)
	ci := &CI{Level: ciLevel, Cells: hi - lo, CellWidth: cells.grid.width, Block: b}
	ci.MRPerSecond = percentiles(reps[0])
	ci.QAP = percentiles(reps[1])
	td := percentiles(reps[2])
	ci.TDMean = [2]time.Duration{time.Duration(math.Round(td[0])), time.Duration(math.Round(td[1]))}
	if res.Mistakes == 0 {
		ci.MRPerSecond = [2]float64{0, 3 / res.Span.Seconds()}
	} else if res.Mistakes < fewMistakes {
		// A percentile bootstrap cannot say more than the few mistakes it
		// resamples: with one mistake its upper end is about 3/T_obs, the
		// bound of no mistake at all. Below fewMistakes the interval is
		// therefore never narrower than the exact Poisson one of the
		// count. (Above, it is not applied: mistakes of a heavily
		// loaded setting are fewer-than-Poisson dispersed, and the union
		// covered the true MR 99.5 % of the time in TestIntervalCoverage.)
		g := poissonMR(res.Mistakes, res.Span)
		ci.MRPerSecond = [2]float64{min(ci.MRPerSecond[0], g[0]), max(ci.MRPerSecond[1], g[1])}
	}
	if res.Evaluated == 0 {
		ci.TDMean = [2]time.Duration{}
	}
	res.CI = ci
}

// poissonMR returns the exact (Garwood) two-sided 95 % interval of a
// Poisson rate from k ≥ 1 events over span, in events per second:
// [χ²(0.025; 2k)/2, χ²(0.975; 2k+2)/2] / span (Garwood, Biometrika 23(3/4),
// 1936; e.g. k = 1 gives [0.0253, 5.572]/span). It holds for mistakes
// that are independent events; clustered mistakes widen the bootstrap
// interval beyond it.
func poissonMR(k int, span time.Duration) [2]float64 {
	a := (1 - ciLevel) / 2
	sec := span.Seconds()
	lo := distuv.ChiSquared{K: float64(2 * k)}.Quantile(a) / 2 / sec
	hi := distuv.ChiSquared{K: float64(2*k + 2)}.Quantile(1-a) / 2 / sec
	return [2]float64{lo, hi}
}

// percentiles returns the 2.5 % and 97.5 % empirical quantiles of xs
// (the values of ranks ⌈q·n⌉, as stat.Quantile's Empirical kind gives;
// NaN values, from resamples without time, are dropped); it reorders xs.
func percentiles(xs []float64) [2]float64 {
	xs = slices.DeleteFunc(xs, math.IsNaN)
	n := len(xs)
	if n == 0 {
		return [2]float64{}
	}
	a := (1 - ciLevel) / 2
	lo, hi := rank(a, n), rank(1-a, n)
	l := selection.Rank(xs, lo)
	// selection.Rank leaves xs partitioned around rank lo.
	h := selection.Rank(xs[lo:], hi-lo)
	return [2]float64{l, h}
}

// bootstrap draws bootstrapReps circular block resamples of the n cells
// [lo, lo+n) of a (and, when b2 is not nil, the same cells of b2, for a
// paired difference) with blocks of blk cells, and returns per resample
// MR, QAP and mean TD (of a, or of a minus b2). The block starts come from
// a generator with a fixed seed (resampleStarts): the same cells give the
// same interval on every run, and every setting of a stream is resampled
// alike. The resamples' observed time and evaluated heartbeats, the same
// for every setting of a curve, are added up once per curve (observedOf).
func bootstrap(n, blk int, a, b2 *cellSeries, lo int) [3][]float64 {
	starts := resampleStarts(n, blk)
	ra := newResampler(a, lo, n, blk, starts)
	defer ra.release()
	var rb resampler
	if b2 != nil {
		rb = newResampler(b2, lo, n, blk, starts)
		defer rb.release()
	}
	blocks := (n + blk - 1) / blk
	var out [3][]float64
	for i := range out {
		out[i] = make([]float64, bootstrapReps)
	}
	// Two resamples at a time: their sums are independent chains of
	// additions, which the processor then overlaps.
	for r := 0; r < bootstrapReps; r += 2 {
		r2 := min(r+1, bootstrapReps-1) // an odd last resample is summed twice
		qa := ra.sum2(r, r2, starts, blocks)
		var qb [2]qosSums
		if b2 != nil {
			qb = rb.sum2(r, r2, starts, blocks)
		}
		for i := range min(2, bootstrapReps-r) {
			q := qa[i]
			out[0][r+i], out[1][r+i], out[2][r+i] = ratio(q.mist, q.span)*1e9, 1-ratio(q.susp, q.span), ratio(q.tdSum, q.tdN)
			if b2 != nil {
				q = qb[i]
				out[0][r+i] -= ratio(q.mist, q.span) * 1e9
				out[1][r+i] -= 1 - ratio(q.susp, q.span)
				out[2][r+i] -= ratio(q.tdSum, q.tdN)
			}
		}
	}
	return out
}

// varSums are the totals of a resample that vary with the setting.
type varSums struct{ mist, susp, tdSum float64 }

// resampler adds up the resamples of a series: each resample's totals
// that vary with the setting from the series' block totals (full and
// last, as in blockTotals), the others from the totals the settings of a
// curve share (observedOf).
type resampler struct {
	full, last []varSums
	obs        *observed
}

// newResampler returns the resampler of the n cells from lo of s in
// blocks of blk, resampled from starts; release gives its observed totals
// back to the pool.
func newResampler(s *cellSeries, lo, n, blk int, starts []int32) resampler {
	t := newBlockTotals(s, lo, n, blk)
	proj := func(q []qosSums) []varSums {
		v := make([]varSums, len(q))
		for j, x := range q {
			v[j] = varSums{x.mist, x.susp, x.tdSum}
		}
		return v
	}
	r := resampler{full: proj(t.full), obs: observedOf(s, lo, n, blk, t, starts)}
	r.last = r.full
	if &t.last[0] != &t.full[0] {
		r.last = proj(t.last)
	}
	return r
}

func (r resampler) release() { observedPool.Put(r.obs) }

// sum2 returns the totals of the resamples r1 and r2 (the blocks of
// resample r start at starts[r·blocks:], the last one the last, shorter
// block), adding the blocks in order: two resamples at a time, their sums
// are independent chains of additions, which the processor then overlaps.
func (r resampler) sum2(r1, r2 int, starts []int32, blocks int) [2]qosSums {
	var a, b varSums
	s1, s2 := starts[r1*blocks:(r1+1)*blocks], starts[r2*blocks:(r2+1)*blocks]
	k := len(s1) - 1
	full, last := r.full, r.last
	for i, s := range s1 {
		d, e := &full[s], &full[s2[i]]
		if i == k {
			d, e = &last[s], &last[s2[i]]
		}
		a.mist += d.mist
		b.mist += e.mist
		a.susp += d.susp
		b.susp += e.susp
		a.tdSum += d.tdSum
		b.tdSum += e.tdSum
	}
	o := r.obs.sums
	return [2]qosSums{
		{span: o[0][r1], mist: a.mist, susp: a.susp, tdSum: a.tdSum, tdN: o[1][r1]},
		{span: o[0][r2], mist: b.mist, susp: b.susp, tdSum: b.tdSum, tdN: o[1][r2]},
	}
}

// observed is, for the resamples of the n cells from lo of a series in
// blocks of blk cells, the totals of the observed time and of the
// evaluated heartbeats (sums[0] and sums[1], per resample, its blocks
// added in order), with the cells they are the totals of.
type observed struct {
	lo, n, blk int
	span, tdN  []float64
	sums       [2][]float64
}

// observedPool keeps the observed totals last computed (one per
// goroutine, roughly): the points of a curve, computed one after the
// other, have the same.
var observedPool = sync.Pool{New: func() any { return new(observed) }}

// observedOf returns the observed totals of the resamples of s (whose
// block totals are t) from the pool when they are those of the same cells
// bit for bit, else computed; the caller puts it back.
func observedOf(s *cellSeries, lo, n, blk int, t blockTotals, starts []int32) *observed {
	o := observedPool.Get().(*observed)
	span, tdN := s.span[lo:lo+n], s.tdN[lo:lo+n]
	if o.lo == lo && o.n == n && o.blk == blk && sameBits(o.span, span) && sameBits(o.tdN, tdN) {
		return o
	}
	o.lo, o.n, o.blk = lo, n, blk
	o.span, o.tdN = append(o.span[:0], span...), append(o.tdN[:0], tdN...)
	for j := range o.sums {
		o.sums[j] = slices.Grow(o.sums[j][:0], bootstrapReps)[:bootstrapReps]
	}
	blocks := (n + blk - 1) / blk
	for r := range bootstrapReps {
		var sp, ev float64
		ss := starts[r*blocks : (r+1)*blocks]
		for i, st := range ss {
			d := &t.full[st]
			if i == len(ss)-1 {
				d = &t.last[st]
			}
			sp += d.span
			ev += d.tdN
		}
		o.sums[0][r], o.sums[1][r] = sp, ev
	}
	return o
}

// sameBits reports whether a and b hold the same values bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// blockTotals holds the totals of the blocks of a circular block
// bootstrap over n cells with blocks of blk cells: full[s] those of the
// block of blk cells from s, last[s] those of the last, shorter block of
// a resample (n − (⌈n/blk⌉ − 1)·blk cells) from s. Each is the
// difference of two prefix sums (prefixes), computed once for all the
// resamples.
type blockTotals struct{ full, last []qosSums }

func newBlockTotals(s *cellSeries, lo, n, blk int) blockTotals {
	p := prefixes(s, lo, n, blk)
	blocks := (n + blk - 1) / blk
	diffs := func(l int) []qosSums {
		d := make([]qosSums, n)
		for s := range d {
			i, j := &p[s], &p[s+l]
			d[s] = qosSums{j.span - i.span, j.mist - i.mist, j.susp - i.susp, j.tdSum - i.tdSum, j.tdN - i.tdN}
		}
		return d
	}
	t := blockTotals{full: diffs(blk)}
	t.last = t.full
	if last := n - (blocks-1)*blk; last != blk {
		t.last = diffs(last)
	}
	return t
}

// startsCache holds resampleStarts's tables by (cells, block length), at
// most maxCachedStarts of them (each at most bootstrapReps·maxCells
// starts, 255 KiB); past that the tables are drawn afresh each time.
var (
	startsCache  sync.Map
	startsCached atomic.Int32
)

const maxCachedStarts = 64

// resampleStarts returns bootstrapReps·⌈n/blk⌉ block starts in [0, n),
// drawn by a PCG generator with a fixed seed: the resamples depend only on
// the number of cells and the block length, so they are drawn once and
// shared (read-only) by every interval.
func resampleStarts(n, blk int) []int32 {
	key := [2]int{n, blk}
	if v, ok := startsCache.Load(key); ok {
		return v.([]int32)
	}
	rng := rand.New(rand.NewPCG(0x5eed_f00d, 0x9e3779b97f4a7c15))
	blocks := (n + blk - 1) / blk
	st := make([]int32, bootstrapReps*blocks)
	for i := range st {
		st[i] = int32(rng.IntN(n))
	}
	if startsCached.Add(1) > maxCachedStarts {
		startsCached.Add(-1)
		return st
	}
	v, loaded := startsCache.LoadOrStore(key, st)
	if loaded {
		startsCached.Add(-1)
	}
	return v.([]int32)
}

// ratio is x/y, NaN when y is not positive.
func ratio(x, y float64) float64 {
	if !(y > 0) {
		return math.NaN()
	}
	return x / y
}

// prefixes returns the prefix sums of the cells [lo, lo+n) of s extended
// circularly by blk cells: the sum over cells [i, j) of the extended
// series is p[j] − p[i].
func prefixes(s *cellSeries, lo, n, blk int) []qosSums {
	p := make([]qosSums, n+blk+1)
	for i := range n + blk {
		c := lo + i%n
		q := p[i]
		q.span += s.span[c]
		q.mist += s.mist[c]
		q.susp += s.susp[c]
		q.tdSum += s.tdSum[c]
		q.tdN += s.tdN[c]
		p[i+1] = q
	}
	return p
}

// blockLength returns the block length (in cells, at least 1) for the
// circular block bootstrap of the mean of z, by the rule of Politis and
// White (2004) with the correction of Patton, Politis and White (2009):
//
//	b = (2·Ĝ²/D̂)^(1/3) · N^(1/3),  D̂ = (4/3)·ĝ²,
//	ĝ = Σ_{|k|≤M} λ(k/M)·R̂(k),  Ĝ = Σ_{|k|≤M} λ(k/M)·|k|·R̂(k),
//
// with R̂ the sample autocovariances, λ the flat-top (trapezoid) kernel,
// and M = 2·m̂, m̂ the smallest lag after which K_N = max(5, √log₁₀N)
// sample autocorrelations in a row lie within ±2·√(log₁₀N/N). b is at most
// min(3√N, N/3).
func blockLength(z []float64) int {
	n := len(z)
	if n < 4 {
		return 1
	}
	mean := stat.Mean(z, nil)
	kn := max(5, int(math.Ceil(math.Sqrt(math.Log10(float64(n))))))
	mmax := int(math.Ceil(math.Sqrt(float64(n)))) + kn
	lags := min(mmax+kn, n-1)
	r := make([]float64, lags+1)
	for k := range r {
		var s float64
		for i := 0; i+k < n; i++ {
			s += (z[i] - mean) * (z[i+k] - mean)
		}
		r[k] = s / float64(n)
	}
	if !(r[0] > 0) {
		return 1
	}
	thr := 2 * math.Sqrt(math.Log10(float64(n))/float64(n))
	mhat := mmax
	for m := 0; m <= mmax; m++ {
		ok := true
		for k := 1; k <= kn && m+k <= lags; k++ {
			if math.Abs(r[m+k]/r[0]) >= thr {
				ok = false
				break
			}
		}
		if ok {
			mhat = m
			break
		}
	}
	bigM := min(2*mhat, lags)
	g, gg := r[0], 0.0
	for k := 1; k <= bigM; k++ {
		lam := flatTop(float64(k) / float64(bigM))
		g += 2 * lam * r[k]
		gg += 2 * lam * float64(k) * r[k]
	}
	d := 4.0 / 3.0 * g * g
	bmax := math.Ceil(min(3*math.Sqrt(float64(n)), float64(n)/3))
	if !(d > 0) || gg == 0 {
		return 1
	}
	b := math.Cbrt(2*gg*gg/d) * math.Cbrt(float64(n))
	return int(math.Round(min(max(b, 1), bmax)))
}

// flatTop is the trapezoid kernel of Politis and Romano (1995): 1 on
// [0, 1/2], falling linearly to 0 at 1.
func flatTop(t float64) float64 {
	t = math.Abs(t)
	switch {
	case t <= 0.5:
		return 1
	case t <= 1:
		return 2 * (1 - t)
	}
	return 0
}

// Difference is a paired comparison of two settings on the same stream:
// the differences a − b of their mean TD, MR and QAP with 95 % bootstrap
// intervals (the same resampled time cells for both; see CI).
type Difference struct {
	TDMean      time.Duration    `json:"td_mean_ns"`
	TDMeanCI    [2]time.Duration `json:"td_mean_ci_ns"`
	MRPerSecond float64          `json:"mr_per_second"`
	MRCI        [2]float64       `json:"mr_ci"`
	QAP         float64          `json:"qap"`
	QAPCI       [2]float64       `json:"qap_ci"`
}

// TDSignificant reports whether the interval of the TD difference
// excludes 0.
func (d Difference) TDSignificant() bool { return d.TDMeanCI[0] > 0 || d.TDMeanCI[1] < 0 }

// ErrNoCells is returned by Compare for results without the per-cell
// breakdown (replayed without Config.Intervals, read back from JSON, or
// from different streams).
var ErrNoCells = errors.New("qos: no per-time-cell data to compare (replay with Config.Intervals, on the same stream)")

// Compare returns the paired difference a − b of two results replayed with
// Config.Intervals on the same stream.
func Compare(a, b Result) (Difference, error) {
	ca, cb := a.cells, b.cells
	if ca == nil || cb == nil || ca.grid != cb.grid {
		return Difference{}, ErrNoCells
	}
	la, ha := ca.active()
	lb, hb := cb.active()
	lo, hi := min(la, lb), max(ha, hb)
	if ha == 0 {
		lo = lb
	}
	if hb == 0 {
		lo = la
	}
	if hi-lo < minCells {
		return Difference{}, ErrNoCells
	}
	ta, tb := ca.sums(lo, hi), cb.sums(lo, hi)
	za, zb := ca.linearized(lo, hi, ta), cb.linearized(lo, hi, tb)
	blk := 1
	for i := range za {
		d := make([]float64, len(za[i]))
		for c := range d {
			d[c] = za[i][c] - zb[i][c]
		}
		blk = max(blk, blockLength(d))
	}
	reps := bootstrap(hi-lo, blk, ca, cb, lo)
	d := Difference{
		TDMean:      a.TD.Mean - b.TD.Mean,
		MRPerSecond: a.MRPerSecond - b.MRPerSecond,
		QAP:         a.QAP - b.QAP,
		MRCI:        percentiles(reps[0]),
		QAPCI:       percentiles(reps[1]),
	}
	td := percentiles(reps[2])
	d.TDMeanCI = [2]time.Duration{time.Duration(math.Round(td[0])), time.Duration(math.Round(td[1]))}
	return d, nil
}
