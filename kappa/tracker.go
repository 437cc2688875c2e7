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
// With EA_{ℓ+1} as origin the crossing u (in units of Δ) depends only on σ/Δ,
// and for σ ≪ Δ it sits on the term i with u ≈ i + (σ/Δ)·z, so the previous
// state's crossing, rescaled by the change of σ/Δ, predicts the new one
// within a few nanoseconds. A search on the nanosecond grid with Level's own
// predicate, started there, finds a crossing e (κ(T_last + e) ≥ K >
// κ(T_last + e − 1)). Where κ rises steeply across e (by at least 2^12
// units in the last place of K in that nanosecond), rounding cannot make κ
// cross K at any other instant, so e is the crossing ElapsedFor finds;
// elsewhere (κ flat at K, as for an integer K with σ ≪ Δ) and without a
// previous crossing the Tracker calls ElapsedFor itself. Either way the
// result is ElapsedFor's.
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
	d := t.d
	if !d.seen {
		return 0, false
	}
	if t.gen == d.gen+1 {
		return t.tau, true
	}
	t.gen = d.gen + 1
	if t.k == d.threshold {
		t.tau = d.tau // solved by Observe
	} else {
		t.tau = d.freshnessFrom(&t.c, t.k)
	}
	return t.tau, true
}

// freshnessFrom returns T_last + ElapsedFor(level) (saturating) of the
// current state, starting from c, which it then moves to this state's
// crossing.
func (d *Detector) freshnessFrom(c *crossing, level float64) time.Duration {
	e := d.elapsedFrom(c, level)
	tau := detector.AddSat(d.last, e)
	if e > 0 && tau != math.MaxInt64 {
		c.uPrev, c.sPrev, c.ok = diff(tau, d.ea)/d.delta, d.s, true
	}
	return tau
}

// elapsedFrom returns ElapsedFor(level) of the current state, searching
// from the crossing c when there is one.
func (d *Detector) elapsedFrom(c *crossing, level float64) time.Duration {
	if d.k0 >= level {
		return 0
	}
	if c.ok {
		emax := time.Duration(math.MaxInt64)
		if d.last > 0 {
			emax -= d.last
		}
		i := math.Round(c.uPrev)
		u := i + (c.uPrev-i)*(d.s/c.sPrev)
		e0 := min(max(detector.RoundNanos(diff(d.ea, d.last)+u*d.delta), 1), emax)
		if e, ok := d.crossingNear(level, e0, emax); ok {
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
	steep := func(a, b float64) bool { return b-a >= 0x1p-40*max(1, level) }
	lo, glo := time.Duration(0), d.k0 // κ(T_last) < level
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
	return hi, steep(glo, ghi)
}
