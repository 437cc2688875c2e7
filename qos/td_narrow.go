package qos

import (
	"math"
	"slices"
	"sync"
)

// tdNarrowBytes is what a narrow point (newThresholdPass with narrow)
// keeps per evaluated heartbeat while its τ − A_k fit in a uint32: all
// below 2^32 ns (4.29 s), true of any threshold of a stream of heartbeats
// a few seconds apart at most.
const tdNarrowBytes = 4

// flushNarrow appends col (a column of flushTD's buffer: q's τ − A_k, each
// ≥ 0, of the latest rows) to q.narrow and reports true, or, when one of
// them is 2^32 or more, moves q's values so far to q.td (int64, from then
// on) and reports false: the caller then appends col to q.td. Either way
// no value is lost or changed.
func (q *thresholdPoint) flushNarrow(col []int64) bool {
	l := len(q.narrow)
	q.narrow = slices.Grow(q.narrow, len(col))[:l+len(col)]
	dst := q.narrow[l:]
	dst = dst[:len(col)]
	var or uint64
	for r, v := range col {
		dst[r] = uint32(v)
		or |= uint64(v)
	}
	if or <= math.MaxUint32 {
		q.vOr |= or
		return true
	}
	q.narrow = q.narrow[:l]
	q.td = widenTD(make([]int64, 0, cap(q.narrow)), q.narrow)
	q.narrow = nil
	q.vOr |= math.MaxUint32 // the values so far are below 2^32
	return false
}

// widenTD returns narrow's values as int64 in dst's storage (grown when
// too short).
func widenTD(dst []int64, narrow []uint32) []int64 {
	dst = slices.Grow(dst[:0], len(narrow))[:len(narrow)]
	for k, v := range narrow {
		dst[k] = int64(v)
	}
	return dst
}

// narrowPool keeps the memory of a pass's narrow points (one block of
// hint values per point) from one pass to the next: a sweep makes a pass
// per chunk of every stream, and a fresh block of tens of megabytes is
// zeroed by the allocator and then written again.
var narrowPool sync.Pool // of *[]uint32

// getNarrowMem returns a block of at least n values from narrowPool, or a
// new one.
func getNarrowMem(n int) *[]uint32 {
	if b, ok := narrowPool.Get().(*[]uint32); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]uint32, n)
	return &b
}
