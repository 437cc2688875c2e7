// The per-heartbeat storage of the linear families' one-pass sweeps, kept
// by a sweep worker from one such curve to the next.

package qos

// linearScratch is the per-heartbeat storage that every linear one-pass
// sweep (sweepLinear) of a stream in memory takes at the stream's length:
// the collector's c and s and the replay's delays and cells, about 25
// bytes a heartbeat. One of SweepEach's workers keeps one from a linear
// curve to the next (a stream's linear curves come one after the other in
// its queue), so that those curves reuse it instead of allocating it
// again, and lets it go when it takes a task of another kind, so that it
// holds no more than the curve it sweeps takes. (The floors and the TD
// grid, which only some curves take, after the replay, are allocated per
// curve: a worker that kept them would hold them through the next curve's
// replay too.) The curves of one sweep use each slice for one thing only,
// and nothing of a sweep reads them once sweepLinear has returned its
// points.
type linearScratch struct {
	c, s   []float64
	delay  []int64
	evCell []uint8
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
