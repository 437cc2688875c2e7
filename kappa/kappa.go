package kappa

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

// DefaultThreshold is the default threshold K (see the package
// documentation): about two intervals past EA_{ℓ+1} when σ ≪ Δ.
const DefaultThreshold = 2.5

// Contribution selects the contribution of one missing heartbeat.
type Contribution int

const (
	// ContributionNormal (the default): Φ((t − EA_i)/σ), the probability
	// that heartbeat i would have arrived by t.
	ContributionNormal Contribution = iota
	// ContributionStep: 1 once t > EA_i, 0 before.
	ContributionStep
)

// String returns "normal" or "step".
func (c Contribution) String() string {
	switch c {
	case ContributionNormal:
		return "normal"
	case ContributionStep:
		return "step"
	}
	return fmt.Sprintf("Contribution(%d)", int(c))
}

// Config configures a Detector. The zero value means Δ = 100 ms, n = 1000,
// K = 2.5, the normal contribution, σ_min = Δ/100, warm-up until the window
// is full.
type Config struct {
	// Estimator sets Δ, n and the restart threshold (see
	// chen.EstimatorConfig).
	Estimator chen.EstimatorConfig
	// Threshold K > 0: the process is suspected once κ reaches K. Default
	// DefaultThreshold (2.5); must be finite.
	Threshold float64
	// Contribution: ContributionNormal (default) or ContributionStep.
	Contribution Contribution
	// MinStdDev σ_min: the normal contribution uses max(σ, σ_min, 1 ns).
	// Default Δ/100; new(0) leaves only the 1 ns guard; must not be
	// negative.
	MinStdDev *time.Duration
	// MinSamples is the warm-up length: WarmingUp is true while the window
	// holds fewer samples. Default: the window size n; new(0) turns warm-up
	// off. Must be between 0 and n.
	MinSamples *int
}

// Detector is κ-FD (Hayashibara, Défago and Katayama, JAIST IS-RR-2004-006;
// Hayashibara and Takizawa, ICDCS Workshops 2006; docs/algorithms.md,
// “κ-FD”). With ℓ the
// largest sequence number received, EA_{ℓ+1} NFD-E's expected arrival
// (Chen, Toueg and Aguilera 2002, section 6) and σ the standard deviation of the window's
// A_j − Δ·s_j, the suspicion level at t ≥ T_last is
//
//	κ(t) = Σ_{i>ℓ} c_i(t),   c_i(t) = Φ((t − EA_i)/σ),   EA_i = EA_{ℓ+1} + (i−ℓ−1)·Δ
//
// (ContributionNormal; ContributionStep uses c_i(t) = 1 if t > EA_i). κ is
// continuous, non-decreasing in t, and κ ≈ (t − EA_{ℓ+1})/Δ + 1/2 once
// t − EA_{ℓ+1} ≫ σ. The freshness point is the first instant at which κ
// reaches K, found by a safeguarded Newton iteration and made exact on the
// nanosecond grid by a bisection on Level itself, so that Level(τ) ≥ K >
// Level(τ − 1) whatever the rounding. Observe (and Tracker) find the same
// instant faster: where σ ≤ Δ/4, bounds on κ's rounding and on Φ's tails
// decide on which side of K each instant lies from (t − EA_{ℓ+1})/Δ alone
// (band.go), else by a local search from the previous crossing. τ is never before T_last (an instant
// before T_last counts as T_last): when κ(T_last) ≥ K already, as after a
// sender pause that left EA behind, τ = T_last, and the level says the
// process is suspected from the arrival on. (A replay then sees a trust
// period of zero length at each such arrival and counts one mistake per
// gap where NFD-E, whose τ precedes the arrival, counts one in all; see
// docs/algorithms.md, “κ-FD”.)
//
// Awkward input is chen.Estimator's (see chen.Detector): duplicates and
// stale heartbeats are dropped, a late heartbeat enters the window but
// moves neither τ nor the level until the next fresh heartbeat, a
// backwards jump of more than RestartJump resets, heartbeats without
// sequence numbers are numbered by arrival.
//
// Observe updates the state; the first read of τ after it (FreshnessPoint,
// Suspected) costs one solve: a few float operations where the bands
// decide, else a few evaluations of κ (O(1 + σ/Δ) terms each; usually two:
// the search starts from the previous crossing, see Tracker). Level costs
// one evaluation. A Detector is not safe for concurrent use.
type Detector struct {
	est        *chen.Estimator
	threshold  float64
	step       bool
	minStd     float64 // ns; 0: Δ/100
	minSamples int
	delta      float64 // Δ in ns
	invDelta   float64 // 1/Δ, for the bands (band.go)

	seen   bool
	last   time.Duration // T_last
	ea     time.Duration // EA_{ℓ+1}
	s      float64       // σ_eff/Δ
	invS   float64       // 1/s, for the bands (band.go)
	base   float64       // T_last − EA_{ℓ+1} in ns, for the bands
	off    int64         // the same, exact when banded
	emax   time.Duration // the largest elapsed time after T_last
	banded bool          // the bands may decide: normal contribution, s ≤ sMaxBand, |base| ≤ 2^51
	k0     float64       // κ(T_last) when k0ok, shared by every ElapsedFor of this state
	k0ok   bool
	k0max  float64 // κ(T_last) ≤ k0max, known before κ(T_last) is
	tau    time.Duration
	solved bool     // tau is this state's (solved when first read)
	gen    uint64   // counts the states (fresh heartbeats and restarts), for Tracker
	own    crossing // τ's crossing, the start of the next state's search
}

var _ detector.Accrual = (*Detector)(nil)

// New returns a detector, or an error naming the first invalid field.
func New(cfg Config) (*Detector, error) {
	est, err := chen.NewEstimator(cfg.Estimator)
	if err != nil {
		return nil, fmt.Errorf("kappa: %w", err)
	}
	cfg.Threshold = cmp.Or(cfg.Threshold, DefaultThreshold)
	if !(cfg.Threshold > 0) || math.IsInf(cfg.Threshold, 1) {
		return nil, fmt.Errorf("kappa: Threshold %v is not finite and positive", cfg.Threshold)
	}
	if cfg.Contribution != ContributionNormal && cfg.Contribution != ContributionStep {
		return nil, fmt.Errorf("kappa: Contribution %d is unknown (want ContributionNormal or ContributionStep)", int(cfg.Contribution))
	}
	minStdDev := detector.OrDefault(cfg.MinStdDev, est.Interval()/100)
	if minStdDev < 0 {
		return nil, fmt.Errorf("kappa: MinStdDev %v is negative", minStdDev)
	}
	m, err := chen.MinSamples(cfg.MinSamples, est.WindowSize())
	if err != nil {
		return nil, fmt.Errorf("kappa: %w", err)
	}
	minStd := float64(minStdDev)
	return &Detector{
		est: est, threshold: cfg.Threshold, step: cfg.Contribution == ContributionStep,
		minStd: max(minStd, 1), minSamples: m, delta: float64(est.Interval()),
		invDelta: 1 / float64(est.Interval()),
	}, nil
}

// Estimator returns the expected-arrival estimator (read it, do not feed it).
func (d *Detector) Estimator() *chen.Estimator { return d.est }

// Threshold returns K.
func (d *Detector) Threshold() float64 { return d.threshold }

// StdDev returns σ_eff, the standard deviation the normal contribution
// uses, as of the newest fresh heartbeat (0 before the first one).
func (d *Detector) StdDev() time.Duration { return detector.RoundNanos(d.s * d.delta) }

// Observe records a heartbeat and, if it is Fresh (or a restart), takes
// T_last, EA_{ℓ+1} and σ from the estimator; τ follows from them.
func (d *Detector) Observe(hb detector.Heartbeat) {
	switch d.est.Observe(hb) {
	case chen.Fresh, chen.Restart:
		d.seen = true
		d.gen++
		d.last, d.ea = d.est.LastArrival(), d.est.Next()
		d.s = max(d.est.StdDev(), d.minStd) / d.delta
		d.invS = 1 / d.s
		d.base = diff(d.last, d.ea)
		d.off = int64(d.last) - int64(d.ea)
		d.banded = !d.step && d.s <= sMaxBand && math.Abs(d.base) <= 0x1p51
		d.emax = math.MaxInt64 - max(d.last, 0)
		d.boundK0()
		d.solved = false // solved when read: a threshold sweep reads other thresholds only
	}
}

// ownTau returns τ of the current state (after the first heartbeat),
// solving for it the first time it is read: T_last + ElapsedFor(K),
// MaxInt64 when never reached.
func (d *Detector) ownTau() time.Duration {
	if !d.solved {
		d.tau, d.solved = d.freshnessFrom(&d.own, d.threshold), true
	}
	return d.tau
}

// boundK0 sets k0max for a new state, or κ(T_last) itself where that costs
// no erfc. Past EA_{ℓ} the first term of the sum, u = (T_last −
// EA_{ℓ+1})/Δ is near −1, and κ(T_last) is an erfc of a far tail that
// few thresholds need: sum adds the lo ones of the terms j < lo to hi − lo
// + 1 terms 0.5·math.Erfc(x) ≤ 1, so its float result is at most hi + 1
// (rounding to nearest is monotone, and hi + 1 is an exact float).
func (d *Detector) boundK0() {
	d.k0ok = false
	u := d.base / d.delta // kappa's u at T_last
	if d.step || u > uMax || d.s > sMax {
		d.k0, d.k0ok = d.kappa(d.last), true
		return
	}
	hi := math.Floor(u + zFull*d.s)
	if hi < 0 {
		d.k0, d.k0ok = 0, true // sum's early return
		return
	}
	d.k0max = hi + 1
}

// kappaLast returns κ(T_last), computed once per state.
func (d *Detector) kappaLast() float64 {
	if !d.k0ok {
		d.k0, d.k0ok = d.kappa(d.last), true
	}
	return d.k0
}

// reachedAtLast reports κ(T_last) ≥ level, from the bound k0max when it
// decides.
func (d *Detector) reachedAtLast(level float64) bool {
	if !d.k0ok && level > d.k0max {
		return false
	}
	return d.kappaLast() >= level
}

// FreshnessPoint returns τ = T_last + ElapsedFor(K) (saturating); ok is
// false before the first heartbeat.
func (d *Detector) FreshnessPoint() (time.Duration, bool) {
	if !d.seen {
		return 0, false
	}
	return d.ownTau(), true
}

// Started reports whether a heartbeat has been observed: FreshnessPoint's
// ok, without solving for τ.
func (d *Detector) Started() bool { return d.seen }

// FreshnessPointAt returns the freshness point the detector would have with
// threshold k instead of its own, from the same state (which does not
// depend on the threshold): what qos's threshold sweep replays. ok is false
// before the first heartbeat and for k not finite and positive.
func (d *Detector) FreshnessPointAt(k float64) (time.Duration, bool) {
	if !d.seen || !(k > 0) || math.IsInf(k, 1) {
		return 0, false
	}
	if k == d.threshold {
		return d.ownTau(), true
	}
	e, _ := d.ElapsedFor(k)
	return detector.AddSat(d.last, e), true
}

// WarmingUp reports whether the window holds fewer than MinSamples samples.
func (d *Detector) WarmingUp() bool { return d.est.Len() < d.minSamples }

// Suspected reports now > τ.
func (d *Detector) Suspected(now time.Duration) bool { return d.seen && now > d.ownTau() }

// Level returns κ(now): 0 before the first heartbeat; an instant before
// T_last counts as T_last. Never NaN or negative.
func (d *Detector) Level(now time.Duration) float64 {
	if !d.seen {
		return 0
	}
	return d.kappa(max(now, d.last))
}

// kappa returns κ(t) for t ≥ T_last.
func (d *Detector) kappa(t time.Duration) float64 {
	u := diff(t, d.ea) / d.delta // (t − EA_{ℓ+1})/Δ
	if d.step {
		if u <= 0 {
			return 0
		}
		return math.Ceil(u) // the i with EA_i < t: u > i − ℓ − 1
	}
	k, _ := sum(u, d.s, false)
	return k
}

// diff returns a − b in nanoseconds, from the exact unsigned difference.
func diff(a, b time.Duration) float64 {
	if a >= b {
		return float64(uint64(a) - uint64(b))
	}
	return -float64(uint64(b) - uint64(a))
}

const (
	zFull = 9.0 // Φ(z) is 1 in float64 beyond this
	sMax  = 4.0 // above this σ/Δ, the integral replaces the sum
	uMax  = 0x1p52
)

// sum returns g(u; s) = Σ_{j≥0} Φ((u − j)/s) and, if deriv, its derivative
// in u.
func sum(u, s float64, deriv bool) (g, dg float64) {
	switch {
	case u > uMax:
		return u + 0.5, 1 // the terms that are not 1 are beyond float64's resolution
	case s > sMax:
		// The midpoint rule with its first Euler–Maclaurin correction:
		// Σ_{j≥0} f(j) ≈ ∫_{−1/2}^{∞} f(y) dy + f'(−1/2)/24
		//             = s·(zΦ(z) + φ(z)) − φ(z)/(24s),  z = (u + 1/2)/s,
		// non-decreasing in u for z ≥ −8 > −√24·s.
		z := (u + 0.5) / s
		if z < -8 {
			return 0, 0
		}
		p := 0.5 * math.Erfc(-z/math.Sqrt2)
		q := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
		return max(0, s*(z*p+q)-q/(24*s)), p + z*q/(24*s*s)
	}
	hi := math.Floor(u + zFull*s)
	if hi < 0 {
		return 0, 0
	}
	lo := max(0, math.Ceil(u-zFull*s))
	g = lo // the terms j < lo are 1
	for j := lo; j <= hi; j++ {
		z := (u - j) / s
		g += 0.5 * math.Erfc(-z/math.Sqrt2)
		if deriv {
			dg += math.Exp(-z*z/2) / (math.Sqrt(2*math.Pi) * s)
		}
	}
	return g, dg
}

// ElapsedFor returns the smallest elapsed time e ≥ 0 (whole nanoseconds)
// since T_last at which κ reaches level: 0 for a level ≤ 0 or already
// reached at T_last. ok is false before the first heartbeat, for a NaN
// level, and when e does not fit in the time.Duration range after T_last.
func (d *Detector) ElapsedFor(level float64) (time.Duration, bool) {
	if !d.seen || math.IsNaN(level) {
		return 0, false
	}
	if level <= 0 || d.reachedAtLast(level) {
		return 0, true
	}
	if math.IsInf(level, 1) {
		return math.MaxInt64, false
	}
	emax := time.Duration(math.MaxInt64)
	if d.last > 0 {
		emax -= d.last
	}
	reached := func(e time.Duration) bool { return d.reachedAt(e, level) }
	if !reached(emax) {
		return math.MaxInt64, false
	}
	// A guess from the continuous solution, then an exact search on the
	// nanosecond grid with Level's own predicate.
	u := d.solve(level)
	e0 := detector.RoundNanos(diff(d.ea, d.last) + u*d.delta)
	e0 = min(max(e0, 0), emax)
	lo, hi := time.Duration(-1), emax // reached(lo) false (−1: before 0), reached(hi) true
	if reached(e0) {
		hi = e0
		for step := time.Duration(1); ; step *= 2 {
			if step > e0 || step > math.MaxInt64/4 {
				lo = -1
				break
			}
			if !reached(e0 - step) {
				lo = e0 - step
				break
			}
			hi = e0 - step
		}
	} else {
		lo = e0
		for step := time.Duration(1); ; step *= 2 {
			if step > emax-e0 || step > math.MaxInt64/4 {
				break // hi stays emax (and step cannot overflow)
			}
			if reached(e0 + step) {
				hi = e0 + step
				break
			}
			lo = e0 + step
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if mid >= 0 && reached(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// guess returns a starting point for solve: for a wide spread κ ≈ u + 1/2;
// for σ ≪ Δ κ is a staircase, ⌊u⌋ + Φ((u − ⌊u⌋)/s), so a level k + r
// (0 < r < 1) is reached near u = k + s·Φ⁻¹(r), and an integer level k
// where the term of heartbeat k − 1 rounds to 1 (about 8.3 s past k − 1).
func guess(level, s float64) float64 {
	if s >= 0.5 {
		return level - 0.5
	}
	k := math.Floor(level)
	r := level - k
	if r < 1e-12 {
		return k - 1 + 8.3*s
	}
	r = min(r, 1-1e-12)
	return k + s*math.Sqrt2*math.Erfinv(2*r-1)
}

// solve returns u with g(u; s) = level (step: ⌈level⌉ − 1, the crossing's
// left end), by Newton's method kept inside a bracket.
func (d *Detector) solve(level float64) float64 {
	if d.step {
		return math.Ceil(level) - 1
	}
	s := d.s
	lo, hi := -zFull*s-1, level+zFull*s+1 // g(lo) = 0 < level ≤ g(hi)
	x := min(max(guess(level, s), lo), hi)
	for range 64 {
		g, dg := sum(x, s, true)
		f := g - level
		if math.Abs(f) <= 0x1p-50*max(1, level) {
			return x // within float64's resolution of κ: the search on Level finishes
		}
		if f >= 0 {
			hi = x
		} else {
			lo = x
		}
		nx := x - f/dg
		if !(nx > lo && nx < hi) {
			nx = lo + (hi-lo)/2
		}
		if math.Abs(nx-x) <= 1e-12*max(1, math.Abs(x)) || hi-lo <= 1e-12*max(1, math.Abs(x)) {
			return nx
		}
		x = nx
	}
	return x
}

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before the newest Fresh one (detector.BackwardCounter; chen.Backward).
func (d *Detector) BackwardArrivals() uint64 { return d.est.BackwardArrivals() }
