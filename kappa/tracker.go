package kappa

import (
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Tracker follows the freshness point the Detector it was made from would
// have with another threshold K, state after state: FreshnessPoint returns
// exactly FreshnessPointAt(K), computed from the crossing of the previous
// state instead of from scratch. It is what a threshold sweep uses (one
// Detector, one Tracker per threshold; package qos).
//
// Where σ ≤ Δ/4 and κ rises steeply across K, the bands of the threshold
// (band.go, computed once per Tracker) decide the crossing from (t −
// EA_{ℓ+1})/Δ with a few float operations. Elsewhere, with EA_{ℓ+1} as
// origin the crossing u (in units of Δ) depends only on s = σ/Δ. For s < 0.2 it sits on the term i with u ≈ i + s·z, so the
// previous state's crossing, rescaled by the change of s, predicts the new
// one within a few nanoseconds; near a half-integer (an integer K, where
// the terms i and i + 1 meet at u = i + 1/2 whatever s) the previous
// crossing itself does; for a wider spread, the secant in s through the two
// previous crossings. A search on the nanosecond grid with Level's own
// predicate, started there, finds a crossing e (κ(T_last + e) ≥ K >
// κ(T_last + e − 1)). Where κ rises steeply across e (by steepRise: at
// least 2^12 units in the last place of K in that nanosecond, or five times
// the proven bound on the rounding of κ's sum where that is smaller),
// rounding cannot make κ cross K at any other instant, so e is the crossing
// ElapsedFor finds; elsewhere (κ flat at K, as for an integer K with
// σ ≪ Δ) and without a previous crossing the Tracker calls ElapsedFor
// itself. Either way the result is ElapsedFor's.
//
// A Tracker reads its Detector's state and is not safe for concurrent use;
// the Detector must not be observed while the Tracker is in use.
type Tracker struct {
	d   *Detector
	k   float64
	gen uint64 // the Detector's state that tau belongs to, + 1 (0: none)
	tau time.Duration
	c   crossing
}

// crossing is the previous crossing of one threshold, the starting point of
// the next solve.
type crossing struct {
	ok    bool
	uPrev float64 // (t − EA_{ℓ+1})/Δ
	sPrev float64 // σ_eff/Δ of that state
	du    float64 // the secant du/ds through the two crossings before
	duOK  bool
	bands bands // the single-term tests of the threshold (band.go)
}

// Track returns a Tracker of threshold k. ok is false for a k that is not
// finite and positive (FreshnessPointAt's domain).
func (d *Detector) Track(k float64) (*Tracker, bool) {
	if !(k > 0) || math.IsInf(k, 1) {
		return nil, false
	}
	return &Tracker{d: d, k: k}, true
}

// Threshold returns K.
func (t *Tracker) Threshold() float64 { return t.k }

// FreshnessPoint returns FreshnessPointAt(K) of the Detector's current
// state: T_last + ElapsedFor(K), saturating; ok is false before the first
// heartbeat.
func (t *Tracker) FreshnessPoint() (time.Duration, bool) {
	if !t.d.seen {
		return 0, false
	}
	return t.point(), true
}

// point is FreshnessPoint after the first heartbeat.
func (t *Tracker) point() time.Duration {
	d := t.d
	if t.gen == d.gen+1 {
		return t.tau
	}
	t.gen = d.gen + 1
	if t.k == d.threshold {
		t.tau = d.ownTau()
	} else {
		t.tau = d.freshnessFrom(&t.c, t.k)
	}
	return t.tau
}

// freshnessFrom returns T_last + ElapsedFor(level) (saturating) of the
// current state: from the bands of c when they decide it, else searching
// from the crossing c, which it then moves to this state's crossing (the
// bands leave it as it was, a prediction for the searches they do not
// decide).
func (d *Detector) freshnessFrom(c *crossing, level float64) time.Duration {
	if !d.reachedAtLast(level) {
		if e, ok := d.bandCrossing(&c.bands, level); ok {
			return d.last + e // e ≤ emax
		}
	}
	e := d.elapsedFrom(c, level)
	tau := detector.AddSat(d.last, e)
	if e > 0 && tau != math.MaxInt64 {
		u := diff(tau, d.ea) / d.delta
		if ds := d.s - c.sPrev; c.ok && math.Abs(ds) > 1e-9*d.s {
			c.du, c.duOK = (u-c.uPrev)/ds, true
		}
		c.uPrev, c.sPrev, c.ok = u, d.s, true
	}
	return tau
}

// elapsedFrom returns ElapsedFor(level) of the current state, searching
// from the crossing c when there is one.
func (d *Detector) elapsedFrom(c *crossing, level float64) time.Duration {
	if d.reachedAtLast(level) {
		return 0
	}
	if c.ok {
		u := c.uPrev // the prediction (see Tracker)
		if i := math.Round(u); d.s < 0.2 && math.Abs(u-i) < 0.4 {
			u = i + (u-i)*(d.s/c.sPrev)
		} else if p := u + c.du*(d.s-c.sPrev); c.duOK && d.s >= 0.2 && !math.IsNaN(p) {
			u = p
		}
		e0 := min(max(detector.RoundNanos(diff(d.ea, d.last)+u*d.delta), 1), d.emax)
		if e, ok := d.crossingNear(level, e0, d.emax); ok {
			return e
		}
	}
	e, _ := d.ElapsedFor(level)
	return e
}

// crossingNear searches the nanosecond grid from e0 in [1, emax] for the
// crossing of level (κ(T_last) < level), doubling its steps away from e0
// and then bisecting, as ElapsedFor does from its own guess. ok is false
// when the search leaves [1, emax] or κ does not rise steeply across the
// crossing found or across e0's nanosecond (see Tracker): κ is flat near
// the crossing, which the first step already shows.
func (d *Detector) crossingNear(level float64, e0, emax time.Duration) (time.Duration, bool) {
	g := func(e time.Duration) float64 { return d.kappa(d.last + e) }
	// κ rises steeply from a to b, one nanosecond apart.
	rise := d.steepRise(level)
	steep := func(a, b float64) bool { return b-a >= rise }
	lo, glo := time.Duration(0), 0.0 // κ(T_last) < level; glo set once lo moves
	hi, ghi := time.Duration(-1), 0.0
	if g0 := g(e0); g0 >= level {
		hi, ghi = e0, g0
		for step := time.Duration(1); step < e0; step *= 2 {
			c := e0 - step
			gc := g(c)
			if step == 1 && !steep(gc, g0) {
				return 0, false
			}
			if gc < level {
				lo, glo = c, gc
				break
			}
			hi, ghi = c, gc
		}
	} else {
		lo, glo = e0, g0
		for step := time.Duration(1); step <= emax-e0 && step <= math.MaxInt64/4; step *= 2 {
			c := e0 + step
			gc := g(c)
			if step == 1 && !steep(g0, gc) {
				return 0, false
			}
			if gc >= level {
				hi, ghi = c, gc
				break
			}
			lo, glo = c, gc
		}
		if hi < 0 {
			return 0, false
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if gm := g(mid); gm >= level {
			hi, ghi = mid, gm
		} else {
			lo, glo = mid, gm
		}
	}
	if lo == 0 {
		glo = d.kappaLast()
	}
	return hi, steep(glo, ghi)
}

// steepRise returns the rise of κ across one nanosecond that makes a
// crossing found there the only one (see Tracker): 2^-40·max(1, level), or
// five times the bound E on sum's rounding error when that is smaller and
// applies (the sum, σ/Δ ≤ sMax, with σ ≥ 10 µs, level ≤ 2^20 and u's
// rounding below 10^-3 of a nanosecond's step).
//
// The bound. Let h(t) = Σ_{j≥0} Φ((u − j)/s) in exact arithmetic at the
// float u that kappa computes for t: u is non-decreasing in t (float
// subtraction and division by a positive number round monotonically), so h
// is. sum adds T ≤ ⌊18·s⌋ + 1 terms (the integers j with |u − j| ≤ zFull·s),
// each within 2^-48 of Φ((u − j)/s): 0.5·math.Erfc is within 2^-50 of Φ at
// its rounded argument (a budget of 4 ulps of math.Erfc's result, whose
// error is below one ulp), and the roundings of z = (u − j)/s (|z| ≤ 9,
// φ < 0.4), of −z/√2 and of √2 move Φ by less than 2^-50, 2^-51 and 2^-51;
// each of its additions rounds by at most 2^-53·(level + 2 + 2T) near level,
// and the terms it leaves out or counts as 1 add below 10^-18. So
// |κ(t) − h(t)| ≤ E = T·2^-48 + (T + 1)·2^-53·(level + 2 + 2T) + 10^-18
// there (and h − E keeps growing beyond).
//
// Why 5·E is enough. With a = κ(e − 1) < level ≤ b = κ(e) and R = b − a
// ≥ 5·E, h rises by at least R − 2E across [e − 1, e], and by at least
// 0.99·(R − 2E) across each neighbouring nanosecond: over three nanoseconds z
// moves by less than 3·10^-4 (σ ≥ 10 µs), so φ(z) changes by less than 0.3 %
// (φ'/φ = −z, |z| ≤ 9), and u's steps stay within 0.1 % of 1/Δ (the
// condition on 2^-51·u·Δ). Then κ(e') ≤ a + 2E − 0.99·(R − 2E) < level for
// every e' ≤ e − 2, and κ(e') ≥ b − 2E + 0.99·(R − 2E) ≥ level for every
// e' ≥ e + 1: κ crosses level at e alone.
func (d *Detector) steepRise(level float64) float64 {
	r := 0x1p-40 * max(1, level)
	s := d.s
	if d.step || s > sMax || s*d.delta < 1e4 || level > 0x1p20 || 0x1p-51*(level+2+zFull*s)*d.delta > 1e-3 {
		return r
	}
	t := math.Floor(18*s+1e-6) + 1 // 1e-6: the rounding of u ± zFull·s, u < 2^21
	return min(r, 5*sumErr(t, level))
}

// sumErr returns the bound E on sum's rounding error near level with at
// most t terms (see steepRise).
func sumErr(t, level float64) float64 {
	return t*0x1p-48 + (t+1)*0x1p-53*(max(1, level)+2+2*t) + 1e-18
}
