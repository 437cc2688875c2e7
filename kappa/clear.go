package kappa

import (
	"math"
	"time"
)

// The clear test: a cheaper proof of the single-term test's usual case.
// With c_lo, c_hi, c_mid the exact real elapsed times (ns after T_last) at
// which z_k = (u − k)/s, at kappa's float u, equals zlo, zhi and zmid, the
// usual case (bandCrossing) holds at e0 = ⌈x⌉ when z_k(e0) ≥ zhi and
// z_k(e0 − 1) ≤ zlo, which follows from
//
//	e0 − x ≥ M  and  x − (e0 − 1) ≥ M,  M ≥ Δ·s·(zhi − zlo) + ε_x + η,
//
// where x = (k + s·zmid)·Δ − (T_last − EA_{ℓ+1}) is the float prediction,
// ε_x bounds |x − c_mid| and η the shift of kappa's u = fl(D/Δ) from
// D/Δ, in ns. Then e0 − c_hi ≥ (e0 − x) − ε_x − Δ·s·(zhi − zmid) ≥ η, so
// z_k(e0) ≥ zhi even at kappa's rounded u, and likewise c_lo − (e0 − 1) ≥
// η. The bounds, for k ≤ kmax, |s·zmid| ≤ 4 (s ≤ 1/4, |zmid| ≤ 9), |base|
// = |T_last − EA_{ℓ+1}| ≤ 2^51 (banded) and e0 ≤ 2^51: x is four roundings
// of terms at most Δ·(kmax + 4) and |base|, so ε_x ≤ 2^-51·Δ·(kmax + 8) +
// 2^-52·|x|, with |x| ≤ Δ·(kmax + 4) + |base|; D = T_last + e − EA_{ℓ+1}
// is exact (|D| ≤ 2^52) and its quotient rounds by at most 2^-53·|D|/Δ in
// u, 2^-53·(|x| + |base| + 1) ns; the difference e0 − x rounds by at most
// 2^-53 (exact from x ≥ 1/2 on, Sterbenz). clearMargin's
// M = Δ·s·W·(1 + 2^-50) + 2^-49·(Δ·(kmax + 8) + |base| + 1), W the
// band's width (zhi − zlo), covers them all, and its own rounding, with
// room. For σ/Δ = 0.1 and Δ = 100 ms M is about 10^-5 ns: the test
// declines about one crossing in 10^5, which the q test (oneInstant) then
// decides, as it decides every crossing where M is large.
//
// Where the crossing falls exactly on an instant (K = k + 1/2 at EA_{ℓ+1}
// + k·Δ, with Δ a whole number of ns), x lies within about Δ·s·W of an
// integer and the clear test declines: TestClearMarginIsNeeded shows that
// without its margin it would decide such crossings wrongly. The band then
// holds that one instant, and oneInstant decides the crossing with one
// evaluation of κ there, as the symmetric test's crossing of an integer K
// = m on EA_{ℓ+1} + (m − 1/2)·Δ (symmetricCrossings).

// clearMargin returns the parts of the margin M of the clear test in the
// state st for thresholds whose k is at most kmax: M = perWidth·(zhi − zlo)
// + fixed for a band from zlo to zhi.
func clearMargin(st *bandState, kmax float64) (perWidth, fixed float64) {
	return st.delta * st.s * (1 + 0x1p-50), 0x1p-49 * (st.delta*(kmax+8) + math.Abs(st.base) + 1)
}

// clearCrossings sets dst[i] to T_last + e of threshold i of ts where the
// clear test with margin perWidth·(zhi − zlo) + fixed decides its crossing e (κ(T_last) ≤ reach: a
// level above it is not reached at T_last), or else the band with at most
// one instant in it does (oneInstant: its usual case, or the crossing on
// an instant, with one evaluation of κ), and ok[i] to whether one did.
func (ts *Trackers) clearCrossings(st *bandState, reach, perWidth, fixed float64, dst []time.Duration, ok []bool) {
	s, invS, delta, base, lim, last := st.s, st.invS, st.delta, st.base, int64(st.lim), ts.d.last
	sbs := ts.sb
	dst, ok = dst[:len(sbs)], ok[:len(sbs)]
	clear(ok)
	for i := range sbs {
		b := &sbs[i]
		if !(b.level > reach) {
			continue
		}
		if !(b.need <= invS && invS < b.upTo) && !ts.pick(i, invS) {
			continue
		}
		x := (b.k+s*b.zmid)*delta - base // bandCrossing's mid·Δ − base
		e, in := ceilIn(x)
		if !in || e > lim {
			continue
		}
		if fr, m := float64(e)-x, perWidth*b.width+fixed; fr >= m && fr <= 1-m {
			dst[i], ok[i] = last+time.Duration(e), true
			continue
		}
		qlo, qhi, _ := b.edges(st)
		if c, in := ts.d.oneInstant(st, x, b.k, invS, qlo, qhi, b.level); in {
			dst[i], ok[i] = last+c, true
		}
	}
}

// symmetricCrossings sets dst[i] to T_last + e for each integer threshold
// i not yet done whose crossing e the symmetric test decides with at most
// one instant in its band (oneInstant), and done[i] then (κ(T_last) ≤
// reach). Its band's bound on φ(c_0) depends on the state only and serves
// every integer threshold.
func (ts *Trackers) symmetricCrossings(st *bandState, reach float64, dst []time.Duration, done []bool) {
	phi0 := -1.0 // not yet computed
	for _, i := range ts.ints {
		bs := &ts.trs[i].c.bands
		if done[i] || !(bs.k > reach) {
			continue
		}
		if phi0 < 0 {
			phi0 = st.phiLow()
		}
		h, ok := st.symmetricBand(bs, phi0)
		if !ok {
			continue
		}
		c := bs.k - 0.5
		if e, in := ts.d.oneInstant(st, c*st.delta-st.base, c, 1, -h, h, bs.k); in {
			dst[i], done[i] = ts.d.last+e, true
		}
	}
}

// pick chooses the band of threshold i at invS = 1/s (TrackAll set its
// bands); false when none applies.
func (ts *Trackers) pick(i int, invS float64) bool {
	b := &ts.sb[i]
	return b.level <= 0x1p20 && b.pick(&ts.trs[i].c.bands, invS)
}
