package kappa

import (
	"math"
	"time"
)

// Bands: deciding κ(t) ≥ K without evaluating κ. Let u be the float that
// kappa computes at an instant t (u = (t − EA_{ℓ+1})/Δ), s = σ/Δ ≤ 1/4,
// z_j = (u − j)/s, h = Σ_{j≥0} Φ(z_j) the exact sum at that u, and E the
// bound on |κ − h| (steepRise; at most five terms for s ≤ 1/4). h is
// non-decreasing in t, so if a coordinate q(t), non-decreasing in t, has
// a band [qlo, qhi] with h < K − E below qlo and h ≥ K + E from qhi on,
// and q is below the band at e − 1 and above it at e, then κ(e − 1) < K ≤
// κ(e), κ stays below K before (κ ≤ h + E) and reaches it for good at e
// (h − E keeps growing, see steepRise): e is the crossing ElapsedFor
// finds, whatever its search. An instant inside the band is decided by
// Level's own predicate, and the crossing stands when that predicate is
// false and then true across the band. Either test costs a few float
// operations per instant instead of the erfc of each term.
//
// The single-term test (K = k + r, k = ⌊K⌋, 0 < r < 1; q = z_k). When
// σ ≪ Δ, κ near its crossing is k ones, the term Φ(z_k), and terms within
// Φ's tails: with z_{k−1} = z_k + 1/s ≥ Z and z_{k+1} = z_k − 1/s ≤ −Z, h
// lies within B = 2·Q(Z) of k + Φ(z_k) (Q = 1 − Φ; the further terms are
// Φ's tails at steps of 1/s ≥ 4 beyond, below 10^-3·Q(Z) together). So h ≥
// K + E once Φ(z_k) ≥ r + E + B, and h < K − E while Φ(z_k) < r − E − B:
// the band of z_k depends on K alone and is found once per threshold, with
// 0.5·math.Erfc(−z/√2) within 2^-49 of Φ(z) (steepRise's error budget for
// a term, less z's own rounding). A few cuts Z trade the band's width
// (B) for the range of σ/Δ where the neighbours' bounds hold.
//
// The symmetric test (an integer K = m; q = v = u − (m − 1/2)). κ reaches
// m where the terms m − 1 and m meet: pairing the terms j = m − 1 − i and
// m + i (i = 0, …, m − 1), each pair sums to 1 + Φ(c_i + v/s) − Φ(c_i −
// v/s), c_i = (i + 1/2)/s, which has the sign of v, and the terms j ≥ 2m
// add R ∈ [0, 2·Q((m + 1/2 − |v|)/s)]. With w = |v|/s, the first pair's
// D(w) = Φ(c_0 + w) − Φ(c_0 − w) grows with w and is at least
// 2w·φ(c_0 + w), so h − m ≥ D(w) for v ≥ 0 and h − m ≤ R − D(w) for v < 0:
// with (m + 1/2 − |v|)/s ≥ 10 within the search's reach (R below
// 10^-23), the band is |v| < s·w_b, where 2w_b·φ(c_0 + w_b) ≥ E +
// 10^-18, w_b from one exponential per state. It is narrow where κ rises
// steeply across m (σ/Δ about 0.1 and above); where κ is flat there
// (σ ≪ Δ) it spans many nanoseconds and the test gives up.

// bandZ are the tail cuts Z of the single-term bands, from the narrowest
// band (smallest B) to the one that applies at the widest spread.
var bandZ = [...]float64{7.6, 6.6, 5.6}

// band is the single-term test of one threshold at one tail cut Z.
type band struct {
	need     float64 // the least Δ/σ at which it applies (+Inf: never)
	zlo, zhi float64 // h < K − E below zlo, h ≥ K + E from zhi on
	zmid     float64 // the predicted crossing
}

// bands holds the tests of one threshold.
type bands struct {
	set     bool
	k       float64 // ⌊K⌋
	integer bool    // K = k: the symmetric test
	err     float64 // E + 10^-18, for the symmetric test
	b       [len(bandZ)]band
}

// sMaxBand bounds s = σ/Δ for both tests: at most five terms in the sum,
// and the tails beyond the neighbours at steps of 1/s ≥ 4. bandReach is
// how many nanoseconds the tests search on either side of the prediction.
const (
	sMaxBand  = 0.25
	bandReach = 8
)

// newBands returns the tests of threshold level.
func newBands(level float64) bands {
	bs := bands{set: true, k: math.Floor(level)}
	r := level - bs.k // exact
	e := sumErr(math.Floor(18*sMaxBand+1e-6)+1, level)
	bs.integer, bs.err = r == 0, e+1e-18
	for i, z := range bandZ {
		bs.b[i] = band{need: math.Inf(1)}
		if level > 0x1p20 {
			continue
		}
		b := 2.01 * 0.5 * math.Erfc(z/math.Sqrt2) // 2·Q(Z), with room for erfc's rounding
		lo, hi := r-e-b-0x1p-48, r+e+b+0x1p-48    // 2^-48 > 2^-49 + the rounding of these sums
		if !(lo > 0 && hi < 1) {
			continue
		}
		zlo, okLo := zAt(lo, false)
		zhi, okHi := zAt(hi, true)
		if !okLo || !okHi {
			continue
		}
		need := z + zlo // z_{k+1} ≤ zlo − 1/s ≤ −Z
		if bs.k >= 1 {
			need = max(need, z-zhi) // z_{k−1} ≥ zhi + 1/s ≥ Z
		}
		bs.b[i] = band{need: need + 1e-9*(1+math.Abs(need)), zlo: zlo, zhi: zhi, zmid: zlo + (zhi-zlo)/2}
	}
	return bs
}

// zAt returns a float z with Φ̃(z) ≥ p (above) or Φ̃(z) ≤ p (below), Φ̃(z) =
// 0.5·math.Erfc(−z/√2), near Φ⁻¹(p); ok is false when there is none in
// float64's range of Φ.
func zAt(p float64, above bool) (float64, bool) {
	z := math.Sqrt2 * math.Erfinv(2*p-1)
	if math.IsNaN(z) || math.IsInf(z, 0) {
		return 0, false
	}
	done := func(z float64) bool {
		if v := 0.5 * math.Erfc(-z/math.Sqrt2); above {
			return v >= p
		} else {
			return v <= p
		}
	}
	step := 0x1p-45 * max(1, math.Abs(z))
	if !above {
		step = -step
	}
	for range 64 {
		if done(z) {
			return z, true
		}
		z += step
		step *= 2
	}
	return 0, false
}

// bandCrossing returns ElapsedFor(level) of the current state when a test
// of bs decides it (see above), or ok false when none applies or the
// crossing is not within a few nanoseconds of the prediction. κ(T_last) <
// level.
func (d *Detector) bandCrossing(bs *bands, level float64) (time.Duration, bool) {
	if !d.banded || level > 0x1p20 {
		return 0, false
	}
	if !bs.set {
		*bs = newBands(level)
	}
	// q = (u − c)·mult, u = float64(T_last + e − EA)·(1/Δ): within 2^-51·|u|
	// of kappa's u, then three roundings. The band [qlo, qhi] is widened by
	// a bound on that error for |u − c| ≤ 4 and |q| ≤ 16, and q is too far
	// from it to cross it beyond.
	var c, mult, qlo, qhi, mid float64 // mid: the predicted crossing's u
	st := d.bandState()
	if bs.integer {
		h, ok := st.symmetricBand(bs, st.phiLow())
		if !ok {
			return 0, false
		}
		c, mult, qlo, qhi, mid = bs.k-0.5, 1, -h, h, bs.k-0.5
	} else {
		i := 0
		for i < len(bs.b) && !(bs.b[i].need <= d.invS) {
			i++
		}
		if i == len(bs.b) {
			return 0, false
		}
		b := &bs.b[i]
		sb := singleBand{k: bs.k, zlo: b.zlo, zhi: b.zhi, zmid: b.zmid}
		c, mult = bs.k, d.invS
		qlo, qhi, mid = sb.edges(&st)
	}
	e0, inReach, usual := st.first(c, mult, qlo, qhi, mid)
	if !inReach {
		return 0, false
	}
	if usual {
		return e0, true
	}
	lo := e0 // the last instant below K
	for st.side(lo, c, mult, qlo, qhi) >= 0 {
		if lo--; lo < e0-bandReach {
			return 0, false
		}
	}
	cross := time.Duration(-1) // the first instant in the band at which κ ≥ K
	for e := lo + 1; e <= e0+bandReach; e++ {
		switch st.side(e, c, mult, qlo, qhi) {
		case 1:
			if cross < 0 {
				cross = e
			}
			return cross, true
		case 0:
			if d.reachedAt(e, level) {
				if cross < 0 {
					cross = e
				}
			} else if cross >= 0 {
				return 0, false // κ falls back below K inside the band
			}
		}
	}
	return 0, false
}

// bandState is what the tests read of a state: s = σ/Δ, 1/s, Δ, T_last −
// EA_{ℓ+1} (base as a float, off exact), 1/Δ, and emax − bandReach.
type bandState struct {
	s, invS, delta, base, invDelta float64
	off                            int64
	lim                            time.Duration
}

// bandState returns the state's bandState (of a banded state).
func (d *Detector) bandState() bandState {
	return bandState{s: d.s, invS: d.invS, delta: d.delta, base: d.base, invDelta: d.invDelta, off: d.off, lim: d.emax - bandReach}
}

// phiLow returns a lower bound on 0.999·φ(c_0), c_0 = 1/(2s), for the
// symmetric test (the 0.999 for the roundings of c_0, of φ and of the
// products, as bandCrossing's proof needs): φ(c_0) = e^{−y}/√(2π), y =
// c_0²/2, and e^{−y} ≥ 2^{−n} for any integer n ≥ y·log₂e. It takes n =
// ⌈y·1.4427⌉: 1.4427 exceeds log₂e by 3·10^-6 of it, far more than the two
// roundings of y (2^-52 each, relative), so n ≥ y·log₂e; and 2^{−n} >
// e^{−y}/2, so the band is at most twice as wide as with e^{−y} itself,
// without an exponential. 0 where 2^{−n} is below the normal floats (κ is
// flat across the integer there).
func (st *bandState) phiLow() float64 {
	c0 := 0.5 * st.invS
	t := c0 * c0 / 2 * 1.4427
	if !(t <= 1022) {
		return 0
	}
	n := uint64(math.Ceil(t))
	return 0.999 * math.Float64frombits((1023-n)<<52) / math.Sqrt(2*math.Pi)
}

// symmetricBand returns the half-width h of the symmetric test's band
// |v| < h of the integer threshold of bs in the state st (see above), with
// phi0 ≤ 0.999·φ(c_0) (phiLow), or ok false when the test does not apply.
func (st *bandState) symmetricBand(bs *bands, phi0 float64) (h float64, ok bool) {
	m := bs.k
	if (m+0.5-bandReach*st.invDelta)*st.invS < 10 {
		return 0, false // R may exceed 10^-18 within reach of the prediction
	}
	// w_b with 2w_b·φ(c_0 + w_b) ≥ E + 10^-18: φ(c_0 + w) ≥
	// φ(c_0)·(1 − c_0·w − w²) ≥ 0.999·φ(c_0) ≥ phi0 (1.003 for the
	// roundings of wb).
	c0 := 0.5 * st.invS
	wb := bs.err / (2 * phi0) * 1.003
	if !(c0*wb+wb*wb <= 1e-3) {
		return 0, false // κ is flat across m
	}
	return st.s*wb + 0x1p-49*(m+4), true
}

// first returns e0, the first instant past the predicted crossing mid (a
// value of u), and whether it is within the tests' reach (inReach) and is
// the crossing by the usual case of the test of coordinate (u − c)·mult and
// band [qlo, qhi] (usual, see usualAt).
func (st *bandState) first(c, mult, qlo, qhi, mid float64) (e0 time.Duration, inReach, usual bool) {
	e, ok := ceilIn(mid*st.delta - st.base)
	if !ok || time.Duration(e) > st.lim {
		return 0, false, false
	}
	return time.Duration(e), true, st.usualAt(e, c, mult, qlo, qhi)
}

// ceilIn returns ⌈x⌉ when it is in [1, 2^51], which holds exactly when 0 <
// x ≤ 2^51 (and then the conversions are exact); ok is false otherwise.
func ceilIn(x float64) (int64, bool) {
	if !(x > 0 && x <= 0x1p51) {
		return 0, false
	}
	e := int64(x)
	if float64(e) < x {
		e++
	}
	return e, true
}

// usualAt reports the usual case of a test at e: q(e) above the band
// [qlo, qhi] and q(e − 1) below it (or e = 1: κ(T_last) < K), which makes e
// the crossing.
func (st *bandState) usualAt(e int64, c, mult, qlo, qhi float64) bool {
	return st.qAt(e, c, mult) >= qhi && (e == 1 || st.qAt(e-1, c, mult) <= qlo)
}

// oneInstant returns the crossing of level (κ(T_last) < level) where the
// band [qlo, qhi] of a test of coordinate (u − c)·mult holds at most one
// instant j near x, the predicted crossing (ns after T_last): q(j − 1) at
// most qlo (or j − 1 = 0) and q(j + 1) at least qhi. Then κ < level up to
// j − 1 and κ ≥ level from j + 1 on (see above), so the crossing is j or
// j + 1, and Level's own predicate at j decides which where q(j) is in the
// band: the walk of bandCrossing, with the one evaluation of κ it would
// make. It is the usual case (e = j) without any. ok is false when the
// band is wider or x is out of reach.
func (d *Detector) oneInstant(st *bandState, x, c, mult, qlo, qhi, level float64) (time.Duration, bool) {
	e, in := ceilIn(x)
	if !in || e >= int64(st.lim) {
		return 0, false
	}
	j, qj := e, st.qAt(e, c, mult)
	if e > 1 {
		if q := st.qAt(e-1, c, mult); q > qlo {
			j, qj = e-1, q // the instant before x may be in the band
			if e > 2 && st.qAt(e-2, c, mult) > qlo {
				return 0, false
			}
		}
	}
	if st.qAt(j+1, c, mult) < qhi {
		return 0, false
	}
	if qj >= qhi || qj > qlo && d.reachedAt(time.Duration(j), level) {
		return time.Duration(j), true
	}
	return time.Duration(j + 1), true
}

// side returns −1 where κ < K (q(e) at most qlo, or e = 0: κ(T_last) <
// K), +1 where κ ≥ K (q(e) at least qhi), 0 inside the band.
func (st *bandState) side(e time.Duration, c, mult, qlo, qhi float64) int {
	switch q := st.qAt(int64(e), c, mult); {
	case e == 0 || q <= qlo:
		return -1
	case q >= qhi:
		return 1
	}
	return 0
}

// qAt returns q(e) = (u − c)·mult, u = float64(T_last + e −
// EA_{ℓ+1})·(1/Δ), the coordinate of a test. It is non-decreasing in e:
// every step rounds monotonically.
func (st *bandState) qAt(e int64, c, mult float64) float64 {
	return (float64(st.off+e)*st.invDelta - c) * mult
}

// singleBand is the single-term test one threshold K = k + r uses at the
// current σ/Δ: the band bs.b[i] of the first i whose need is at most 1/s,
// which stays the one while need ≤ 1/s < upTo (the least need of the bands
// before it).
type singleBand struct {
	level             float64 // K
	k, zlo, zhi, zmid float64
	width             float64 // zhi − zlo, rounded up
	need, upTo        float64
}

// pick sets sb to the band of bs that applies at invS = 1/s, as
// bandCrossing chooses it; false when none does (an integer K, K above
// 2^20, or a spread beyond every band's reach).
func (sb *singleBand) pick(bs *bands, invS float64) bool {
	if bs.integer {
		return false
	}
	upTo := math.Inf(1)
	for i := range bs.b {
		b := &bs.b[i]
		if b.need <= invS {
			*sb = singleBand{level: sb.level, k: bs.k, zlo: b.zlo, zhi: b.zhi, zmid: b.zmid,
				width: (b.zhi - b.zlo) * (1 + 0x1p-52), need: b.need, upTo: upTo}
			return true
		}
		upTo = min(upTo, b.need)
	}
	return false
}

// edges returns the band of the test's coordinate z_k = (u − k)/s in the
// state st, widened by a bound on that coordinate's rounding for |u − k| ≤
// 4 and |z_k| ≤ 16 (see bandCrossing), and the predicted crossing's u.
func (sb *singleBand) edges(st *bandState) (qlo, qhi, mid float64) {
	w := 0x1p-49 * ((sb.k+4)*st.invS + 17)
	return sb.zlo - w, sb.zhi + w, sb.k + st.s*sb.zmid
}
