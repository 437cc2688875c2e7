// TD percentiles of the linear families' one-pass sweeps: per setting, from the shifted per-heartbeat TDs.

package qos

import (
	"math"
	"slices"

	"github.com/fdkit/fdkit/internal/selection"
)

// tdQuantiles holds, per query point, the exact nearest-rank p50 and p99
// and the maximum of TD_k(p) = td0_k + scale_k·p (at least floor_k).
type tdQuantiles struct{ p50, p99, max float64 }

// allPercentiles computes tdQuantiles for every query point, exactly.
//
// For a small stream every point selects from all n values. Otherwise the
// heartbeats are first bucketed once into a grid over (scale_k, td0_k):
// each cell knows its heartbeats (stored contiguously) and the least and
// greatest td0, scale and floor among them. Since TD_k(p) = max(td0_k +
// scale_k·p, floor_k) is monotone in each of these (scale_k·p in scale_k
// for p ≥ 0, reversed for p < 0, and rounding is monotone), a cell's
// corners bound every TD_k(p) inside it. Per point, the two ranks are then
// located as Floyd and Rivest do: a pseudo-random sample of sampleSize
// values gives for each rank a window [lo, hi] that holds it with
// overwhelming probability; cells wholly below lo are counted, cells wholly
// above hi are skipped, and only the heartbeats of the cells that straddle
// a window (a thin band of the grid) are evaluated, counted and kept. If a
// window misses its rank, that point selects from all values instead, so
// every answer is exact.
func (lc *linearCurve) allPercentiles() []tdQuantiles {
	return lc.percentiles(tdSampleSize(len(lc.td0)))
}

// tdValue is TD_k(p) for heartbeat data c = td0_k, s = scale_k and floor
// f (−Inf when there is none). The conversion keeps the product rounded on
// its own (no fused multiply-add), as the cell bounds are.
func tdValue(c, s, f, p float64) float64 {
	v := c + float64(s*p)
	if v < f {
		v = f
	}
	return v
}

// percentiles is allPercentiles with a sample of m values (0: every point
// selects from all values).
func (lc *linearCurve) percentiles(m int) []tdQuantiles {
	n := len(lc.td0)
	out := make([]tdQuantiles, len(lc.ps))
	ranks := [2]int{rank(0.50, n), rank(0.99, n)}
	var buf []float64 // fullQuantiles's, shared by the points
	if m == 0 || n < 8*m {
		for i, p := range lc.ps {
			out[i], buf = lc.fullQuantiles(p, ranks, buf)
		}
		return out
	}
	// The sample, copied so that each point reads it contiguously.
	smpC, smpS, smpF := make([]float64, m), make([]float64, m), make([]float64, m)
	for j, k := range sampleIndices(n, m) {
		smpC[j], smpS[j], smpF[j] = lc.td0[k], lc.scales[k], lc.floorAt(k)
	}
	var g *tdGrid // a pass over every heartbeat per point below gridPoints
	if len(lc.ps) >= gridPoints {
		g = lc.newTDGrid(smpC, smpS)
	}
	sample := make([]float64, m)
	for i, p := range lc.ps {
		for j := range sample {
			sample[j] = tdValue(smpC[j], smpS[j], smpF[j], p)
		}
		lo, hi := sampleWindows(sample, ranks, n)
		var q tdQuantiles
		var ok bool
		if g != nil {
			q, ok = g.quantiles(p, ranks, lo, hi)
		} else {
			q, ok = lc.scanQuantiles(p, ranks, lo, hi)
		}
		if !ok {
			q, buf = lc.fullQuantiles(p, ranks, buf)
		}
		out[i] = q
	}
	return out
}

// gridPoints is the number of query points from which percentiles sorts
// the heartbeats into a tdGrid: below, each point reads every heartbeat
// once (scanQuantiles), which costs less than the grid's sorting pass
// (for a linear replay's sides, which have one point each).
const gridPoints = 4

// scanQuantiles is tdGrid.quantiles without a grid: it evaluates TD_k at p
// for every heartbeat, a block at a time.
func (lc *linearCurve) scanQuantiles(p float64, ranks [2]int, lo, hi [2]float64) (q tdQuantiles, ok bool) {
	const block = 4096
	vals := make([]float64, block)
	var below [2]int
	var in [2][]float64
	mx := math.Inf(-1)
	for a := 0; a < len(lc.td0); a += block {
		b := min(a+block, len(lc.td0))
		v := vals[:b-a]
		for k := range v {
			v[k] = tdValue(lc.td0[a+k], lc.scales[a+k], lc.floorAt(a+k), p)
		}
		if x := examine(nil, v, nil, 0, lo, hi, &below, &in); x > mx {
			mx = x
		}
	}
	r0, r1 := ranks[0]-below[0], ranks[1]-below[1]
	if r0 < 0 || r0 >= len(in[0]) || r1 < 0 || r1 >= len(in[1]) {
		return q, false
	}
	return tdQuantiles{selection.Rank(in[0], r0), selection.Rank(in[1], r1), mx}, true
}

// floorAt is the floor of TD_k (−∞ when TD is not floored).
func (lc *linearCurve) floorAt(k int) float64 {
	if lc.floor == nil {
		return math.Inf(-1)
	}
	return lc.floor[k]
}

// fullQuantiles selects the ranks (increasing) among every TD_k at p, in
// buf when it has room (returned for reuse).
func (lc *linearCurve) fullQuantiles(p float64, ranks [2]int, buf []float64) (tdQuantiles, []float64) {
	buf = slices.Grow(buf[:0], len(lc.td0))[:len(lc.td0)]
	mx := math.Inf(-1)
	for k, c := range lc.td0 {
		v := tdValue(c, lc.scales[k], lc.floorAt(k), p)
		buf[k] = v
		mx = max(mx, v)
	}
	return tdQuantiles{selection.Rank(buf, ranks[0]), selectAbove(buf, ranks), mx}, buf
}

// tdGrid holds the linear forms of TD_k sorted into cells of a grid over
// (scale, td0), with each cell's bounds: at a point p, a cell's TD values
// lie between bounds computed from its corners, so most cells are counted
// without reading their heartbeats.
type tdGrid struct {
	cs    []tdLine  // c and s, by cell
	fs    []float64 // the floors, by cell (nil: not floored)
	cells []tdCell  // the cells that hold heartbeats
	vMin  []float64 // per cell, scratch of quantiles
	vMax  []float64
	in    [2][]float64
}

type tdCell struct {
	from, to               int32
	cMin, cMax, sMin, sMax float64
	fMin, fMax             float64
}

// gridDims returns the grid's shape for n heartbeats: gridS × gridC cells,
// uniform between the 0.1 % and 99.9 % sample quantiles of scale and of
// td0 (the outer bins take the tails), about 16 heartbeats a cell up to
// 64 × 256 cells.
func gridDims(n int) (gridS, gridC int) {
	gridS, gridC = 64, 256
	for gridS > 4 && 16*gridS*gridC > n {
		gridS, gridC = gridS/2, gridC/2
	}
	return gridS, gridC
}

// newTDGrid sorts lc's heartbeats into the grid drawn from the sample's
// td0 (smpC) and scales (smpS).
func (lc *linearCurve) newTDGrid(smpC, smpS []float64) *tdGrid {
	n := len(lc.td0)
	gridS, gridC := gridDims(n)
	s0, sInv := gridAxis(smpS, gridS)
	c0, cInv := gridAxis(smpC, gridC)
	cells := gridS * gridC
	cellOf := make([]uint16, n)
	start := make([]int32, cells+1)
	for k, c := range lc.td0 {
		ci := gridBin(lc.scales[k], s0, sInv, gridS)*gridC + gridBin(c, c0, cInv, gridC)
		cellOf[k] = uint16(ci)
		start[ci+1]++
	}
	for ci := range cells {
		start[ci+1] += start[ci]
	}
	g := &tdGrid{cs: make([]tdLine, n)} // c and s side by side: one write per heartbeat
	if lc.floor != nil {
		g.fs = make([]float64, n)
	}
	pos := slices.Clone(start[:cells])
	for k, c := range lc.td0 {
		ci := cellOf[k]
		j := pos[ci]
		pos[ci]++
		g.cs[j] = tdLine{c, lc.scales[k]}
		if g.fs != nil {
			g.fs[j] = lc.floor[k]
		}
	}
	for ci := range cells {
		if a, b := start[ci], start[ci+1]; a < b {
			g.cells = append(g.cells, g.bounds(a, b))
		}
	}
	g.vMin, g.vMax = make([]float64, len(g.cells)), make([]float64, len(g.cells))
	return g
}

// gridAxis returns the lower end and the inverse bin width of a grid axis
// of g bins over the values v of a sample.
func gridAxis(v []float64, g int) (lo, inv float64) {
	m := len(v)
	buf := slices.Clone(v)
	lo = selection.Rank(buf, m/1000)
	hi := selection.Rank(buf, m-1-m/1000)
	if hi > lo {
		inv = float64(g) / (hi - lo)
	}
	return lo, inv
}

// gridBin is v's bin on an axis from v0 with inverse width inv and g bins.
func gridBin(v, v0, inv float64, g int) int {
	f := (v - v0) * inv
	if !(f > 0) { // also NaN
		return 0
	}
	if f >= float64(g-1) {
		return g - 1
	}
	return int(f)
}

// bounds returns the cell of the heartbeats at [a, b) with their bounds.
func (g *tdGrid) bounds(a, b int32) tdCell {
	c := tdCell{from: a, to: b, cMin: g.cs[a].c, cMax: g.cs[a].c, sMin: g.cs[a].s, sMax: g.cs[a].s, fMin: math.Inf(-1), fMax: math.Inf(-1)}
	for j := a; j < b; j++ {
		// Not the min and max builtins: their NaN handling is slow.
		if v := g.cs[j].c; v < c.cMin {
			c.cMin = v
		} else if v > c.cMax {
			c.cMax = v
		}
		if s := g.cs[j].s; s < c.sMin {
			c.sMin = s
		} else if s > c.sMax {
			c.sMax = s
		}
	}
	if g.fs != nil {
		c.fMin, c.fMax = g.fs[a], g.fs[a]
		for j := a; j < b; j++ {
			if f := g.fs[j]; f < c.fMin {
				c.fMin = f
			} else if f > c.fMax {
				c.fMax = f
			}
		}
	}
	return c
}

// quantiles returns the TD at both ranks and the greatest TD at p, given
// windows [lo, hi] that hold the ranks; ok is false when a window missed
// its rank (the caller then selects among all values).
func (g *tdGrid) quantiles(p float64, ranks [2]int, lo, hi [2]float64) (q tdQuantiles, ok bool) {
	maxLow := g.cellBounds(p)
	var below [2]int
	g.in[0], g.in[1] = g.in[0][:0], g.in[1][:0]
	mx := math.Inf(-1)
	for i := range g.cells {
		cl := &g.cells[i]
		l, h := g.vMin[i], g.vMax[i]
		// The greatest TD is in a cell whose upper bound reaches the
		// greatest lower bound of a cell.
		look := h >= maxLow || (h >= lo[0] && l <= hi[0]) || (h >= lo[1] && l <= hi[1])
		if !look {
			for j := range 2 {
				if h < lo[j] {
					below[j] += int(cl.to - cl.from)
				}
			}
			continue
		}
		var fs []float64
		if g.fs != nil {
			fs = g.fs[cl.from:cl.to]
		}
		if m := examine(g.cs[cl.from:cl.to], nil, fs, p, lo, hi, &below, &g.in); m > mx {
			mx = m
		}
	}
	r0, r1 := ranks[0]-below[0], ranks[1]-below[1]
	if r0 < 0 || r0 >= len(g.in[0]) || r1 < 0 || r1 >= len(g.in[1]) {
		return q, false
	}
	return tdQuantiles{selection.Rank(g.in[0], r0), selection.Rank(g.in[1], r1), mx}, true
}

// cellBounds sets each cell's bounds of TD at p and returns the greatest
// lower bound.
func (g *tdGrid) cellBounds(p float64) float64 {
	maxLow := math.Inf(-1)
	for i := range g.cells {
		cl := &g.cells[i]
		sLo, sHi := cl.sMin, cl.sMax
		if p < 0 {
			sLo, sHi = sHi, sLo
		}
		g.vMin[i] = tdValue(cl.cMin, sLo, cl.fMin, p)
		g.vMax[i] = tdValue(cl.cMax, sHi, cl.fMax, p)
		if g.vMin[i] > maxLow {
			maxLow = g.vMin[i]
		}
	}
	return maxLow
}

// tdLine is one heartbeat's TD_k(p) = c + s·p before its floor.
type tdLine struct{ c, s float64 }

// examine evaluates TD at p for the heartbeats of one cell (lines, or
// values vals with scale 0 when lines is nil; floors fs or nil): for each
// window j it adds to below[j] those below lo[j] and appends to in[j] those
// in [lo[j], hi[j]]; it returns their greatest TD. The counting is free of
// data-dependent branches (the sign bit of v − lo is 1 iff v < lo): these
// values lie near the windows, where a comparison is mispredicted half the
// time.
func examine(lines []tdLine, vals, fs []float64, p float64, lo, hi [2]float64, below *[2]int, in *[2][]float64) float64 {
	n := len(vals)
	if lines != nil {
		n = len(lines)
	}
	lo0, hi0, lo1, hi1 := lo[0], hi[0], lo[1], hi[1]
	b0, b1 := below[0], below[1]
	in0, in1 := slices.Grow(in[0], n), slices.Grow(in[1], n)
	n0, n1 := len(in0), len(in1)
	in0, in1 = in0[:cap(in0)], in1[:cap(in1)]
	mx := math.Inf(-1)
	for k := range n {
		var v float64
		if lines != nil {
			v = lines[k].c + float64(lines[k].s*p)
		} else {
			v = vals[k]
		}
		if fs != nil && v < fs[k] {
			v = fs[k]
		}
		if v > mx {
			mx = v
		}
		d0 := math.Float64bits(v - lo0)
		d1 := math.Float64bits(v - lo1)
		b0 += int(d0 >> 63)
		b1 += int(d1 >> 63)
		in0[n0] = v
		n0 += int(((d0 | math.Float64bits(hi0-v)) >> 63) ^ 1)
		in1[n1] = v
		n1 += int(((d1 | math.Float64bits(hi1-v)) >> 63) ^ 1)
	}
	below[0], below[1] = b0, b1
	in[0], in[1] = in0[:n0], in1[:n1]
	return mx
}

// rankValues returns the values of ranks (0-based) among vals, and their
// maximum, exactly and without reordering vals. A large slice is read once:
// a pseudo-random sample of m values gives a window per rank (see
// sampleWindows); one pass counts the values below each window and keeps
// those inside, and the selection runs on the small windows. A window that
// misses its rank falls back to selecting from a copy of all values.
func rankValues(vals []float64, ranks [2]int, m int) (r [2]float64, mx float64) {
	n := len(vals)
	full := func() ([2]float64, float64) {
		buf := slices.Clone(vals)
		r0 := selection.Rank(buf, ranks[0])
		return [2]float64{r0, selectAbove(buf, ranks)}, slices.Max(buf)
	}
	if m == 0 || n < 8*m {
		return full()
	}
	sample := make([]float64, m)
	for j, k := range sampleIndices(n, m) {
		sample[j] = vals[k]
	}
	lo, hi := sampleWindows(sample, ranks, n)
	var below [2]int
	var in [2][]float64
	mx = math.Inf(-1)
	const block = 4096
	for a := 0; a < n; a += block {
		if v := examine(nil, vals[a:min(a+block, n)], nil, 0, lo, hi, &below, &in); v > mx {
			mx = v
		}
	}
	r0, r1 := ranks[0]-below[0], ranks[1]-below[1]
	if r0 < 0 || r0 >= len(in[0]) || r1 < 0 || r1 >= len(in[1]) {
		return full()
	}
	return [2]float64{selection.Rank(in[0], r0), selection.Rank(in[1], r1)}, mx
}
