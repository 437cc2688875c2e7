// The linear families' curves: each query point's QoS from the sums a
// linearCollector gathered in one replay.

package qos

import (
	"fmt"
	"math"
	"slices"

	"github.com/fdkit/fdkit/detector"
)

// linearCurve answers the query points from a finished collection.
type linearCurve struct {
	base    Result // counts, span and clock decision of the pass
	ps      []float64
	cntU    []int // suffix sums: index i counts buckets ≥ i
	cntW    []int
	sU, sUU []float64
	sV, sVV []float64
	constS  float64
	td0     []float64 // c_k + base_k, ns
	scales  []float64
	sameS   bool // every scale equal: TD percentiles shift with p
	// floor, when not nil, holds per heartbeat the least TD_k (its base:
	// A_k − σ_k or d̄), reached when τ_{k+1}(p) < A_k at some query point:
	// TD_k(p) = max(td0_k + scale_k·p, floor_k).
	floor    []float64
	tdRanks  [3]float64
	sumTD0   float64
	sumScale float64
	quant    []tdQuantiles // per query point, when !sameS

	// With Config.Intervals: the collector (its per-cell buckets, made
	// suffix sums per cell), the base replay's cells (observed time), the
	// cell of each evaluated heartbeat, and per cell Σ td0 and Σ scale.
	lin              *linearCollector
	cells            *cellSeries
	evCell           []uint8
	cTD0, cScale, cN []float64

	// n is the number of evaluated heartbeats, and the last one's td0,
	// scale and floor (−Inf without a floor).
	n                             int
	lastTD0, lastScale, lastFloor float64
	// Under a floor, per query point, Σ_k TD_k(p) and its sums per cell:
	// from the spilled records (fromSpill; td0, scales and floor are then
	// nil), or from those in memory when at first needs them (sumFloors).
	floorSum   []float64
	floorCells [][]float64
}

// curve answers l's query points after replay r (its result res) from
// the per-heartbeat data td0 (TD_k at p = 0: c_k plus the TD base) and s
// (the scales), with floors the bases when l.floor (linearCollector.shiftTD0
// makes both, which every curve of the replay reads and none writes), or
// from the spill sp when not nil.
func (l *linearCollector) curve(res Result, r *replayer, td0, floors, s []float64, sp *linearSpill, cfg Config) (*linearCurve, error) {
	qs := l.ps
	lc := &linearCurve{base: res, ps: qs, constS: l.constSusp, scales: s,
		cntU: l.cntU, cntW: l.cntW, sU: l.sU, sUU: l.sUU, sV: l.sV, sVV: l.sVV}
	for i := len(qs) - 1; i >= 0; i-- {
		lc.cntU[i] += lc.cntU[i+1]
		lc.cntW[i] += lc.cntW[i+1]
		lc.sU[i] += lc.sU[i+1]
		lc.sUU[i] += lc.sUU[i+1]
		lc.sV[i] += lc.sV[i+1]
		lc.sVV[i] += lc.sVV[i+1]
	}
	sync := res.ClockSync
	if sp != nil {
		cellN := 0
		if r.cells != nil {
			cellN = r.cells.grid.n
		}
		if err := lc.fromSpill(sp, sync, int64(cfg.DelayOffset), l.floor, cellN); err != nil {
			return nil, err
		}
		if lc.n != res.Evaluated {
			return nil, fmt.Errorf("qos: internal error: %d linear TD samples for %d evaluated heartbeats", lc.n, res.Evaluated)
		}
		if l.floor {
			lc.floor = []float64{} // not nil: TD is floored (sums in floorSum)
		}
		if r.cells != nil {
			lc.setCells(l, r.cells, nil)
		}
		return lc, nil
	}
	lc.td0 = td0
	lc.sameS = true
	// Scales are ≥ 0, so τ(p) ≥ A_k at the smallest query point (l.floor
	// false) means at every point.
	if l.floor {
		lc.floor = floors
	}
	for k := range lc.td0 {
		lc.sumTD0 += lc.td0[k]
		lc.sumScale += s[k]
		if s[k] != s[0] {
			lc.sameS = false
		}
	}
	if lc.floor != nil {
		lc.sameS = false
	}
	if r.cells != nil {
		lc.setCells(l, r.cells, r.evCell)
	}
	n := len(lc.td0)
	lc.n = n
	if n > 0 {
		lc.lastTD0, lc.lastScale, lc.lastFloor = lc.td0[n-1], lc.scales[n-1], math.Inf(-1)
		if lc.floor != nil {
			lc.lastFloor = lc.floor[n-1]
		}
	}
	if n != res.Evaluated {
		return nil, fmt.Errorf("qos: internal error: %d linear TD samples for %d evaluated heartbeats", n, res.Evaluated)
	}
	if lc.sameS && n > 0 {
		r, mx := rankValues(lc.td0, [2]int{rank(0.50, n), rank(0.99, n)}, tdSampleSize(n))
		lc.tdRanks = [3]float64{r[0], r[1], mx}
	}
	return lc, nil
}

// at returns the QoS for parameter value p, one of the query points (in
// the detector's LinearForm units).
func (lc *linearCurve) at(p float64) (Result, error) {
	i, found := slices.BinarySearch(lc.ps, p)
	if !found {
		return Result{}, fmt.Errorf("qos: internal error: %g is not a query point", p)
	}
	res := lc.base
	res.MistakeIntervals = nil
	// Buckets above i hold the slacks > p.
	res.Mistakes = lc.cntU[i+1] - lc.cntW[i+1]
	susp := (lc.sUU[i+1] - p*lc.sU[i+1]) - (lc.sVV[i+1] - p*lc.sV[i+1]) + lc.constS
	res.Suspected = detector.RoundNanos((max(susp, 0)))

	n := lc.n
	if n > 0 {
		if lc.floor == nil {
			res.TD.Mean = detector.RoundNanos(((lc.sumTD0 + p*lc.sumScale) / float64(n)))
			res.LastTD = detector.RoundNanos((lc.lastTD0 + lc.lastScale*p))
		} else {
			if lc.floorSum == nil {
				lc.sumFloors() // every point's at once, and their cells'
			}
			sum := lc.floorSum[i]
			res.TD.Mean = detector.RoundNanos((sum / float64(n)))
			res.LastTD = detector.RoundNanos((max(lc.lastTD0+lc.lastScale*p, lc.lastFloor)))
		}
		if lc.sameS {
			sh := lc.lastScale * p
			res.TD.P50 = detector.RoundNanos((lc.tdRanks[0] + sh))
			res.TD.P99 = detector.RoundNanos((lc.tdRanks[1] + sh))
			res.TD.Max = detector.RoundNanos((lc.tdRanks[2] + sh))
		} else {
			if lc.quant == nil {
				lc.quant = lc.allPercentiles()
			}
			q := lc.quant[i]
			res.TD.P50 = detector.RoundNanos((q.p50))
			res.TD.P99 = detector.RoundNanos((q.p99))
			res.TD.Max = detector.RoundNanos((q.max))
		}
	}
	res.setRates()
	if lc.cells != nil {
		res.setCI(lc.cellsAt(i, p))
	}
	return res, nil
}

// setCells keeps what the per-point intervals need: the collector's
// per-cell buckets turned into suffix sums per cell, the base replay's
// cells, and per cell Σ td0_k and Σ scale_k.
func (lc *linearCurve) setCells(lin *linearCollector, cells *cellSeries, evCell []uint8) {
	b := len(lc.ps) + 1
	for c := range cells.grid.n {
		o := c * b
		for i := b - 2; i >= 0; i-- {
			lin.cCntU[o+i] += lin.cCntU[o+i+1]
			lin.cCntW[o+i] += lin.cCntW[o+i+1]
			lin.cSU[o+i] += lin.cSU[o+i+1]
			lin.cSUU[o+i] += lin.cSUU[o+i+1]
			lin.cSV[o+i] += lin.cSV[o+i+1]
			lin.cSVV[o+i] += lin.cSVV[o+i+1]
		}
	}
	lc.lin, lc.cells, lc.evCell = lin, cells, evCell
	if lc.cN != nil {
		return // fromSpill summed them
	}
	lc.cTD0, lc.cScale, lc.cN = make([]float64, cells.grid.n), make([]float64, cells.grid.n), make([]float64, cells.grid.n)
	for k, c := range evCell {
		lc.cTD0[c] += lc.td0[k]
		lc.cScale[c] += lc.scales[k]
		lc.cN[c]++
	}
}

// cellsAt returns the cells of query point p, the i-th (under a floor,
// their TD sums are floorCells[i], which at sets first).
func (lc *linearCurve) cellsAt(i int, p float64) *cellSeries {
	s := newCellSeries(lc.cells.grid)
	copy(s.span, lc.cells.span)
	l := lc.lin
	b := len(lc.ps) + 1
	for c := range s.grid.n {
		o := c*b + i + 1
		s.mist[c] = l.cCntU[o] - l.cCntW[o]
		s.susp[c] = max((l.cSUU[o]-p*l.cSU[o])-(l.cSVV[o]-p*l.cSV[o])+l.cConst[c], 0)
	}
	if lc.floor == nil {
		for c := range s.grid.n {
			s.tdSum[c] = lc.cTD0[c] + p*lc.cScale[c]
		}
	} else if lc.floorCells != nil { // nil without heartbeats
		copy(s.tdSum, lc.floorCells[i])
	}
	copy(s.tdN, lc.cN)
	return s
}
