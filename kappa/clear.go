package kappa

import "math"

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

// clearTest returns x, the predicted crossing of the band in the state st
// (bandCrossing's mid·Δ − base), ⌈x⌉, whether x is in the tests' reach
// (in: ceilIn's range, ⌈x⌉ ≤ lim), and whether the clear test with margin
// perWidth·(zhi − zlo) + fixed decides ⌈x⌉ (clear).
func (sb *singleBand) clearTest(st *bandState, perWidth, fixed float64) (x float64, e int64, in, clear bool) {
	x = (sb.k+st.s*sb.zmid)*st.delta - st.base
	e, in = ceilIn(x)
	if !in || e > int64(st.lim) {
		return x, 0, false, false
	}
	fr, m := float64(e)-x, perWidth*sb.width+fixed
	return x, e, true, fr >= m && fr <= 1-m
}
