package chen

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Config configures a Detector. The zero value means Δ = 100 ms, n = 1000,
// α = Δ, warm-up until the window is full, restart after a backwards jump
// of more than 100 sequence numbers. Pointer fields follow fdkit's rule on
// zero (see package detector): nil is the default, new(0) is zero.
type Config struct {
	// Estimator sets Δ, n and the restart threshold (see EstimatorConfig).
	Estimator EstimatorConfig
	// Margin is the constant safety margin α ≥ 0. Default: Δ. With α = 0
	// about half the heartbeats arrive after τ; to sweep α use LinearForm
	// rather than one detector per α.
	Margin *time.Duration
	// MinSamples is the warm-up length: WarmingUp is true while the window
	// holds fewer samples. Default: the window size n, as in the papers
	// (docs/algorithms.md, “Chen's NFD-E” and “Replaying a trace”). Must be
	// between 0 (no warm-up) and n.
	MinSamples *int
}

// Detector is NFD-E, the failure detector of Chen, Toueg and Aguilera for
// unsynchronised clocks with estimated expected arrivals ("On the quality
// of service of failure detectors", IEEE Trans. Computers 51(5):561–580,
// 2002; docs/algorithms.md, “Chen's NFD-E”):
//
//	τ_{ℓ+1} = EA_{ℓ+1} + α
//
// with EA from the Estimator; q suspects p at t iff t > τ_{ℓ+1}.
//
// Awkward input (see Kind): a single heartbeat gives EA = A + Δ; zero variance
// needs no special case; duplicates are dropped; a late heartbeat (s < ℓ)
// enters the window but τ is recomputed only at the next Fresh heartbeat, so it
// never extends trust and τ changes only when ℓ advances (as the replay of
// docs/algorithms.md, “Replaying a trace” assumes); a backwards jump of more
// than RestartJump resets the detector and its warm-up; a heartbeat arriving
// before the newest Fresh one (the clock went backwards) is dropped and
// counted (Backward, BackwardArrivals), never a sample; a gap of hours or a burst of losses is counted, and the sequence numbers keep
// EA right across it (docs/algorithms.md, “Chen's NFD-E”: 723, not 663).
// Heartbeats without sequence numbers are numbered by arrival (the simplified
// formula, see Estimator); one arriving before its predecessor is dropped.
//
// A sender pause that shifts its schedule without a sequence gap (a GC pause
// or SIGSTOP after which the sender goes on numbering from where it stopped)
// is not a loss: every later A_j − Δ·s_j is larger by the pause P, and EA
// catches up only as the old samples leave the window, so the detector keeps
// suspecting for about n·(1 − α/P) heartbeats (with n = 1000, α = 100 ms and
// P = 500 ms: 800 heartbeats, 80 s). Use a smaller window, a larger α, or
// Bertier's adaptive margin when senders may pause. τ saturates at the ends
// of the time.Duration range rather than wrapping.
//
// During warm-up FreshnessPoint still returns τ computed from the n' < n
// samples held, and WarmingUp is true.
type Detector struct {
	est        *Estimator
	alpha      time.Duration
	minSamples int
	tau        time.Duration
	seen       bool
}

var _ detector.Linear = (*Detector)(nil)

// New returns a detector, or an error describing the first invalid field.
func New(cfg Config) (*Detector, error) {
	est, err := NewEstimator(cfg.Estimator)
	if err != nil {
		return nil, err
	}
	alpha := detector.OrDefault(cfg.Margin, est.Interval())
	if alpha < 0 {
		return nil, fmt.Errorf("chen: Margin %v is negative", alpha)
	}
	m, err := MinSamples(cfg.MinSamples, est.WindowSize())
	if err != nil {
		return nil, err
	}
	return &Detector{est: est, alpha: alpha, minSamples: m}, nil
}

// MinSamples returns the warm-up length for a configured value m and window
// size n: n when m is nil, *m when 0 ≤ *m ≤ n, an error otherwise. Bertier
// and SFD use the same rule.
func MinSamples(m *int, n int) (int, error) {
	if m == nil {
		return n, nil
	}
	if *m < 0 || *m > n {
		return 0, fmt.Errorf("chen: MinSamples %d is not between 0 and the window size %d", *m, n)
	}
	return *m, nil
}

// Estimator returns the expected-arrival estimator (read it, do not feed it).
func (d *Detector) Estimator() *Estimator { return d.est }

// Margin returns α.
func (d *Detector) Margin() time.Duration { return d.alpha }

// Observe records a heartbeat and, if it is Fresh, recomputes τ.
func (d *Detector) Observe(hb detector.Heartbeat) {
	switch d.est.Observe(hb) {
	case Fresh, Restart:
		d.tau, d.seen = d.est.FreshnessPoint(d.alpha), true
	}
}

// FreshnessPoint returns τ_{ℓ+1} = EA_{ℓ+1} + α; ok is false before the
// first heartbeat.
func (d *Detector) FreshnessPoint() (time.Duration, bool) { return d.tau, d.seen }

// WarmingUp reports whether the window holds fewer than MinSamples samples.
func (d *Detector) WarmingUp() bool { return d.est.Len() < d.minSamples }

// Suspected reports now > τ.
func (d *Detector) Suspected(now time.Duration) bool { return d.seen && now > d.tau }

// LinearForm returns Offset = EA_{ℓ+1} and Scale = 1: τ = EA_{ℓ+1} + α with α
// in nanoseconds. ok is false before the first heartbeat.
func (d *Detector) LinearForm() (time.Duration, float64, bool) {
	return d.tau - d.alpha, 1, d.seen
}

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before the newest Fresh one (detector.BackwardCounter; chen.Backward).
func (d *Detector) BackwardArrivals() uint64 { return d.est.BackwardArrivals() }
