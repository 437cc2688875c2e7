package qos

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// maxCells is the number of time cells a stream is cut into for the
// confidence intervals (see docs/algorithms.md, “Confidence intervals for
// TD, MR and QAP”): enough for the block-length rule and the resampling to
// work with, few enough that a sweep keeps a small table per point.
const maxCells = 128

// cellGrid cuts the monitor's time from the first arrival of a stream to
// its last into n cells of equal width. Every replay of one stream uses
// the same grid, so that the cells of two settings cover the same time and
// can be compared pairwise.
type cellGrid struct {
	origin time.Duration
	width  time.Duration
	n      int
}

// newCellGrid returns the grid of a stream in arrival order (the zero grid,
// n = 0, for an empty stream).
func newCellGrid(src Source) cellGrid {
	if src.Len() == 0 {
		return cellGrid{}
	}
	first, last := src.Bounds()
	span := uint64(last) - uint64(first) // arrival order: last ≥ first
	w := span/maxCells + 1
	return cellGrid{origin: first, width: time.Duration(w), n: maxCells}
}

// cell returns the index of the cell holding t, clamped to the grid.
func (g cellGrid) cell(t time.Duration) int {
	if g.n == 0 || t <= g.origin {
		return 0
	}
	c := int((uint64(t) - uint64(g.origin)) / uint64(g.width))
	return min(c, g.n-1)
}

// cellSeries holds, per cell of a grid, what the QoS of one setting is made
// of: observed time, mistakes, suspected time (ns), the sum of TD_k (ns)
// and the number of evaluated heartbeats. A mistake and its suspected time
// belong to the cell where the gap between two arrivals that holds them
// starts, and an evaluated heartbeat to the cell of its arrival, so the
// cells add up to the Result's Span, Mistakes, Suspected and TD mean.
type cellSeries struct {
	grid  cellGrid
	span  []float64
	mist  []float64
	susp  []float64
	tdSum []float64
	tdN   []float64
}

func newCellSeries(g cellGrid) *cellSeries {
	buf := make([]float64, 5*g.n)
	return &cellSeries{grid: g,
		span: buf[:g.n:g.n], mist: buf[g.n : 2*g.n : 2*g.n], susp: buf[2*g.n : 3*g.n : 3*g.n],
		tdSum: buf[3*g.n : 4*g.n : 4*g.n], tdN: buf[4*g.n:]}
}

// clone returns a copy sharing nothing with s.
func (s *cellSeries) clone() *cellSeries {
	c := newCellSeries(s.grid)
	copy(c.span, s.span)
	copy(c.mist, s.mist)
	copy(c.susp, s.susp)
	copy(c.tdSum, s.tdSum)
	copy(c.tdN, s.tdN)
	return c
}

// setSpan fills span with the gaps between consecutive arrivals of src
// from start (the first evaluated arrival) on, each in the cell where it
// starts; they add up to the last arrival minus start.
func (s *cellSeries) setSpan(src Source, start time.Duration) error {
	clear(s.span)
	if hbs, ok := src.(sliceSource); ok && s.spanSorted(hbs, start) {
		return nil
	}
	seq, done := src.Pass()
	first := true
	var a time.Duration
	for hb := range seq {
		if !first && a >= start {
			s.span[s.grid.cell(a)] += float64(hb.Arrival - a)
		}
		a, first = hb.Arrival, false
	}
	return done()
}

// spanSorted sets span as setSpan would from hbs, in arrival order, by
// binary search: the gaps starting in one cell are consecutive and add up
// to the arrival after the last of them minus the first. setSpan adds
// them in float64 one by one, from 0; each partial sum is an integer at
// most the cell's total, so while the totals are below 2^53 ns (104 days
// from start to the last arrival) the additions are exact and equal one
// subtraction. It reports false, having set nothing, past that.
func (s *cellSeries) spanSorted(hbs sliceSource, start time.Duration) bool {
	last := len(hbs) - 1 // the gaps start at j in [from, last)
	from := sort.Search(len(hbs), func(i int) bool { return hbs[i].Arrival >= start })
	if from >= last {
		return true
	}
	if uint64(hbs[last].Arrival)-uint64(hbs[from].Arrival) >= 1<<53 {
		return false
	}
	for j := from; j < last; {
		c := s.grid.cell(hbs[j].Arrival)
		h := j + 1 + sort.Search(last-j-1, func(i int) bool { return s.grid.cell(hbs[j+1+i].Arrival) != c })
		s.span[c] += float64(hbs[h].Arrival - hbs[j].Arrival)
		j = h
	}
	return true
}

// spanMemo gives the replays of one stream its span per cell from each
// start (setSpan) from one pass per distinct start: the points of a sweep
// mostly share their start, and a pass over a spooled stream reads it from
// disk.
type spanMemo struct {
	mu      sync.Mutex
	src     Source
	byStart map[time.Duration][]float64
}

func newSpanMemo(src Source) *spanMemo {
	return &spanMemo{src: src, byStart: map[time.Duration][]float64{}}
}

// fill sets s.span as s.setSpan(src, start) would.
func (m *spanMemo) fill(s *cellSeries, start time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.byStart[start]; ok && len(v) == len(s.span) {
		copy(s.span, v)
		return nil
	}
	if err := s.setSpan(m.src, start); err != nil {
		return err
	}
	m.byStart[start] = slices.Clone(s.span)
	return nil
}

// setTD fills tdSum and tdN from td, the TD_k of the evaluated heartbeats
// in order, and cells, the cell of each.
func (s *cellSeries) setTD(td []int64, cells []uint8) {
	clear(s.tdSum)
	clear(s.tdN)
	for k, v := range td {
		c := cells[k]
		s.tdSum[c] += float64(v)
		s.tdN[c]++
	}
}
