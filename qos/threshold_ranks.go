package qos

import (
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/internal/selection"
)

// A thresholdPass keeps every threshold's τ − A_k (one int64 per evaluated
// heartbeat and threshold) for the TD percentiles, so a long stream in
// memory is swept a few thresholds per pass, each pass running the shared
// detector again. sweepRanked replaces those passes by two over all the
// thresholds, storing no τ − A_k: the first (tdSample) runs the detector
// and reads every threshold's τ at every stride-th evaluated heartbeat
// only, a sample whose order statistics give each threshold a window of
// values around each TD rank (sampleBounds, as rankValuesInt draws them);
// the second is the full pass, which adds each TD_k up (the sum, the
// extremes, the cells' sums: what sumTD adds),
// counts the values below each window and those equal to its sides, and
// keeps the few inside. The nearest-rank p50 and p99 are then read in the
// windows. A threshold whose window misses its rank, keeps more values
// than its bound, or whose TD_k are too large for their int64 sums to
// equal the float64 sums (tdTally.exact), is swept again the usual way:
// every result equals finishTD's.

// rankedMin is the least stream length swept by sweepRanked (below it the
// usual passes take few thresholds' worth of memory anyway), and
// rankedMin/64 the least sample; a variable so that tests use short
// streams.
var rankedMin = 1 << 16

// tdSample is the first pass's sample: τ − A_k of each threshold at the
// evaluated heartbeats k = 0, stride, 2·stride, …
type tdSample struct {
	stride int
	rows   []int     // the k of each sample row
	vals   [][]int64 // per threshold, τ − A_k of each row
}

// sampleStride returns the stride of a sample of about 16384 values (at
// least one value in 32) among up to n evaluated heartbeats.
func sampleStride(n int) int { return max(32, n/(1<<14)) }

// tdWindows is the second pass's TD work per threshold (see sweepRanked).
type tdWindows struct {
	delays   []int64 // TD_k − (τ − A_k) when clocks are synchronized, else nil
	off      int64   // the same otherwise
	ranks    [2]int
	lo, hi   [][2]int64 // each threshold's windows
	below    [][2]int   // values under lo
	atLo     [][2]int   // values equal to lo
	atHi     [][2]int   // values equal to hi (and not to lo)
	in       [][2][]int64
	limit    [2]int // the most values a window keeps
	missed   []bool // a window overflowed: the threshold is swept again
	acc      []tdTally
	last     []int64
	rowsDone int // evaluated heartbeats already added
}

// newTDWindows returns the windows of the thresholds whose samples are
// smp (rows of values τ − A_k before their base), for n evaluated
// heartbeats whose TD_k bases are delays (or off when nil).
func newTDWindows(smp *tdSample, n int, delays []int64, off int64, cells []*cellSeries) *tdWindows {
	k := len(smp.vals)
	w := &tdWindows{delays: delays, off: off, ranks: [2]int{rank(0.50, n), rank(0.99, n)},
		lo: make([][2]int64, k), hi: make([][2]int64, k), below: make([][2]int, k), atLo: make([][2]int, k),
		atHi: make([][2]int, k), in: make([][2][]int64, k), missed: make([]bool, k), acc: make([]tdTally, k),
		last: make([]int64, k)}
	m := len(smp.rows)
	var cp [2]int
	for j, r := range w.ranks {
		cp[j] = windowCap(r, n, m)
		w.limit[j] = 2*cp[j] + 4096
	}
	sample := make([]int64, m)
	for i, vs := range smp.vals {
		// Room for the values a window holds, so that it rarely grows.
		w.in[i] = [2][]int64{make([]int64, 0, cp[0]), make([]int64, 0, cp[1])}
		for j, k := range smp.rows {
			sample[j] = vs[j] + w.base(k)
		}
		val, has := sampleBounds(sample, w.ranks, n)
		lo0, hi0, lo1, hi1 := windowEdges(val, has, math.MinInt64, math.MaxInt64)
		w.lo[i], w.hi[i] = [2]int64{lo0, lo1}, [2]int64{hi0, hi1}
		w.acc[i] = newTDTally(cells[i])
	}
	return w
}

// tdTally adds up, in heartbeat order, what sumTD computes: the TD_k's
// sum (in int64: see exact), their least and greatest values, and the TD
// sums of their cells (cellSeries.setTD's), a run of TD_k in one cell at a
// time.
type tdTally struct {
	sum        int64
	mn, mx     int64
	tdSum, tdN []float64
}

// newTDTally returns a tdTally that also fills cells's TD sums (when cells is
// not nil), which it clears.
func newTDTally(cells *cellSeries) tdTally {
	a := tdTally{mn: math.MaxInt64, mx: math.MinInt64}
	if cells != nil {
		clear(cells.tdSum)
		clear(cells.tdN)
		a.tdSum, a.tdN = cells.tdSum, cells.tdN
	}
	return a
}

// exact reports whether the tally's sums of n TD_k equal the float64 sums
// taken one TD_k at a time in heartbeat order (sumTD's and setTD's): as
// in sumTD, when n·max |TD_k| < 2^52 every partial sum is an integer that
// float64 holds exactly.
func (a *tdTally) exact(n int) bool {
	return float64(n)*max(math.Abs(float64(a.mn)), math.Abs(float64(a.mx))) < 1<<52
}

// base returns TD_k − (τ − A_k) of the k-th evaluated heartbeat.
func (w *tdWindows) base(k int) int64 {
	if w.delays != nil {
		return w.delays[k]
	}
	return w.off
}

// tdStride is the distance in tdWindows.put's buffer from one
// threshold's TD_k to the next's: a block of rows and one cache line, so
// that the columns written row by row do not fall in a few sets of the
// cache.
const tdStride = tdBlock + 8

// put writes the TD_k of evaluated heartbeat rowsDone + r, arriving at a,
// of every threshold whose freshness point is in taus to row r of buf,
// threshold i's at i·tdStride + r (TD_k = max(τ − a, 0) plus the base), and
// returns the least of taus. It is not inlined, so that its loop keeps
// its variables in registers (in transition's loop it reloaded taus).
//
//go:noinline
func (w *tdWindows) put(buf []int64, r int, taus []time.Duration, a time.Duration) time.Duration {
	b := w.base(w.rowsDone + r)
	minTau := time.Duration(math.MaxInt64)
	j := r // i·tdStride + r, stepped rather than multiplied
	for _, tau := range taus {
		buf[j] = int64(max(tau-a, 0)) + b
		minTau = min(minTau, tau)
		j += tdStride
	}
	return minTau
}

// add accounts the rows in buf (put's, rows of n thresholds) of the next
// evaluated heartbeats, whose cells are evCell (when not nil), a
// threshold's run of rows in one cell at a time. Most values lie outside
// both windows: they cost two comparisons without a branch (about half the
// values fall below the p50 window, unpredictably) and one test of both
// windows at once, rarely taken (windowTally).
func (w *tdWindows) add(buf []int64, rows, n int, evCell []uint8) {
	if rows == 0 {
		return
	}
	// The rows' runs of one cell (one run without cells).
	var runs [tdBlock]cellRun
	nr := 0
	for r := 0; r < rows; {
		e, c := rows, uint8(0)
		if evCell != nil {
			ev := evCell[w.rowsDone : w.rowsDone+rows]
			c, e = ev[r], r+1
			for e < rows && ev[e] == c {
				e++
			}
		}
		runs[nr] = cellRun{end: e, cell: c}
		nr++
		r = e
	}
	var hits [tdBlock]int64
	for i := range n {
		if w.missed[i] {
			continue
		}
		col := buf[i*tdStride : i*tdStride+rows]
		acc := &w.acc[i]
		lo0, lo1, hi0, hi1 := w.lo[i][0], w.lo[i][1], w.hi[i][0], w.hi[i][1]
		// v is in [lo, hi] iff uint64(v − lo) ≤ uint64(hi − lo), wrapping
		// or not.
		wd0, wd1 := uint64(hi0-lo0), uint64(hi1-lo1)
		below0, below1 := w.below[i][0], w.below[i][1]
		from := 0
		for _, run := range runs[:nr] {
			vs := col[from:run.end]
			var s int64
			s, acc.mn, acc.mx = sumRange(vs, acc.mn, acc.mx)
			var b0, b1, k int
			if near(acc.mn) && near(acc.mx) && near(lo0) && near(lo1) {
				b0, b1, k = windowTallyNear(vs, lo0, lo1, wd0, wd1, hits[:len(vs)])
			} else {
				b0, b1, k = windowTally(vs, lo0, lo1, wd0, wd1, hits[:len(vs)])
			}
			below0, below1 = below0+b0, below1+b1
			for _, v := range hits[:k] {
				w.inWindows(i, v)
			}
			acc.sum += s
			if acc.tdSum != nil {
				acc.tdSum[run.cell] += float64(s)
				acc.tdN[run.cell] += float64(run.end - from)
			}
			from = run.end
		}
		w.last[i] = col[rows-1]
		w.below[i] = [2]int{below0, below1}
		if len(w.in[i][0]) > w.limit[0] || len(w.in[i][1]) > w.limit[1] {
			w.missed[i] = true
			w.in[i] = [2][]int64{}
		}
	}
	w.rowsDone += rows
}

// sumRange returns the sum of vs (a threshold's TD_k of a run) and their
// extremes with mn and mx. It and windowTally are apart, and not inlined,
// so that each loop keeps its few variables in registers.
//
//go:noinline
func sumRange(vs []int64, mn, mx int64) (sum, mn2, mx2 int64) {
	for _, v := range vs {
		sum += v
		mn, mx = min(mn, v), max(mx, v)
	}
	return sum, mn, mx
}

// windowTally returns how many values of vs are under lo0 and under lo1,
// without a branch (about half are under the p50 window), and copies to
// hits those in the window [lo0, lo0 + wd0] or [lo1, lo1 + wd1], a branch
// rarely taken, returning how many.
//
//go:noinline
func windowTally(vs []int64, lo0, lo1 int64, wd0, wd1 uint64, hits []int64) (below0, below1, k int) {
	hits = hits[:len(vs)]
	for _, v := range vs {
		below0 += b2i(v < lo0)
		below1 += b2i(v < lo1)
		if uint64(v-lo0) <= wd0 || uint64(v-lo1) <= wd1 {
			hits[k] = v
			k++
		}
	}
	return below0, below1, k
}

// windowTallyNear is windowTally for values vs and sides lo0, lo1 within
// 2^62 of 0 (near), where v − lo does not overflow and its sign bit says
// whether v < lo: one subtraction serves the count and the window test.
//
//go:noinline
func windowTallyNear(vs []int64, lo0, lo1 int64, wd0, wd1 uint64, hits []int64) (below0, below1, k int) {
	hits = hits[:len(vs)]
	// v − lo1 is v − lo0 plus lo0 − lo1 (modulo 2^64), and v is lo0 plus
	// v − lo0: fewer values live in the loop, which then keeps them all
	// in registers.
	dl := uint64(lo0 - lo1)
	for _, v := range vs {
		d0 := uint64(v - lo0)
		d1 := d0 + dl
		below0 += int(d0 >> 63)
		below1 += int(d1 >> 63)
		if d0 <= wd0 || d1 <= wd1 {
			hits[k] = int64(d0) + lo0
			k++
		}
	}
	return below0, below1, k
}

// near reports |x| < 2^62: the difference of two such values does not
// overflow.
func near(x int64) bool { return x > -1<<62 && x < 1<<62 }

// inWindows accounts threshold i's value v, which lies in one of its
// windows [lo, hi] or both: it counts the sides apart and keeps the values
// between them.
func (w *tdWindows) inWindows(i int, v int64) {
	for j := range 2 {
		switch lo, hi := w.lo[i][j], w.hi[i][j]; {
		case v == lo:
			w.atLo[i][j]++
		case v == hi:
			w.atHi[i][j]++
		case v > lo && v < hi:
			w.in[i][j] = append(w.in[i][j], v)
		}
	}
}

// b2i is 1 for true and 0 for false (a SETcc, no branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stats returns threshold i's TD statistics and last TD_k, as finishTD
// would, or false when a window missed its rank.
func (w *tdWindows) stats(i int) (TDStats, time.Duration, bool) {
	if w.missed[i] {
		return TDStats{}, 0, false
	}
	n := w.rowsDone
	if n == 0 {
		return TDStats{}, 0, true
	}
	a := &w.acc[i]
	if !a.exact(n) {
		return TDStats{}, 0, false
	}
	var r [2]int64
	for j, rk := range w.ranks {
		k := rk - w.below[i][j]
		switch in := w.in[i][j]; {
		case k < 0:
			return TDStats{}, 0, false
		case k < w.atLo[i][j]:
			r[j] = w.lo[i][j]
		case k-w.atLo[i][j] < len(in):
			r[j] = selection.Rank(in, k-w.atLo[i][j])
		case k-w.atLo[i][j]-len(in) < w.atHi[i][j]:
			r[j] = w.hi[i][j]
		default:
			return TDStats{}, 0, false
		}
	}
	s := TDStats{Mean: time.Duration(math.Round(float64(a.sum) / float64(n))), Max: time.Duration(a.mx),
		P50: time.Duration(r[0]), P99: time.Duration(r[1])}
	return s, time.Duration(w.last[i]), true
}

// sampleStep is thresholdPass.step's work in the first pass: the
// evaluated heartbeats' count, cells and delays, and every threshold's
// τ − A_k at the sample rows.
func (p *thresholdPass) sampleStep(a time.Duration, stale, ready bool) {
	if !ready {
		if !stale {
			p.base.WarmUp++
		}
		return
	}
	if stale {
		return
	}
	k := p.base.Evaluated - 1
	if k%p.sample.stride != 0 {
		return
	}
	p.fill(p.taus)
	p.sample.rows = append(p.sample.rows, k)
	for i, tau := range p.taus {
		p.sample.vals[i] = append(p.sample.vals[i], int64(max(tau-a, 0)))
	}
}

// sweepRanked computes, in the two passes described above, the Results
// of the thresholds values[reps[j]], whose detectors newDet builds and
// whose freshness points fillOf sets; it returns those it could not
// finish (a window missed) for the usual passes, and errNotLinear when
// newDet or a pass fails. With taped, the first pass records on a
// tauTape what the second reads of the detector, and the second replays
// the tape instead of running the detector again; when the tape cannot
// be written or read back (no temporary file, a write or read error, a
// tape cut short) the second pass runs the detector, with the same
// results.
func sweepRanked(newDet func(v float64) (thresholdDetector, error), fillOf func(src thresholdDetector, chunk []int) func([]time.Duration),
	values []float64, reps []int, res []Result, hs Source, cfg Config, spans *spanMemo, taped bool) (missed []int, err error) {
	var grid *cellGrid
	if cfg.Intervals {
		g := newCellGrid(hs)
		grid = &g
	}
	build := func() (thresholdDetector, func([]time.Duration), error) {
		src, err := newDet(values[reps[0]])
		if err != nil {
			return nil, nil, errNotLinear
		}
		return src, fillOf(src, reps), nil
	}
	run := func(src thresholdDetector, fill func([]time.Duration), setup func(p *thresholdPass)) (*thresholdPass, error) {
		p := newThresholdPass(src, len(reps), fill, cfg, 0, grid, false)
		setup(p)
		if err := drive(p, hs); err != nil {
			return nil, err
		}
		if !p.evaluating {
			return nil, errNotLinear
		}
		return p, nil
	}
	smp := &tdSample{stride: sampleStride(hs.Len()), vals: make([][]int64, len(reps))}
	rows := hs.Len()/smp.stride + 1 // at most
	smp.rows = make([]int, 0, rows)
	for i := range smp.vals {
		smp.vals[i] = make([]int64, 0, rows)
	}
	src, fill, err := build()
	if err != nil {
		return nil, err
	}
	var tape *tauTape
	if taped {
		// Without a file the second pass runs the detector again.
		if tape, err = newTape(cfg.Spill.Dir, len(reps)); err == nil {
			defer tape.close()
			rec := newTapeRecorder(src, fill, len(reps), tape)
			src, fill = rec, rec.fill
		}
	}
	first, err := run(src, fill, func(p *thresholdPass) {
		p.sample = smp
		p.delay = make([]int64, 0, hs.Len())
	})
	if err != nil {
		return nil, err
	}
	n := first.base.Evaluated
	if n < rankedMin || len(smp.rows) < rankedMin/64 {
		return reps, nil
	}
	var delays []int64
	if clockSyncOf(cfg.Clock, first.allSent, first.plaus) {
		delays = first.delay
	}
	var win *tdWindows
	second := func(src thresholdDetector, fill func([]time.Duration)) (*thresholdPass, error) {
		return run(src, fill, func(p *thresholdPass) {
			cells := make([]*cellSeries, len(p.pts))
			for i := range p.pts {
				cells[i] = p.pts[i].cells
			}
			win = newTDWindows(smp, n, delays, int64(cfg.DelayOffset), cells)
			p.win = win
			p.delay = nil // the first pass's delays serve
			if grid != nil {
				p.evCell = make([]uint8, 0, n)
			}
		})
	}
	var p *thresholdPass
	played := false
	if tape != nil {
		// A tape that cannot be read back costs a run of the detector,
		// not the sweep.
		if player, perr := tape.play(); perr == nil {
			p, err = second(player, player.fill)
			played = player.err == nil
		}
	}
	if !played {
		if src, fill, err = build(); err != nil {
			return nil, err
		}
		p, err = second(src, fill)
	}
	if err != nil {
		return nil, err
	}
	p.delay, p.allSent, p.plaus = first.delay, first.allSent, first.plaus
	out, err := p.finish(spans)
	if err != nil {
		return nil, errNotLinear
	}
	for j, i := range reps {
		if win.missed[j] {
			missed = append(missed, i)
			continue
		}
		res[i] = out[j]
	}
	return slices.Clip(missed), nil
}
