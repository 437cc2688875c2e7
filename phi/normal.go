package phi

import (
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Defaults of the normal model.
const (
	// DefaultWindowSize is the number of inter-arrival times kept (1000 in
	// the experiments of Hayashibara et al.).
	DefaultWindowSize = 1000
	// DefaultThreshold is the default threshold Θ of all three models (Akka's
	// and Cassandra's default; z(8) = 5.612 for the normal model).
	DefaultThreshold = 8.0
	// DefaultBootstrapInterval is the expected heartbeat interval m assumed
	// by the normal model before it has two intervals.
	DefaultBootstrapInterval = time.Second
	// DefaultMinStdDevFraction is the default σ_min as a fraction of the
	// window mean μ.
	DefaultMinStdDevFraction = 0.01
)

// NormalConfig configures a Normal detector. The zero value means the
// defaults; pointer fields follow fdkit's rule on zero (see package
// detector): nil is the default, new(v) says any value, zero included.
type NormalConfig struct {
	// WindowSize n: the number of most recent inter-arrival times kept.
	// Default DefaultWindowSize (1000); must not be negative.
	WindowSize int
	// Threshold Θ: the process is suspected once φ ≥ Θ, that is after
	// τ = T_last + μ + σ_eff·z(Θ). Default DefaultThreshold (8); must be
	// finite and not negative (0 means the default).
	Threshold float64
	// MinStdDev σ_min: the standard deviation used is σ_eff = max(σ, σ_min),
	// which keeps φ finite and the inverse non-degenerate when arrivals are
	// perfectly regular (σ = 0). Default (nil): σ_min = μ/100
	// (DefaultMinStdDevFraction of the current window mean); new(0) turns
	// the floor off. Whatever the setting, σ_eff is at least 1 ns. Must not
	// be negative.
	MinStdDev *time.Duration
	// BootstrapInterval m: while the window holds fewer than two intervals (σ
	// undefined), the detector uses μ = m and σ = m/4, the mean and population
	// standard deviation of Akka's two synthetic samples m ± m/4
	// (docs/algorithms.md, “φ accrual: Akka's variant”); unlike Akka, nothing
	// synthetic is stored in the window. Default DefaultBootstrapInterval (1
	// s); must not be negative.
	BootstrapInterval *time.Duration
	// MinSamples: WarmingUp reports true until the window holds this many
	// intervals. Default min(2, WindowSize), the end of the bootstrap;
	// new(0) turns warm-up off; WindowSize evaluates only full windows, as
	// the papers do. Must be in [0, WindowSize].
	MinSamples *int
	// AcceptablePause, added to the mean as in Akka's
	// acceptable-heartbeat-pause: τ = T_last + μ + pause + σ_eff·z(Θ) and
	// φ(t) = −log10 Q((t − T_last − μ − pause)/σ_eff). Default 0 (the
	// papers' model); must not be negative.
	AcceptablePause *time.Duration
	// SkipIfSuspected, Akka's rule against learning outages
	// (docs/algorithms.md, “φ accrual: normal model”): an interval is not
	// recorded if the process was suspected when it ended (arrival > τ), so
	// that an outage or a pause does not widen the distribution. Default
	// (nil): on, so that by default no outage is learnt as an ordinary
	// sample; new(false) records every interval. While the window holds fewer
	// than two intervals (the bootstrap) every interval is recorded, so that a
	// BootstrapInterval far below the real interval cannot leave the detector
	// never learning (Akka's trap; an fdkit deviation). With it on the history
	// depends on Θ, so LinearForm reports ok = false.
	SkipIfSuspected *bool
	// MaxInterval, Cassandra's remedy (docs/algorithms.md, “φ accrual: normal
	// model”): intervals longer than MaxInterval are not recorded (T_last still
	// moves). Zero means no cap; must not be negative.
	MaxInterval *time.Duration
	// RelearnAfter K, the relearn rule (an fdkit addition; docs/algorithms.md,
	// “Not locking out a sender whose rate changed”): an interval left out by
	// SkipIfSuspected or MaxInterval is kept aside; the K-th such interval,
	// with fewer than K recorded in a row between any two, records the whole
	// run, and so is every further one left out until K in a row are not, so
	// that a sender whose rate dropped for good, or whose heartbeats now come
	// in pairs or bursts, is learnt instead of suspected for ever, while an outage (one long interval) is
	// still not learnt. A step from one steady rate to any slower one is
	// trusted again after max(K, ⌈n/(1 + z(Θ)²)⌉) slow heartbeats: 31 with the
	// defaults. While every interval exceeds MaxInterval the run does not end,
	// so the cap then keeps nothing out. Default (nil): min(DefaultRelearnAfter
	// (10), WindowSize); new(0) turns the rule off. Must be in [0,
	// WindowSize].
	RelearnAfter *int
	// DivideBySeqGap (docs/algorithms.md, “φ accrual: normal model”): when both
	// heartbeats carry sequence numbers s_prev < s, the interval recorded is (A
	// − T_last)/(s − s_prev), the mean interval per heartbeat sent, so that a
	// burst of losses does not look like one slow heartbeat. It is applied
	// before MaxInterval. Default off.
	DivideBySeqGap bool
}

// Normal is the φ accrual failure detector of Hayashibara, Défago, Yared and
// Katayama ("The φ accrual failure detector", SRDS 2004), an accrual detector
// in the sense of Défago, Urbán, Hayashibara and Katayama (DSN 2005). See
// docs/algorithms.md, “φ accrual: normal model” and “Computing φ stably”.
//
// It keeps the last n inter-arrival times I = A − T_last in a
// detector.Window and models the next one as normal with their mean μ and
// population standard deviation σ (divide by n'; the paper does not say
// which, and Akka uses the population variance). With σ_eff = max(σ, σ_min):
//
//	φ(t) = −log10 Q(z),  z = (t − T_last − μ)/σ_eff,  Q(z) = ½·erfc(z/√2)
//	t*(Θ) = μ + σ_eff·z(Θ),  z(Θ) = Q⁻¹(10^−Θ),  τ = T_last + t*(Θ)
//
// φ is computed stably (LevelOfZ) and z(Θ) by Newton's method (ZOfLevel),
// cached at construction, so FreshnessPoint costs no transcendental
// function. Normal implements detector.Linear with p = z(Θ).
//
// Awkward input follows the package rules; in addition, a heartbeat never
// produces a negative interval, and with fewer than two intervals the
// bootstrap of NormalConfig.BootstrapInterval applies. A Normal is not safe
// for concurrent use.
type Normal struct {
	window     *detector.Window
	threshold  float64
	zTh        float64 // z(Θ)
	minStd     float64 // σ_min in ns; < 0 for the relative default
	bootstrap  float64 // m in ns
	minSamples int
	skip       bool
	pause      float64 // acceptable pause in ns
	maxIv      time.Duration
	divGap     bool
	relearn    relearn

	arr arrivals
	mu  float64 // μ + acceptable pause, in ns
	sd  float64 // σ_eff in ns
	tau time.Duration
}

var (
	_ detector.Accrual = (*Normal)(nil)
	_ detector.Linear  = (*Normal)(nil)
)

// NewNormal returns a normal-model φ detector, or an error for a negative
// WindowSize, MinStdDev, BootstrapInterval or MaxInterval, a threshold that
// is negative, NaN or infinite, or MinSamples or RelearnAfter outside [0,
// WindowSize].
func NewNormal(cfg NormalConfig) (*Normal, error) {
	f := fields{model: "normal"}
	cfg.WindowSize = f.window(cfg.WindowSize, DefaultWindowSize)
	cfg.Threshold = f.threshold(cfg.Threshold)
	minStd := detector.OrDefault(cfg.MinStdDev, -1) // < 0: the relative default
	if cfg.MinStdDev != nil && minStd < 0 && f.err == nil {
		f.err = fmt.Errorf("phi: normal MinStdDev %v is negative", minStd)
	}
	bootstrap := f.duration("BootstrapInterval", cfg.BootstrapInterval, DefaultBootstrapInterval)
	pause := f.duration("AcceptablePause", cfg.AcceptablePause, 0)
	maxIv := f.duration("MaxInterval", cfg.MaxInterval, 0)
	minSamples := f.minSamples(cfg.MinSamples, min(2, cfg.WindowSize), cfg.WindowSize)
	if f.err != nil {
		return nil, f.err
	}
	rl, err := newRelearn("normal", cfg.RelearnAfter, cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	w, err := detector.NewWindow(cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	return &Normal{
		relearn:    rl,
		window:     w,
		threshold:  cfg.Threshold,
		zTh:        ZOfLevel(cfg.Threshold),
		minStd:     float64(minStd),
		bootstrap:  float64(bootstrap),
		minSamples: minSamples,
		skip:       detector.OrDefault(cfg.SkipIfSuspected, true),
		pause:      float64(pause),
		maxIv:      maxIv,
		divGap:     cfg.DivideBySeqGap,
	}, nil
}

// Threshold returns Θ.
func (d *Normal) Threshold() float64 { return d.threshold }

// Window returns the window of recorded inter-arrival times (read it, do not
// add to it).
func (d *Normal) Window() *detector.Window { return d.window }

// Observe records a heartbeat: I = A − T_last enters the window (subject to
// the configured remedies and the relearn rule), T_last = A, and μ, σ_eff
// and τ are recomputed (τ alone when the window did not change: μ and
// σ_eff depend on its samples only).
func (d *Normal) Observe(hb detector.Heartbeat) {
	switch d.record(hb) {
	case windowChanged:
		d.update()
	case lastMoved:
		d.refresh()
	}
}

// ObserveEach is Observe(hb) on every detector of ds, in two rounds of up
// to 32 detectors: each records the interval and, if its window changed,
// recomputes μ and σ_eff; then each recomputes τ, so that one detector's
// division, spread and square root overlap the next one's recording (a
// threshold sweep observes many detectors at every heartbeat).
//
// Detectors whose arrivals (T_last and sequence state) are those of the
// first of a round before hb, as a threshold sweep's are, take its
// interval without checking hb again.
func ObserveEach(ds []*Normal, hb detector.Heartbeat) {
	var moved [32]bool // whether T_last moved (τ to recompute)
	for len(ds) > 0 {
		part := ds[:min(len(ds), len(moved))]
		ds = ds[len(part):]
		before := part[0].arr
		iv, gap, first, ok := part[0].arr.accept(hb)
		after := part[0].arr
		// The common case, checked once: an accepted heartbeat past the
		// first whose interval the sequence gap leaves alone.
		plain := ok && !first && gap <= 1
		for i, d := range part {
			var what observed
			switch {
			case i == 0:
				what = d.recordAccepted(hb.Arrival, iv, gap, first, ok)
			case !d.arr.same(&before):
				what = d.record(hb)
			case plain && (!d.skip || hb.Arrival <= d.tau) && (d.maxIv == 0 || iv <= d.maxIv) && d.relearn.n == 0:
				// recordAccepted's outcome, inline: recorded, the relearn
				// rule with no run (recorded is then a no-op).
				d.arr = after
				d.window.Add(iv)
				what = windowChanged
			default:
				d.arr = after
				what = d.recordAccepted(hb.Arrival, iv, gap, first, ok)
			}
			moved[i] = what != dropped
			if what == windowChanged {
				if w := d.window; w.Len() >= min(2, w.Size()) {
					mu, sd := w.MeanStdDev()
					d.clamp(mu, sd)
				} else {
					d.stats()
				}
			}
		}
		for i, d := range part {
			if !moved[i] {
				continue
			}
			// refresh, inline.
			t := max(0, d.mu+d.sd*d.zTh)
			tau, ok := freshnessPointNear(d.arr.last, t)
			if !ok {
				tau = freshnessPoint(d.arr.last, t)
			}
			d.tau = tau
		}
	}
}

// observed is what record did with a heartbeat.
type observed uint8

const (
	dropped       observed = iota // stale, duplicate or backwards: nothing moved
	lastMoved                     // T_last moved, the window did not change
	windowChanged                 // the window changed (or the first heartbeat's bootstrap)
)

// record is Observe but for the update of μ, σ_eff and τ, which it says
// is needed.
func (d *Normal) record(hb detector.Heartbeat) observed {
	iv, gap, first, ok := d.arr.accept(hb)
	return d.recordAccepted(hb.Arrival, iv, gap, first, ok)
}

// recordAccepted is record once the arrivals took the heartbeat arriving
// at at: the interval iv, the sequence gap, whether it was the first
// heartbeat and whether it was accepted (arrivals.accept).
func (d *Normal) recordAccepted(at, iv time.Duration, gap uint64, first, ok bool) observed {
	if !ok {
		return dropped
	}
	changed := first // the first heartbeat sets the bootstrap's μ and σ_eff
	if !first {
		// d.tau is still the previous heartbeat's freshness point.
		skip := d.skip && at > d.tau && d.window.Len() >= min(2, d.window.Size())
		if d.divGap && gap > 1 {
			if gap > math.MaxInt64 {
				iv = 0
			} else {
				iv /= time.Duration(gap)
			}
		}
		if d.maxIv > 0 && iv > d.maxIv {
			skip = true
		}
		if skip {
			changed = d.relearn.skipped(iv, d.window) > 0
		} else {
			d.window.Add(iv)
			d.relearn.recorded()
			changed = true
		}
	}
	if changed {
		return windowChanged
	}
	return lastMoved
}

// update recomputes μ, σ_eff, t*(Θ) and τ from the window.
func (d *Normal) update() {
	d.stats()
	d.refresh()
}

// stats recomputes μ and σ_eff from the window.
func (d *Normal) stats() {
	var mu, sd float64
	if d.window.Len() < min(2, d.window.Size()) {
		mu, sd = d.bootstrap, d.bootstrap/4
	} else {
		mu, sd = d.window.MeanStdDev()
	}
	d.clamp(mu, sd)
}

// clamp sets μ (the pause added) and σ_eff = max(σ, σ_min, 1 ns) from the
// window's (or the bootstrap's) μ and σ.
func (d *Normal) clamp(mu, sd float64) { d.mu, d.sd = clampNormal(d.minStd, d.pause, mu, sd) }

// clampNormal returns μ + pause and σ_eff = max(σ, σ_min, 1 ns) for the
// window's (or the bootstrap's) μ and σ, σ_min being minStd, or μ/100
// when minStd < 0 (the relative default).
func clampNormal(minStd, pause, mu, sd float64) (float64, float64) {
	floor := minStd
	if floor < 0 {
		floor = DefaultMinStdDevFraction * mu
	}
	// max(sd, floor, 1) without its NaN and signed-zero cases: none is NaN
	// (finite sums, a square root of a non-negative number) and the result
	// is at least 1.
	if sd < floor {
		sd = floor
	}
	if sd < 1 {
		sd = 1
	}
	return mu + pause, sd
}

// refresh recomputes τ = T_last + ⌈t*(Θ)⌉ from μ and σ_eff.
func (d *Normal) refresh() {
	t := NormalCrossing(d.mu, d.sd, d.zTh)
	tau, ok := freshnessPointNear(d.arr.last, t)
	if !ok {
		tau = freshnessPoint(d.arr.last, t)
	}
	d.tau = tau
}

// NormalCrossing returns t* = max(0, μ + σ_eff·z) in nanoseconds for μ (the
// acceptable pause included) and σ_eff in nanoseconds: the time elapsed
// since T_last at which φ reaches the level whose z is z = ZOfLevel(Θ)
// (docs/algorithms.md, “φ accrual: normal model”). A Normal detector with
// threshold Θ has τ = T_last + ⌈t*⌉ (saturating); with SkipIfSuspected it
// leaves out the next interval I when I > ⌈t*⌉ (past the bootstrap). It is
// AkkaCrossing's form: the two models differ in their mean, deviation and
// coefficient only.
func NormalCrossing(mean, sd, z float64) float64 { return AkkaCrossing(mean, sd, z) }

// Form returns what the freshness point depends on besides Θ: T_last, μ
// (the acceptable pause included) and σ_eff in nanoseconds, unrounded as
// Observe computed them. For any threshold Θ, NormalCrossing(mean, sd,
// ZOfLevel(Θ)) is the t*(Θ) this state would use, so a threshold sweep can
// evaluate many thresholds that share a history at once (with
// SkipIfSuspected the history depends on Θ: see Fork). ok is false before
// the first heartbeat.
func (d *Normal) Form() (last time.Duration, mean, sd float64, ok bool) {
	return d.arr.last, d.mu, d.sd, d.arr.seen
}

// Fork returns an independent copy of d (window, T_last, sequence state,
// the run of the relearn rule) with threshold Θ (0 means
// DefaultThreshold): the detector a replay with threshold Θ would have
// reached had it recorded the same intervals as d. With SkipIfSuspected
// a threshold sweep replays thresholds that agree on their history as
// one detector and forks it when an arrival falls between their freshness
// points (qos.PhiNormalFamily). Errors: a threshold NewNormal rejects.
func (d *Normal) Fork(threshold float64) (*Normal, error) { return d.ForkInto(nil, threshold) }

// ForkInto is Fork into dst: it makes dst the copy of d with threshold Θ
// that Fork would return and returns dst, reusing dst's window when it
// has d's window size (else dst gets a new one) and the storage of its
// relearn run, so that a
// threshold sweep that forks and joins groups of thresholds again and
// again reuses the detectors of the groups that joined. dst's former state is lost; with dst nil it
// allocates the copy as Fork does; dst may be d (its threshold then
// changes). Errors: those of Fork, dst then unchanged.
func (d *Normal) ForkInto(dst *Normal, threshold float64) (*Normal, error) {
	f := fields{model: "normal"}
	threshold = f.threshold(threshold)
	if f.err != nil {
		return nil, f.err
	}
	if dst == nil {
		dst = new(Normal)
	}
	w, run := dst.window, dst.relearn.run
	*dst = *d
	dst.window = d.window.CloneInto(w)
	dst.relearn = d.relearn.cloneInto(run)
	dst.threshold = threshold
	dst.zTh = ZOfLevel(threshold)
	if dst.arr.seen {
		dst.refresh()
	}
	return dst, nil
}

// FreshnessPointZ returns the freshness point τ = T_last + ⌈t*⌉
// (saturating), t* = NormalCrossing(μ, σ_eff, z), that this state gives a
// threshold Θ with z = ZOfLevel(Θ): the FreshnessPoint of Fork(Θ), without
// solving for z (a threshold sweep computes each z once). ok is false
// before the first heartbeat.
func (d *Normal) FreshnessPointZ(z float64) (time.Duration, bool) {
	return freshnessPoint(d.arr.last, NormalCrossing(d.mu, d.sd, z)), d.arr.seen
}

// FreshnessPointsZ sets taus[i] to FreshnessPointZ(zs[i]) for each i <
// len(taus) (len(zs) ≥ len(taus)): the freshness points of many thresholds
// from one state. Before the first heartbeat they are T_last's zero value
// plus the crossings, as FreshnessPointZ's.
func (d *Normal) FreshnessPointsZ(zs []float64, taus []time.Duration) {
	freshnessPointsZ(d.arr.last, d.mu, d.sd, zs, taus)
}

// freshnessPointsZ sets taus[i] to T_last + ⌈t*⌉ (saturating), t* =
// NormalCrossing(mu, sd, zs[i]), for each i < len(taus): the freshness
// points of many thresholds from one state (Normal's and
// NormalHistories').
func freshnessPointsZ(last time.Duration, mu, sd float64, zs []float64, taus []time.Duration) {
	for i, z := range zs[:len(taus)] {
		t := mu + sd*z // NormalCrossing but for t* = −0, which gives the same τ
		if t < 0 {
			t = 0
		}
		tau, ok := freshnessPointNear(last, t)
		if !ok {
			tau = freshnessPoint(last, t)
		}
		taus[i] = tau
	}
}

// SameHistory reports whether d and o differ at most in their threshold:
// the same settings, T_last and sequence state, window (the same intervals
// in the same order) and run of the relearn rule, hence the same μ and
// σ_eff. Each then goes on as a Fork of the other with its own threshold
// would: a threshold sweep that forked thresholds apart (see Fork) joins
// them again once their histories agree.
func (d *Normal) SameHistory(o *Normal) bool {
	return d.minStd == o.minStd && d.bootstrap == o.bootstrap && d.minSamples == o.minSamples &&
		d.skip == o.skip && d.pause == o.pause && d.maxIv == o.maxIv && d.divGap == o.divGap &&
		d.arr == o.arr && d.mu == o.mu && d.sd == o.sd &&
		d.relearn.equal(&o.relearn) && d.window.Equal(o.window)
}

// Level returns φ(now) = −log10 Q((now − T_last − μ − pause)/σ_eff): 0 before the
// first heartbeat, elapsed times below 0 count as 0, never NaN or negative,
// finite for every now.
func (d *Normal) Level(now time.Duration) float64 {
	if !d.arr.seen {
		return 0
	}
	return LevelOfZ((d.arr.elapsed(now) - d.mu) / d.sd)
}

// ElapsedFor returns t*(level) = μ + σ_eff·z(level), clamped at 0 and
// rounded up to the nanosecond. ok is false before the first heartbeat, for
// a NaN level, and when t* does not fit in a time.Duration.
func (d *Normal) ElapsedFor(level float64) (time.Duration, bool) {
	if !d.arr.seen || math.IsNaN(level) {
		return 0, false
	}
	return ceilDuration(d.mu + d.sd*ZOfLevel(level))
}

// FreshnessPoint returns τ = T_last + t*(Θ) (saturating at the largest
// time.Duration); ok is false before the first heartbeat.
func (d *Normal) FreshnessPoint() (time.Duration, bool) {
	return d.tau, d.arr.seen
}

// WarmingUp reports whether no heartbeat was seen or the window holds fewer
// than MinSamples intervals.
func (d *Normal) WarmingUp() bool {
	return !d.arr.seen || d.window.Len() < d.minSamples
}

// Suspected reports now > τ (strict; φ(τ) ≥ Θ already).
func (d *Normal) Suspected(now time.Duration) bool {
	return d.arr.seen && now > d.tau
}

// LinearForm returns Offset = T_last + μ + pause (rounded to the nanosecond) and
// Scale = σ_eff in nanoseconds, so that τ = Offset + Scale·z(Θ) (up to the
// rounding of τ to the nanosecond) for every Θ ≥ log10 2 (z ≥ 0). ok is false
// before the first heartbeat and when SkipIfSuspected is on (the default),
// since the window then depends on Θ.
func (d *Normal) LinearForm() (offset time.Duration, scale float64, ok bool) {
	if !d.arr.seen || d.skip {
		return 0, 0, false
	}
	return detector.AddSat(d.arr.last, time.Duration(math.Round(d.mu))), d.sd, true
}

// Mean returns μ + AcceptablePause, the mean inter-arrival time in use (m
// while bootstrapping) plus the pause: Akka's m'.
func (d *Normal) Mean() time.Duration { return time.Duration(math.Round(d.mu)) }

// StdDev returns σ_eff, the standard deviation in use.
func (d *Normal) StdDev() time.Duration { return time.Duration(math.Round(d.sd)) }

// BackwardArrivals returns how many heartbeats were dropped because they
// arrived before T_last (detector.BackwardCounter); none became a sample.
func (d *Normal) BackwardArrivals() uint64 { return d.arr.back }
