package twowfd

import (
	"cmp"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

// Defaults of the two windows (see the package documentation for the
// reasoning).
const (
	// DefaultShortWindowSize is n1, the short window.
	DefaultShortWindowSize = 1
	// DefaultLongWindowSize is n2, the long window: chen.DefaultWindowSize.
	DefaultLongWindowSize = chen.DefaultWindowSize
)

// Config configures a Detector. The zero value means Δ = 100 ms, n1 = 1,
// n2 = 1000, α = Δ, warm-up until the long window is full, restart after a
// backwards jump of more than 100 sequence numbers.
type Config struct {
	// Interval is Δ, the sender's nominal heartbeat interval. Default
	// chen.DefaultInterval (100 ms); must not be negative.
	Interval time.Duration
	// ShortWindowSize is n1. Default DefaultShortWindowSize (1); must not be
	// negative nor larger than the long window.
	ShortWindowSize int
	// LongWindowSize is n2. Default DefaultLongWindowSize (1000); must not be
	// negative.
	LongWindowSize int
	// Margin is the constant safety margin α ≥ 0. Default: Δ. To sweep α
	// use LinearForm rather than one detector per α.
	Margin *time.Duration
	// MinSamples is the warm-up length: WarmingUp is true while the long
	// window holds fewer samples. Default: n2, as for NFD-E; new(0) turns
	// warm-up off. Must be between 0 and n2.
	MinSamples *int
	// RestartJump: a sequence number more than RestartJump below ℓ is a
	// sender restart and resets both windows. Default
	// chen.DefaultRestartJump (100).
	RestartJump *uint64
}

// Detector is 2W-FD (Tomsic et al., IPDPS 2015, the freshness point of the
// algorithm's description; docs/algorithms.md, “2W-FD”):
//
//	EA^(n)_{ℓ+1} = (1/n')·Σ_{j∈W_n} (A_j − Δ·s_j) + (ℓ+1)·Δ   (NFD-E: Chen, Toueg, Aguilera 2002, §6)
//	τ_{ℓ+1} = max(EA^(n1)_{ℓ+1}, EA^(n2)_{ℓ+1}) + α
//
// where W_n holds the n most recently received heartbeats. The monitor
// suspects at t iff t > τ_{ℓ+1}. Both estimates come from chen.Estimator,
// so awkward input is handled as by chen.Detector: duplicates and stale
// heartbeats are dropped, a late heartbeat enters the windows without
// moving τ, a backwards jump of more than RestartJump resets both windows
// and the warm-up, and heartbeats without sequence numbers are numbered by
// arrival. τ saturates at the ends of the time.Duration range.
//
// A Detector is not safe for concurrent use.
type Detector struct {
	short, long *chen.Estimator
	alpha       time.Duration
	minSamples  int
	ea          time.Duration // max(EA^(n1), EA^(n2)) for ℓ+1
	tau         time.Duration
	seen        bool
}

var _ detector.Linear = (*Detector)(nil)

// New returns a detector, or an error naming the first invalid field.
func New(cfg Config) (*Detector, error) {
	if cfg.LongWindowSize < 0 {
		return nil, fmt.Errorf("twowfd: LongWindowSize %d is negative", cfg.LongWindowSize)
	}
	if cfg.ShortWindowSize < 0 {
		return nil, fmt.Errorf("twowfd: ShortWindowSize %d is negative", cfg.ShortWindowSize)
	}
	cfg.LongWindowSize = cmp.Or(cfg.LongWindowSize, DefaultLongWindowSize)
	cfg.ShortWindowSize = cmp.Or(cfg.ShortWindowSize, DefaultShortWindowSize)
	if cfg.ShortWindowSize > cfg.LongWindowSize {
		return nil, fmt.Errorf("twowfd: ShortWindowSize %d is larger than LongWindowSize %d", cfg.ShortWindowSize, cfg.LongWindowSize)
	}
	ec := chen.EstimatorConfig{Interval: cfg.Interval, WindowSize: cfg.LongWindowSize, RestartJump: cfg.RestartJump}
	long, err := chen.NewEstimator(ec)
	if err != nil {
		return nil, fmt.Errorf("twowfd: %w", err)
	}
	ec.WindowSize = cfg.ShortWindowSize
	short, err := chen.NewEstimator(ec)
	if err != nil {
		return nil, fmt.Errorf("twowfd: %w", err)
	}
	alpha := detector.OrDefault(cfg.Margin, long.Interval())
	if alpha < 0 {
		return nil, fmt.Errorf("twowfd: Margin %v is negative", alpha)
	}
	m, err := chen.MinSamples(cfg.MinSamples, cfg.LongWindowSize)
	if err != nil {
		return nil, fmt.Errorf("twowfd: %w", err)
	}
	return &Detector{short: short, long: long, alpha: alpha, minSamples: m}, nil
}

// Short returns the estimator of the short window n1 (read it, do not feed
// it).
func (d *Detector) Short() *chen.Estimator { return d.short }

// Long returns the estimator of the long window n2 (read it, do not feed
// it).
func (d *Detector) Long() *chen.Estimator { return d.long }

// Margin returns α.
func (d *Detector) Margin() time.Duration { return d.alpha }

// Observe records a heartbeat in both windows and, if it is Fresh (or a
// restart), recomputes τ. The two estimators classify a heartbeat alike
// except for late ones, which only a window that can still hold them
// keeps; those never move τ.
func (d *Detector) Observe(hb detector.Heartbeat) {
	d.short.Observe(hb)
	switch d.long.Observe(hb) {
	case chen.Fresh, chen.Restart:
		d.ea = max(d.short.Next(), d.long.Next())
		d.tau, d.seen = detector.AddSat(d.ea, d.alpha), true
	}
}

// ExpectedArrival returns max(EA^(n1)_{ℓ+1}, EA^(n2)_{ℓ+1}), 0 before the
// first heartbeat.
func (d *Detector) ExpectedArrival() time.Duration { return d.ea }

// FreshnessPoint returns τ_{ℓ+1}; ok is false before the first heartbeat.
func (d *Detector) FreshnessPoint() (time.Duration, bool) { return d.tau, d.seen }

// WarmingUp reports whether the long window holds fewer than MinSamples
// samples.
func (d *Detector) WarmingUp() bool { return d.long.Len() < d.minSamples }

// Suspected reports now > τ.
func (d *Detector) Suspected(now time.Duration) bool { return d.seen && now > d.tau }

// LinearForm returns Offset = max(EA^(n1), EA^(n2)) and Scale = 1: τ is
// linear in α (in nanoseconds), and neither estimate depends on α. ok is
// false before the first heartbeat.
func (d *Detector) LinearForm() (time.Duration, float64, bool) {
	return d.ea, 1, d.seen
}

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before the newest Fresh one (detector.BackwardCounter; chen.Backward).
func (d *Detector) BackwardArrivals() uint64 { return d.long.BackwardArrivals() }
