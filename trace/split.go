package trace

import (
	"cmp"
	"slices"
	"strconv"
)

// Stream is the records of one sender, in arrival order.
type Stream struct {
	Sender  string
	Records []Record
}

// Split groups records by sender. Each stream keeps the records' relative
// order, then is stably sorted by arrival time when it is not already in
// arrival order (records without arrival time keep their position relative
// to each other and sort as arrival 0, so a stream with no arrival times at
// all keeps file order). Streams are ordered by sender id, numerically when
// both ids are decimal integers ("2" before "10"), else lexically.
func Split(recs []Record) []Stream {
	idx := make(map[string]int)
	var out []Stream
	for _, r := range recs {
		i, ok := idx[r.Sender]
		if !ok {
			i = len(out)
			idx[r.Sender] = i
			out = append(out, Stream{Sender: r.Sender})
		}
		out[i].Records = append(out[i].Records, r)
	}
	for i := range out {
		if !slices.IsSortedFunc(out[i].Records, byArrival) {
			slices.SortStableFunc(out[i].Records, byArrival)
		}
	}
	slices.SortFunc(out, func(a, b Stream) int { return CompareSenders(a.Sender, b.Sender) })
	return out
}

// CompareSenders orders sender ids: numerically when both are decimal
// integers, else lexically; a numeric id sorts before a non-numeric one.
func CompareSenders(a, b string) int {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		return cmp.Compare(na, nb)
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

// Merge combines streams into one sequence sorted by arrival time; records
// with equal arrival times keep the order of their streams (stable). It is
// the inverse of Split for records that all have arrival times.
func Merge(streams ...[]Record) []Record {
	n := 0
	for _, s := range streams {
		n += len(s)
	}
	out := make([]Record, 0, n)
	for _, s := range streams {
		out = append(out, s...)
	}
	slices.SortStableFunc(out, byArrival)
	return out
}

// byArrival orders records by arrival time (for a stable sort).
func byArrival(a, b Record) int { return cmp.Compare(a.Arrival, b.Arrival) }
