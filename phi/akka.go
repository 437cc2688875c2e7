package phi

import (
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Defaults of Akka's model (akka.cluster.failure-detector in Akka's
// reference.conf).
const (
	DefaultAkkaWindowSize        = 1000
	DefaultAkkaMinStdDev         = 100 * time.Millisecond
	DefaultAkkaAcceptablePause   = 3 * time.Second
	DefaultAkkaBootstrapInterval = time.Second
)

// AkkaConfig configures an Akka detector. The zero value means Akka's
// defaults; pointer fields follow fdkit's rule on zero (see package
// detector): nil is the default, new(v) says any value, zero included.
type AkkaConfig struct {
	// Threshold Θ. Default DefaultThreshold (8); must be finite and not
	// negative (0 means the default).
	Threshold float64
	// WindowSize (Akka's max-sample-size): the number of most recent
	// intervals kept. Default DefaultAkkaWindowSize (1000); must not be
	// negative.
	WindowSize int
	// MinStdDev (Akka's min-std-deviation): s' = max(σ, MinStdDev).
	// Default (nil): DefaultAkkaMinStdDev (100 ms); new(0) turns the floor
	// off (s' is still at least 1 ns; Akka itself requires a positive
	// value). Must not be negative.
	MinStdDev *time.Duration
	// AcceptablePause (Akka's acceptable-heartbeat-pause), added to the
	// mean: m' = μ + pause. Default (nil): DefaultAkkaAcceptablePause (3 s);
	// new(0) means no pause (m' = μ). Must not be negative.
	AcceptablePause *time.Duration
	// BootstrapInterval m (Akka's heartbeat-interval): on the first
	// heartbeat the history becomes the two samples m − m/4 and m + m/4.
	// Default (nil): DefaultAkkaBootstrapInterval (1 s); new(0) seeds two
	// zero intervals. Must not be negative.
	BootstrapInterval *time.Duration
	// MinSamples: WarmingUp reports true until this many real intervals have
	// been recorded. Default (nil): 0, Akka relies on its bootstrap and has
	// no warm-up. Must be in [0, WindowSize].
	MinSamples *int
	// RelearnAfter K, the relearn rule (an fdkit deviation from Akka;
	// docs/algorithms.md, “Not locking out a sender whose rate changed”): an
	// interval that ends while the process is suspected is kept aside; the
	// K-th such interval, with fewer than K recorded in a row between any
	// two, records the whole run, and so is every further one until K in a
	// row end while the process is trusted. A sender whose interval grew
	// beyond the acceptable pause for good, or whose heartbeats now come in
	// pairs or bursts with gaps beyond it, is learnt instead of suspected for
	// ever; an outage, one long interval, is still not learnt. Default
	// (nil): min(DefaultRelearnAfter (10), WindowSize); new(0) is Akka's
	// rule as is. Must be in [0, WindowSize].
	RelearnAfter *int
}

// Akka is the φ accrual failure detector as implemented in Akka's
// PhiAccrualFailureDetector (akka-remote; defaults from akka-cluster's
// reference.conf), itself based on Hayashibara et al. (SRDS 2004). See
// docs/algorithms.md, “φ accrual: Akka's variant”.
//
// With μ and σ the mean and population standard deviation of the history,
// m' = μ + acceptable pause and s' = max(σ, min std deviation):
//
//	y = (t − T_last − m')/s',  φ = −log10(e/(1 + e)),  e = exp(−y·(1.5976 + 0.070566·y²))
//
// (AkkaLevelOfY), a logistic approximation of −log10 Q(y): its thresholds
// are not interchangeable with the normal model's. The freshness point is
// τ = T_last + m' + s'·y(Θ), with y(Θ) the real root of a cubic
// (AkkaYOfLevel), cached at construction.
//
// History: before the first heartbeat φ = 0. The first heartbeat puts the
// two synthetic samples m ± m/4 into the history, where they stay until
// pushed out. Afterwards an interval is recorded only if the process was
// trusted when it ended (φ < Θ at the arrival, that is arrival < τ with τ
// computed before the heartbeat); otherwise only T_last moves, so that the
// first heartbeat after a pause does not skew the statistics. In Akka, if
// every heartbeat arrives after τ the history never learns; here the relearn
// rule (AkkaConfig.RelearnAfter, an fdkit deviation) records a run of K
// intervals left out (fewer than K recorded in a row between any two), and
// every further one until K in a row end while the process is trusted, so
// that a sender slower than m' + s'·y(Θ) for good is learnt. Because the
// history depends on Θ, Akka does not implement detector.Linear; Form and
// Fork let a threshold sweep replay the thresholds that share a history as
// one detector and split them where their histories part.
//
// Awkward input follows the package rules (Akka itself has no sequence
// numbers; fdkit ignores stale ones). A gap of hours ends while the process
// is suspected, so it is not recorded. An Akka is not safe for concurrent
// use.
type Akka struct {
	window     *detector.Window
	threshold  float64
	yTh        float64 // y(Θ)
	minStd     float64 // ns
	pause      float64 // ns
	first      time.Duration
	minSamples int
	relearn    relearn

	arr      arrivals
	recorded int     // real intervals recorded
	mean     float64 // m' in ns
	sd       float64 // s' in ns
	tstar    float64 // t*(Θ) in ns
	tau      time.Duration
}

var _ detector.Accrual = (*Akka)(nil)

// NewAkka returns an Akka-model φ detector, or an error for a negative
// WindowSize, MinStdDev or BootstrapInterval, a threshold that
// is negative, NaN or infinite, or MinSamples or RelearnAfter outside [0,
// WindowSize].
func NewAkka(cfg AkkaConfig) (*Akka, error) {
	f := fields{model: "akka"}
	cfg.Threshold = f.threshold(cfg.Threshold)
	cfg.WindowSize = f.window(cfg.WindowSize, DefaultAkkaWindowSize)
	minStd := f.duration("MinStdDev", cfg.MinStdDev, DefaultAkkaMinStdDev)
	pause := f.duration("AcceptablePause", cfg.AcceptablePause, DefaultAkkaAcceptablePause)
	bootstrap := f.duration("BootstrapInterval", cfg.BootstrapInterval, DefaultAkkaBootstrapInterval)
	minSamples := f.minSamples(cfg.MinSamples, 0, cfg.WindowSize)
	if f.err != nil {
		return nil, f.err
	}
	rl, err := newRelearn("akka", cfg.RelearnAfter, cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	w, err := detector.NewWindow(cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	return &Akka{
		relearn:    rl,
		window:     w,
		threshold:  cfg.Threshold,
		yTh:        AkkaYOfLevel(cfg.Threshold),
		minStd:     float64(minStd),
		pause:      float64(pause),
		first:      bootstrap,
		minSamples: minSamples,
	}, nil
}

// Threshold returns Θ.
func (d *Akka) Threshold() float64 { return d.threshold }

// Window returns the history of intervals, synthetic samples included (read
// it, do not add to it).
func (d *Akka) Window() *detector.Window { return d.window }

// Observe records a heartbeat (see the type documentation for the update
// rule).
func (d *Akka) Observe(hb detector.Heartbeat) {
	iv, _, first, ok := d.arr.accept(hb)
	if !ok {
		return
	}
	if first {
		m := d.first
		d.window.Add(m - m/4)
		d.window.Add(m + m/4)
	} else if float64(iv) < d.tstar {
		// φ(iv) < Θ ⇔ iv < t*(Θ), φ being increasing: no transcendental
		// function on the heartbeat path.
		d.window.Add(iv)
		d.recorded++
		d.relearn.recorded()
	} else {
		d.recorded += d.relearn.skipped(iv, d.window)
	}
	mean, sd := d.window.MeanStdDev()
	d.mean = mean + d.pause
	d.sd = max(sd, d.minStd)
	if d.sd < 1 {
		d.sd = 1 // m = 0 and no real interval yet: keep y finite
	}
	d.refresh()
}

// refresh derives t*(Θ) and τ from m', s' and T_last.
func (d *Akka) refresh() {
	d.tstar = AkkaCrossing(d.mean, d.sd, d.yTh)
	d.tau = freshnessPoint(d.arr.last, d.tstar)
}

// AkkaCrossing returns t* = max(0, m' + s'·y) in nanoseconds for m' and s' in
// nanoseconds: the time elapsed since T_last at which the standardized elapsed
// time (t − T_last − m')/s' reaches y (docs/algorithms.md, “φ accrual: Akka's
// variant”). An Akka detector with threshold Θ uses y = AkkaYOfLevel(Θ): it
// records the next interval I iff float64(I) < t* (or the relearn rule
// says so), and τ = T_last + ⌈t*⌉ (saturating).
func AkkaCrossing(mean, sd, y float64) float64 { return max(0, mean+sd*y) }

// Form returns what the freshness point depends on besides Θ: T_last and
// m', s' in nanoseconds (unrounded, as Observe computed them). For any
// threshold Θ, AkkaCrossing(mean, sd, AkkaYOfLevel(Θ)) is the t*(Θ) this
// state would use, so a threshold sweep can evaluate many thresholds that
// share a history at once. ok is false before the first heartbeat.
func (d *Akka) Form() (last time.Duration, mean, sd float64, ok bool) {
	return d.arr.last, d.mean, d.sd, d.arr.seen
}

// Fork returns an independent copy of d (history with its synthetic
// samples, T_last, sequence state, count of recorded intervals, the run of
// the relearn rule) with
// threshold Θ (0 means DefaultThreshold): the detector a replay with
// threshold Θ would have reached had it recorded the same intervals as d.
// A threshold sweep replays thresholds that agree on their history as one
// detector and forks it when an arrival falls between their crossings
// (qos.PhiAkkaFamily). Errors: a threshold NewAkka rejects.
func (d *Akka) Fork(threshold float64) (*Akka, error) {
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	if err := checkThreshold("akka", threshold); err != nil {
		return nil, err
	}
	c := *d
	c.window = d.window.Clone()
	c.relearn = d.relearn.clone()
	c.threshold = threshold
	c.yTh = AkkaYOfLevel(threshold)
	if c.arr.seen {
		c.refresh()
	}
	return &c, nil
}

// SameHistory reports whether d and o differ at most in their threshold:
// the same settings, T_last and sequence state, history (the same samples
// in the same order), run of the relearn rule and warm-up state (the count
// of recorded intervals, up to MinSamples), hence the same m' and s'. Each
// then goes on as a Fork of the other with its own threshold would: a
// threshold sweep that forked thresholds apart (see Fork) joins them again
// once their histories agree.
func (d *Akka) SameHistory(o *Akka) bool {
	return d.minStd == o.minStd && d.pause == o.pause && d.first == o.first && d.minSamples == o.minSamples &&
		min(d.recorded, d.minSamples) == min(o.recorded, o.minSamples) &&
		d.arr == o.arr && d.mean == o.mean && d.sd == o.sd &&
		d.relearn.equal(&o.relearn) && d.window.Equal(o.window)
}

// Level returns φ(now) per AkkaLevelOfY: 0 before the first heartbeat,
// elapsed times below 0 count as 0, never NaN or negative, finite for every
// now.
func (d *Akka) Level(now time.Duration) float64 {
	if !d.arr.seen {
		return 0
	}
	return AkkaLevelOfY((d.arr.elapsed(now) - d.mean) / d.sd)
}

// ElapsedFor returns t*(level) = m' + s'·y(level), clamped at 0 and rounded
// up to the nanosecond. ok is false before the first heartbeat, for a NaN
// level, and when t* does not fit in a time.Duration.
func (d *Akka) ElapsedFor(level float64) (time.Duration, bool) {
	if !d.arr.seen || math.IsNaN(level) {
		return 0, false
	}
	return ceilDuration(d.mean + d.sd*AkkaYOfLevel(level))
}

// FreshnessPoint returns τ = T_last + t*(Θ); ok is false before the first
// heartbeat.
func (d *Akka) FreshnessPoint() (time.Duration, bool) { return d.tau, d.arr.seen }

// WarmingUp reports whether no heartbeat was seen or fewer than MinSamples
// real intervals have been recorded.
func (d *Akka) WarmingUp() bool { return !d.arr.seen || d.recorded < d.minSamples }

// Suspected reports now > τ.
func (d *Akka) Suspected(now time.Duration) bool { return d.arr.seen && now > d.tau }

// Mean returns m' = μ + acceptable pause.
func (d *Akka) Mean() time.Duration { return time.Duration(math.Round(d.mean)) }

// StdDev returns s' = max(σ, min std deviation).
func (d *Akka) StdDev() time.Duration { return time.Duration(math.Round(d.sd)) }

// BackwardArrivals returns how many heartbeats were dropped because they
// arrived before T_last (detector.BackwardCounter); none became a sample.
func (d *Akka) BackwardArrivals() uint64 { return d.arr.back }
