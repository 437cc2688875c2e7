package kappa

import (
	"math"
	"time"
)

// The symmetric pair: an integer threshold m = ℓ₀ + 1 on its instant.
// Where κ's sum at an instant has two terms, j = ℓ₀ and ℓ₀ + 1, at u = ℓ₀ +
// 1/2 exactly (the crossing of K = m on EA_{ℓ+1} + (m − 1/2)·Δ, Δ even),
// sum computes z = ±fl(0.5/s), so both terms take the same float w =
// fl(fl(0.5/s)/√2), with opposite signs, and
//
//	g = fl(F + B),  F = fl(ℓ₀ + A),  A = 0.5·erfc(−w),  B = 0.5·erfc(w)
//
// (A and B as computed). In exact arithmetic erfc(−w) + erfc(w) = 2, so
// with math.Erfc within 4 units in the last place of its result (the
// budget steepRise's proof takes: erfc(−w) ∈ [1, 2), erfc(w) ∈ (0, 1]),
// |B − (1 − A)| ≤ δ = 2^-51 + 2^-52. Let m⁻ be the float below m and h
// the midpoint between them: g ≥ m exactly when F + B ≥ h (a tie rounds
// to m, whose last bit is 0), that is B ≥ D = (m − F) − (m − m⁻)/2, both
// steps exact (m − F ≤ 1/2 by Sterbenz, then a multiple of half an ulp
// of m⁻). With r = (1 − A) − D, also exact (multiples of 2^-53 below 1),
// r ≥ δ makes B ≥ D without computing B: one erfc instead of two. r is
// F's rounding error plus (m − m⁻)/2, so this decides about half of the
// states for m from 9 to 16, and never for m = 1.

// pairErr is δ above.
const pairErr = 0x1p-51 + 0x1p-52

// reachedAt reports κ(T_last + e) ≥ level as kappa computes it (e ≤
// emax), with one erfc instead of two where the symmetric pair above
// decides it, and otherwise adding sum's terms only until the sum reaches
// level: every term 0.5·math.Erfc(·) is at least 0 and rounding to nearest
// is monotone, so each partial sum of sum's loop is at most the next one,
// and a partial sum at least level makes the whole one so. (K = 1/2 on
// EA_{ℓ+1} is reached by the first term, 0.5·erfc(0), whatever the tail
// terms beyond it.)
func (d *Detector) reachedAt(e time.Duration, level float64) bool {
	t := d.last + e
	u := diff(t, d.ea) / d.delta
	if d.step || d.s > sMax || u > uMax {
		return d.kappa(t) >= level
	}
	s := d.s
	hi := math.Floor(u + zFull*s)
	lo := max(0, math.Ceil(u-zFull*s))
	if hi == lo+1 && u-lo == 0.5 && level == hi {
		return pairReaches(lo, 0.5/s)
	}
	if hi < 0 {
		return 0 >= level
	}
	g := lo // sum's loop, stopped once g reaches level
	for j := lo; j <= hi && g < level; j++ {
		z := (u - j) / s
		g += 0.5 * math.Erfc(-z/math.Sqrt2)
	}
	return g >= level
}

// pairReaches reports fl(fl(lo + A) + B) ≥ lo + 1, A and B the terms of
// z = ±z0 as sum computes them (see above).
func pairReaches(lo, z0 float64) bool {
	a := 0.5 * math.Erfc(-z0/math.Sqrt2)
	f, m := lo+a, lo+1
	if f >= m {
		return true // B ≥ 0
	}
	d := (m - f) - (m-math.Nextafter(m, 0))/2
	if (1-a)-d >= pairErr {
		return true
	}
	return f+0.5*math.Erfc(z0/math.Sqrt2) >= m
}
