// The TD percentiles of SFD's per-margin replays, read from the quiet blocks' shared offsets.

package qos

import (
	"math"
	"slices"
	"time"
)

// sfdRanksMin is the least number of TD_k whose percentiles a margin's
// replay reads with quietRanks (below it, selection among the values costs
// little); a variable so that tests use short streams.
var sfdRanksMin = 1 << 14

// sfdQuiet is what a margin's replay (sfdSchedule.replay) records of its
// blocks for quietRanks: which went through the quiet path, with which
// margin in force.
type sfdQuiet struct {
	quiet []bool
	sm    []time.Duration
}

// sfdRankBufs is quietRanks' working space, kept by the schedule for the
// replays of all its margins: the other blocks' w_j and TD_k (lw, lt), and
// the copies rankAt narrows down (kw, kt). Each grows to the most values
// of a margin's other blocks, a quarter of the stream at most.
type sfdRankBufs struct {
	lw, lt, kw, kt []int64
}

// quietRanks returns the nearest-rank p50 and p99 of the TD_k in td
// (the replay's, of least and greatest values mn and mx), as tdStatsOf
// finds them, without reading most of them. In a quiet block TD_j = w_j +
// SM (sfdSchedule.w), and most quiet blocks share one margin SM* (the
// control rule changes it rarely): with the schedule's w sorted once for
// every margin (sortedW), the number of TD_k ≤ x is the number of w ≤
// x − SM*, less those of the other blocks, plus their own TD_k ≤ x, and
// rankAt finds each rank from these counts. ok is false where that does
// not apply or pay: the other blocks hold more than a quarter of the
// values, x − SM* could overflow, or rankAt gives up.
func (sch *sfdSchedule) quietRanks(td []int64, q *sfdQuiet, mn, mx int64) (p50, p99 int64, ok bool) {
	n := len(td)
	const lim = 1 << 61
	if n < sfdRanksMin || mn < -lim || mx > lim {
		return 0, 0, false
	}
	// SM*: the margin of the most quiet values (Boyer and Moore's
	// majority vote, weighted; any choice is exact).
	var star time.Duration
	votes := 0
	for b, quiet := range q.quiet {
		w := int(sch.ev[b+1] - sch.ev[b])
		switch {
		case !quiet:
		case q.sm[b] == star:
			votes += w
		case votes >= w:
			votes -= w
		default:
			star, votes = q.sm[b], w-votes
		}
	}
	if star < 0 || star > lim {
		return 0, 0, false
	}
	other := func(b int) bool { return !q.quiet[b] || q.sm[b] != star }
	loud := 0
	for b := range q.quiet {
		if other(b) {
			loud += int(sch.ev[b+1] - sch.ev[b])
		}
	}
	if 4*loud > n {
		return 0, 0, false
	}
	if sch.sortedW == nil {
		sch.sortedW = slices.Clone(sch.w)
		sortInt64s(sch.sortedW)
	}
	// The other blocks' w_j and TD_k.
	bufs := &sch.rankBufs
	lw, lt := slices.Grow(bufs.lw[:0], loud), slices.Grow(bufs.lt[:0], loud)
	for b := range q.quiet {
		if other(b) {
			lw = append(lw, sch.w[sch.ev[b]:sch.ev[b+1]]...)
			lt = append(lt, td[sch.ev[b]:sch.ev[b+1]]...)
		}
	}
	bufs.lw, bufs.lt = lw, lt
	var ranks [2]int64
	for i, r := range [2]int{rank(0.50, n), rank(0.99, n)} {
		if ranks[i], ok = sch.rankAt(lw, lt, int64(star), r, mn, mx); !ok {
			return 0, 0, false
		}
	}
	return ranks[0], ranks[1], true
}

// rankAt returns the value x* of 0-based rank r among the TD_k of a
// margin's replay, of least and greatest values mn and mx, whose quiet
// blocks of margin sm hold w_j + sm and whose other blocks hold the w_j
// lw0 and the TD_k lt0. With A(x) the number of TD_k ≤ x (x* is the least
// x with A(x) > r) and C(y) that of all w ≤ y (sortedW), A(x) = C(x − sm)
// − bW − #(lw ≤ x − sm) + bT + #(lt ≤ x) for x in [lo, hi], where bW and bT
// count the other blocks' w_j below lo − sm and TD_k below lo, and lw and
// lt keep those up to hi − sm and hi. Since the two counts lie in [0,
// |lw|] and [0, |lt|], C alone narrows [lo, hi] around x*, which drops
// values from lw and lt, which narrows [lo, hi] again; once few remain
// they are sorted and a binary search over x finds x*. ok is false when
// many remain (the other blocks' TD_k far from w_j + sm, as where
// mistakes abound).
func (sch *sfdSchedule) rankAt(lw0, lt0 []int64, sm int64, r int, mn, mx int64) (x int64, ok bool) {
	w := sch.sortedW
	n := len(w)
	lo, hi := mn, mx // A(mx) = n > r
	bufs := &sch.rankBufs
	bufs.kw, bufs.kt = append(bufs.kw[:0], lw0...), append(bufs.kt[:0], lt0...)
	lw, lt := bufs.kw, bufs.kt
	var bW, bT int
	for {
		// x* − sm ≥ w[i] with C(w[i]) > i = r + bW − bT − |lt|; and
		// A(w[j] + sm) > r with j = r + bW + |lw| − bT.
		if i := r + bW - bT - len(lt); i >= 0 && i < n {
			lo = min(max(lo, w[i]+sm), hi)
		}
		if j := r + bW + len(lw) - bT; j >= 0 && j < n {
			hi = max(min(hi, w[j]+sm), lo)
		}
		kw, kt := len(lw), len(lt)
		lw, bW = keepIn(lw, lo-sm, hi-sm, bW)
		lt, bT = keepIn(lt, lo, hi, bT)
		if len(lw)+len(lt) <= 32 || len(lw)+len(lt) == kw+kt {
			break
		}
	}
	if len(lw)+len(lt) > 1024 {
		return 0, false
	}
	slices.Sort(lw)
	slices.Sort(lt)
	atMost := func(x int64) int {
		return upperBound(w, x-sm) - bW - upperBound(lw, x-sm) + bT + upperBound(lt, x)
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if atMost(mid) > r {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}

// keepIn keeps, in place, the values of s in [lo, hi], and returns them
// with below plus the number of those under lo.
func keepIn(s []int64, lo, hi int64, below int) ([]int64, int) {
	k := 0
	for _, v := range s {
		if v < lo {
			below++
		} else if v <= hi {
			s[k] = v
			k++
		}
	}
	return s[:k], below
}

// sortInt64s sorts s in increasing order: a least-significant-digit radix
// sort, a byte a pass, which skips the bytes that all values share.
func sortInt64s(s []int64) {
	n := len(s)
	if n < 1<<10 {
		slices.Sort(s)
		return
	}
	key := func(v int64, d int) byte { return byte((uint64(v) ^ 1<<63) >> (8 * d)) }
	var counts [8][256]int
	for _, v := range s {
		for d := range 8 {
			counts[d][key(v, d)]++
		}
	}
	src, dst := s, make([]int64, n)
	for d := range 8 {
		c := &counts[d]
		if c[key(src[0], d)] == n {
			continue
		}
		var at [256]int
		pos := 0
		for i, k := range c {
			at[i] = pos
			pos += k
		}
		for _, v := range src {
			b := key(v, d)
			dst[at[b]] = v
			at[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

// upperBound returns the number of values of the sorted s that are at most
// x.
func upperBound(s []int64, x int64) int {
	i, _ := slices.BinarySearchFunc(s, x, func(v, x int64) int {
		if v <= x {
			return -1
		}
		return 1
	})
	return i
}

// tdStatsQuiet is tdStatsOf(td, sum, mn, mx) for a margin's replay, with
// its ranks from quietRanks where it applies.
func (sch *sfdSchedule) tdStatsQuiet(td []int64, q *sfdQuiet, acc tdAcc) (TDStats, time.Duration) {
	p50, p99, ok := sch.quietRanks(td, q, acc.mn, acc.mx)
	if !ok {
		return acc.stats(td)
	}
	n := len(td)
	st := TDStats{Mean: time.Duration(math.Round(acc.sum / float64(n))), Max: time.Duration(acc.mx), P50: time.Duration(p50), P99: time.Duration(p99)}
	return st, time.Duration(td[n-1])
}
