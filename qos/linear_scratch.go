// The per-heartbeat storage of the linear families' one-pass sweeps, kept
// by a sweep worker from one such curve to the next.

package qos

// linearScratch is the per-heartbeat storage of one linear one-pass sweep
// (sweepLinear) of a stream in memory: the collector's c and s, the
// replay's delays and cells (about 25 bytes a heartbeat, which every such
// sweep takes), and the floors and the TD grid's lines, floors and cell
// indices (up to 34 bytes a heartbeat, which only floored curves and
// curves of varying scales take). One of SweepEach's workers keeps one
// from a linear curve to the next (a stream's linear curves come one after
// the other in its queue), so that those curves reuse it instead of
// allocating it again. So that a worker holds no more than its curve
// takes, the floors and the grid are let go after a curve that did not
// take them (endCurve), and the whole when the worker takes a task of
// another kind. The curves of one sweep use each slice for one thing
// only, and nothing of a sweep reads them once sweepLinear has returned
// its points.
type linearScratch struct {
	c, s, floors []float64
	delay        []int64
	evCell       []uint8
	lines        []tdLine
	lineFloors   []float64
	cellOf       []uint16
	// Whether the curve being swept took the floors, the grid, the
	// grid's floors.
	tookFloors, tookGrid, tookLineFloors bool
}

// endCurve lets go of the floors and of the grid's storage when the
// curve just swept did not take them.
func (sc *linearScratch) endCurve() {
	if !sc.tookFloors {
		sc.floors = nil
	}
	if !sc.tookGrid {
		sc.lines, sc.cellOf = nil, nil
	}
	if !sc.tookLineFloors {
		sc.lineFloors = nil
	}
	sc.tookFloors, sc.tookGrid, sc.tookLineFloors = false, false, false
}

// reuse returns *buf emptied, with room for n values: the array of *buf
// when it has, else a new one of capacity n that it keeps in *buf.
func reuse[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, 0, n)
	}
	return (*buf)[:0]
}

// keep stores in *buf the array of s, which grew from it by appends, for
// the next sweep.
func keep[T any](buf *[]T, s []T) {
	if cap(s) > cap(*buf) {
		*buf = s[:0]
	}
}
