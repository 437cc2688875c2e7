package trace

import (
	"cmp"
	"slices"
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
// all keeps file order). Streams are ordered by sender id in natural order
// (CompareSenders: "2" before "10", "p2" before "p10").
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

// CompareSenders orders sender ids in natural order: runs of decimal
// digits compare as numbers, of any length ("p2" before "p10", "9" before
// "10" and "18446744073709551616" before "99999999999999999999"), runs
// equal as numbers but written differently ("p02", "p2") by their text,
// and the rest byte by byte (so an id beginning with a digit comes before
// one beginning with a letter). It is the one order of fdreplay's streams:
// its printed tables, CSV, JSON and HTML report.
func CompareSenders(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			// Without leading zeros, the longer run is the larger number.
			na, nb := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// trimZeros drops the leading zeros of a run of digits, keeping one digit.
func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
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
