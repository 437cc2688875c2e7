package phi

import (
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Defaults of Cassandra's model: Cassandra's fd_initial_value_ms and
// fd_max_interval_ms both default to twice its gossip interval of 1 s
// (gms/FailureDetector.java; Scylla's options of the same names default to
// 2000 ms too).
const (
	DefaultCassandraBootstrapInterval = 2 * time.Second
	DefaultCassandraMaxInterval       = 2 * time.Second
)

// CassandraConfig configures a Cassandra detector. The zero value means
// Cassandra's defaults; pointer fields follow fdkit's rule on zero (see
// package detector): nil is the default, new(v) says any value, zero
// included.
type CassandraConfig struct {
	// Threshold Θ (phi_convict_threshold). Default DefaultThreshold (8);
	// must be finite and not negative (0 means the default).
	Threshold float64
	// WindowSize: the number of most recent intervals kept. Default
	// DefaultWindowSize (1000); must not be negative.
	WindowSize int
	// BootstrapInterval (fd_initial_value_ms): the first heartbeat records
	// this interval, which stays in the window until pushed out. Default
	// (nil): DefaultCassandraBootstrapInterval (2 s); new(0) records no seed
	// interval (until the second heartbeat the window is empty, μ is floored
	// at 1 ns and the process is suspected as soon as time passes). Must not
	// be negative.
	BootstrapInterval *time.Duration
	// MaxInterval (fd_max_interval_ms): longer intervals are not recorded
	// (T_last still moves). Default (nil): DefaultCassandraMaxInterval (2 s);
	// new(0) means no cap. Must not be negative.
	MaxInterval *time.Duration
	// MinSamples: WarmingUp reports true until this many real intervals are
	// in the window. Default (nil): 0, Cassandra has no warm-up. Must be in
	// [0, WindowSize].
	MinSamples *int
	// RelearnAfter K, the relearn rule (an fdkit deviation from Cassandra;
	// docs/algorithms.md, “Not locking out a sender whose rate changed”): an
	// interval above MaxInterval is kept aside; the K-th such interval, with
	// fewer than K recorded in a row between any two, records the whole run,
	// and so is every further one above the cap until K in a row are not. A sender whose interval grew above the cap for good
	// is learnt instead of suspected for ever (Cassandra's gossip runs every
	// second, so Cassandra itself never meets the case); an outage, one long
	// interval, is still not learnt. While every interval exceeds the cap the
	// run does not end, so the cap then keeps nothing out. Default (nil):
	// min(DefaultRelearnAfter (10), WindowSize); new(0) is Cassandra's rule
	// as is. Must be in [0, WindowSize].
	RelearnAfter *int
}

// Cassandra is the φ accrual failure detector of Apache Cassandra
// (gms/FailureDetector.java, ArrivalWindow; CASSANDRA-2597), following
// Hayashibara et al. (SRDS 2004) with an exponential model of inter-arrival
// times (docs/algorithms.md, “φ accrual: Cassandra's variant”):
//
//	P_later(x) = exp(−x/μ),  φ(t) = (t − T_last)/(μ·ln 10),  t*(Θ) = Θ·μ·ln 10
//
// with μ the window mean. It is the ED FD of Xiong et al. (IEEE JSAC 27(4),
// 2009) on a log scale: φ = −log10(1 − e_d), so E = 0.99 is Θ = 2
// (docs/algorithms.md, “φ accrual: Cassandra's variant”).
//
// Cassandra's guard against its own local pauses (convict nobody for a while
// after a pause of the monitor) belongs to a live monitor and is not part of
// this pure detector. Cassandra implements detector.Linear with p = Θ.
//
// Awkward input follows the package rules; intervals above MaxInterval
// (default 2 s), such as a gap of hours or a long loss burst, are not
// recorded. μ is floored at 1 ns so that φ stays finite when every recorded
// interval is zero. A Cassandra is not safe for concurrent use.
type Cassandra struct {
	window     *detector.Window
	threshold  float64
	initial    time.Duration
	maxIv      time.Duration // 0: no cap
	minSamples int
	relearn    relearn

	arr      arrivals
	recorded int
	scale    float64 // μ·ln 10 in ns
	tau      time.Duration
}

var (
	_ detector.Accrual = (*Cassandra)(nil)
	_ detector.Linear  = (*Cassandra)(nil)
)

// NewCassandra returns a Cassandra-model φ detector, or an error for a
// negative WindowSize, BootstrapInterval or MaxInterval, a threshold that is
// negative, NaN or infinite, or MinSamples or RelearnAfter outside [0,
// WindowSize].
func NewCassandra(cfg CassandraConfig) (*Cassandra, error) {
	f := fields{model: "cassandra"}
	cfg.Threshold = f.threshold(cfg.Threshold)
	cfg.WindowSize = f.window(cfg.WindowSize, DefaultWindowSize)
	initial := f.duration("BootstrapInterval", cfg.BootstrapInterval, DefaultCassandraBootstrapInterval)
	maxIv := f.duration("MaxInterval", cfg.MaxInterval, DefaultCassandraMaxInterval)
	minSamples := f.minSamples(cfg.MinSamples, 0, cfg.WindowSize)
	if f.err != nil {
		return nil, f.err
	}
	rl, err := newRelearn("cassandra", cfg.RelearnAfter, cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	w, err := detector.NewWindow(cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	return &Cassandra{
		relearn:    rl,
		window:     w,
		threshold:  cfg.Threshold,
		initial:    initial,
		maxIv:      maxIv,
		minSamples: minSamples,
	}, nil
}

// Threshold returns Θ.
func (d *Cassandra) Threshold() float64 { return d.threshold }

// Window returns the window of intervals, the initial interval included
// (read it, do not add to it).
func (d *Cassandra) Window() *detector.Window { return d.window }

// Observe records a heartbeat: the initial interval on the first heartbeat,
// afterwards I = A − T_last unless it exceeds MaxInterval (subject to the
// relearn rule); T_last = A.
func (d *Cassandra) Observe(hb detector.Heartbeat) {
	iv, _, first, ok := d.arr.accept(hb)
	if !ok {
		return
	}
	switch {
	case first:
		if d.initial > 0 {
			d.window.Add(d.initial)
		}
	case d.maxIv == 0 || iv <= d.maxIv:
		d.window.Add(iv)
		d.recorded++
		d.relearn.recorded()
	default:
		d.recorded += d.relearn.skipped(iv, d.window)
	}
	d.scale = max(d.window.Mean(), 1) * math.Ln10
	d.tau = freshnessPoint(d.arr.last, d.threshold*d.scale)
}

// Level returns φ(now) = (now − T_last)/(μ·ln 10): 0 before the first
// heartbeat, elapsed times below 0 count as 0, never NaN or negative, finite
// for every now.
func (d *Cassandra) Level(now time.Duration) float64 {
	if !d.arr.seen {
		return 0
	}
	return d.arr.elapsed(now) / d.scale
}

// ElapsedFor returns t*(level) = level·μ·ln 10, rounded up to the nanosecond
// (0 for level ≤ 0). ok is false before the first heartbeat, for a NaN
// level, and when t* does not fit in a time.Duration.
func (d *Cassandra) ElapsedFor(level float64) (time.Duration, bool) {
	if !d.arr.seen || math.IsNaN(level) {
		return 0, false
	}
	return ceilDuration(level * d.scale)
}

// FreshnessPoint returns τ = T_last + Θ·μ·ln 10; ok is false before the
// first heartbeat.
func (d *Cassandra) FreshnessPoint() (time.Duration, bool) { return d.tau, d.arr.seen }

// WarmingUp reports whether no heartbeat was seen or fewer than MinSamples
// real intervals are in the window.
func (d *Cassandra) WarmingUp() bool {
	return !d.arr.seen || min(d.recorded, d.window.Size()) < d.minSamples
}

// Suspected reports now > τ.
func (d *Cassandra) Suspected(now time.Duration) bool { return d.arr.seen && now > d.tau }

// LinearForm returns Offset = T_last and Scale = μ·ln 10 in nanoseconds, so
// that τ = Offset + Scale·Θ (up to the rounding of τ to the nanosecond). ok
// is false before the first heartbeat.
func (d *Cassandra) LinearForm() (offset time.Duration, scale float64, ok bool) {
	if !d.arr.seen {
		return 0, 0, false
	}
	return d.arr.last, d.scale, true
}

// Mean returns μ, the window mean (initial interval included).
func (d *Cassandra) Mean() time.Duration { return d.window.MeanDuration() }

// BackwardArrivals returns how many heartbeats were dropped because they
// arrived before T_last (detector.BackwardCounter); none became a sample.
func (d *Cassandra) BackwardArrivals() uint64 { return d.arr.back }
