package kappa

import (
	"math"
	"time"
)

// Trackers are Trackers of several thresholds of one Detector, read
// together at every state, as a threshold sweep does (package qos).
// FreshnessPoints first tries the single-term band of each threshold
// (band.go), by the clear test and then by the q test of a band holding
// at most one instant (clear.go), and the symmetric test of each integer
// threshold the same way, with the state's quantities read once for all of
// them, and steps to the threshold's Tracker where none decides.
//
// The thresholds whose single-term band applies stay the same while σ/Δ
// stays within the range of their bands: the Trackers group them for that
// range (rows), and the clear test runs over the rows in one tight loop
// with the checks that hold for every row made once per state.
type Trackers struct {
	d     *Detector
	trs   []Tracker
	sb    []singleBand
	kmax  float64 // the greatest k of a single-term band (clear.go)
	least float64 // the least threshold

	grp      group
	declined []int // the rows the clear loop left, this state
}

// group is the grouping of the thresholds at a range [lo, hi) of Δ/σ: rows
// holds those whose single-term band (the one in sb) applies there, rest
// the others, in threshold order.
type group struct {
	rows     []clearRow
	rest     []int
	lo, hi   float64
	kLo, kHi float64 // the least and greatest k of the rows
	zLo, zHi float64 // the least and greatest zmid of the rows
	least    float64 // the least threshold among the rows
}

// clearRow is what the clear loop reads of a threshold: its band's k,
// zmid and width (singleBand's), and its index.
type clearRow struct {
	k, zmid, width float64
	i              int
}

// TrackAll returns the Trackers of thresholds ks; ok is false when one of
// them is not finite and positive.
func (d *Detector) TrackAll(ks []float64) (*Trackers, bool) {
	ts := &Trackers{d: d, trs: make([]Tracker, len(ks)), sb: make([]singleBand, len(ks))}
	for i, k := range ks {
		tr, ok := d.Track(k)
		if !ok {
			return nil, false
		}
		ts.trs[i] = *tr
		ts.sb[i].level = k
		if i == 0 || k < ts.least {
			ts.least = k
		}
		if k > 0x1p20 {
			continue // no band
		}
		bs := &ts.trs[i].c.bands
		*bs = newBands(k)
		for _, b := range bs.b {
			if !bs.integer && !math.IsInf(b.need, 1) {
				ts.kmax = max(ts.kmax, bs.k)
			}
		}
	}
	return ts, true
}

// FreshnessPoints sets dst[i] to FreshnessPointAt(ks[i]) of the
// Detector's current state for each threshold of TrackAll (dst must be at
// least that long); ok is false, and dst untouched, before the first
// heartbeat.
func (ts *Trackers) FreshnessPoints(dst []time.Duration) bool {
	if !ts.d.seen {
		return false
	}
	dst = dst[:len(ts.trs)]
	d := ts.d
	if !d.banded {
		for i := range ts.trs {
			dst[i] = ts.trs[i].point()
		}
		return true
	}
	st := d.bandState()
	if !d.k0ok && ts.least <= d.k0max {
		d.kappaLast() // needed by the thresholds at most k0max (reachedAtLast)
	}
	reach := d.k0max // κ(T_last) ≤ reach: a level above it is not reached at T_last
	if d.k0ok {
		reach = d.k0
	}
	if g := &ts.grp; !(g.lo <= st.invS && st.invS < g.hi*regroupSlack) {
		ts.regroup(st.invS)
	}
	perWidth, fixed := clearMargin(&st, ts.kmax)
	ts.declined = ts.clearRows(&st, reach, perWidth, fixed, dst, ts.declined[:0])
	for _, i := range ts.declined {
		dst[i] = ts.single(&st, i, reach, perWidth, fixed)
	}
	ts.others(&st, reach, dst)
	return true
}

// regroupSlack: a band holds for every 1/s from its need on, so the rows
// stay right for any 1/s ≥ lo; past hi a narrower band, or one for a
// threshold in rest, would merely serve better. FreshnessPoints regroups
// there only once 1/s exceeds hi by this factor, so that σ/Δ wavering
// about a band's reach (as on fdreplay's traces, σ/Δ ≈ 0.11 about the
// cuts' 1/9 … 1/7.6) does not regroup at every state.
const regroupSlack = 1 + 1.0/16

// regroup groups the thresholds at invS = 1/s (see group): the range is
// where every row's band stays the one that applies (singleBand.pick: need
// ≤ invS < upTo) and no other threshold's band starts to apply (below the
// least need of its bands, all above invS).
func (ts *Trackers) regroup(invS float64) {
	g := &ts.grp
	*g = group{rows: g.rows[:0], rest: g.rest[:0], lo: 0, hi: math.Inf(1),
		kLo: math.Inf(1), kHi: math.Inf(-1), zLo: math.Inf(1), zHi: math.Inf(-1), least: math.Inf(1)}
	for i := range ts.trs {
		sb, bs := &ts.sb[i], &ts.trs[i].c.bands
		if sb.level > 0x1p20 || !sb.pick(bs, invS) {
			g.rest = append(g.rest, i)
			if sb.level <= 0x1p20 && !bs.integer {
				for _, b := range bs.b {
					g.hi = min(g.hi, b.need)
				}
			}
			continue
		}
		g.rows = append(g.rows, clearRow{k: sb.k, zmid: sb.zmid, width: sb.width, i: i})
		g.lo, g.hi = max(g.lo, sb.need), min(g.hi, sb.upTo)
		g.kLo, g.kHi = min(g.kLo, sb.k), max(g.kHi, sb.k)
		g.zLo, g.zHi = min(g.zLo, sb.zmid), max(g.zHi, sb.zmid)
		g.least = min(g.least, sb.level)
	}
}

// clearRows sets dst[i] for each row i whose crossing the clear test with
// margin perWidth·width + fixed decides (clearMargin), and returns the
// other rows appended to declined.
//
// The checks made once: every row's level is above reach (κ(T_last) <
// level) when the least is, and every row's prediction x = (k +
// s·zmid)·Δ − base lies in [xlo, xhi], the same expression at the least
// and the greatest k and zmid, because each of its roundings is monotone
// in its operands (s, Δ > 0). So 0 < xlo and xhi ≤ min(2^51, lim) put
// every x in ceilIn's range and its ⌈x⌉ at most lim (an integer), as
// single checks row by row. (Where the clear test decides a level above
// κ(T_last), x > 0 holds anyway, and x ≤ 2^51 too: its margin is below 1/2
// only for Δ·(kmax + 8) + |base| < 2^48. x ≤ lim is the check that
// matters: TestTrackersAtTheEndOfTime.)
func (ts *Trackers) clearRows(st *bandState, reach, perWidth, fixed float64, dst []time.Duration, declined []int) []int {
	g := &ts.grp
	s, delta, base := st.s, st.delta, st.base
	xlo := (g.kLo+s*g.zLo)*delta - base
	xhi := (g.kHi+s*g.zHi)*delta - base
	if !(reach < g.least && xlo > 0 && xhi <= min(0x1p51, float64(st.lim))) {
		for _, r := range g.rows {
			declined = append(declined, r.i)
		}
		return declined
	}
	last := ts.d.last
	for _, r := range g.rows {
		x := (r.k+s*r.zmid)*delta - base // bandCrossing's mid·Δ − base
		e := int64(x)
		if float64(e) < x {
			e++
		}
		if fr, m := float64(e)-x, perWidth*r.width+fixed; fr >= m && fr <= 1-m {
			dst[r.i] = last + time.Duration(e)
		} else {
			declined = append(declined, r.i)
		}
	}
	return declined
}

// single returns the freshness point of row i: by the clear test with
// margin perWidth·(zhi − zlo) + fixed, else by the band with at most one
// instant in it (oneInstant: its usual case, or the crossing on an
// instant, with one evaluation of κ), else by its Tracker.
func (ts *Trackers) single(st *bandState, i int, reach, perWidth, fixed float64) time.Duration {
	b := &ts.sb[i]
	if b.level > reach {
		x, e, in, clear := b.clearTest(st, perWidth, fixed)
		if clear {
			return ts.d.last + time.Duration(e)
		}
		if in {
			qlo, qhi, _ := b.edges(st)
			if c, ok := ts.d.oneInstant(st, x, b.k, st.invS, qlo, qhi, b.level); ok {
				return ts.d.last + c
			}
		}
	}
	return ts.trs[i].point()
}

// others sets dst[i] for the thresholds that are not rows: an integer
// threshold by the symmetric test where it holds at most one instant in
// its band (its bound on φ(c_0) depends on the state only and serves every
// integer threshold), else by its Tracker.
func (ts *Trackers) others(st *bandState, reach float64, dst []time.Duration) {
	phi0 := -1.0 // not yet computed
	for _, i := range ts.grp.rest {
		if bs := &ts.trs[i].c.bands; bs.integer && bs.k > reach {
			if phi0 < 0 {
				phi0 = st.phiLow()
			}
			if h, ok := st.symmetricBand(bs, phi0); ok {
				c := bs.k - 0.5
				if e, in := ts.d.oneInstant(st, c*st.delta-st.base, c, 1, -h, h, bs.k); in {
					dst[i] = ts.d.last + e
					continue
				}
			}
		}
		dst[i] = ts.trs[i].point() // bandCrossing's walk, or a search
	}
}
