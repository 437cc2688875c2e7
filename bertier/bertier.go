package bertier

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/jacobson"
)

// Defaults of Bertier, Marin and Sens as stated in [SFD-zh] and in the public
// implementations checked for docs/algorithms.md, “Bertier's adaptive margin”.
const (
	DefaultGain = 0.1 // γ
	DefaultBeta = 1.0 // β, weight of the smoothed error (delay)
	DefaultPhi  = 4.0 // φ, weight of the mean deviation (var)
)

// LossRule says which expected arrival a heartbeat's error is measured against
// after a loss (docs/algorithms.md, “Bertier's adaptive margin”, where the
// choice is argued).
type LossRule int

const (
	// ErrorVsReceived compares A_k with EA(k), the expected arrival of the
	// sequence number actually received (window before inserting k). The
	// fdkit default: a loss does not inflate the error.
	ErrorVsReceived LossRule = iota
	// ErrorVsNext compares A_k with EA_{ℓ+1}, the prediction made at the
	// previous heartbeat, as sequence-less implementations do; each lost
	// heartbeat adds about Δ to the error.
	ErrorVsNext
)

// Config configures a Detector. The zero value means γ = 0.1, β = 1, φ = 4,
// Chen's defaults for Δ (100 ms), n (1000) and restarts, warm-up until the
// window is full, and ErrorVsReceived.
type Config struct {
	// Estimator sets Δ, n and the restart threshold of the NFD-E estimate.
	Estimator chen.EstimatorConfig
	// Gain is γ, in (0, 1]. Default DefaultGain.
	Gain float64
	// Beta is β, finite and > 0. Default DefaultBeta.
	Beta float64
	// Phi is φ, finite and > 0. Default DefaultPhi.
	Phi float64
	// MinSamples is the warm-up length (WarmingUp is true while the window
	// holds fewer samples). Default: the window size, as in the literature;
	// new(0) turns warm-up off.
	MinSamples *int
	// LossRule selects the error after a loss. Default ErrorVsReceived.
	LossRule LossRule
}

// Detector is the adaptable failure detector of Bertier, Marin and Sens
// ("Implementation and performance evaluation of an adaptable failure
// detector", DSN 2002; docs/algorithms.md, “Bertier's adaptive margin”): Chen's
// NFD-E expected arrival with a safety margin from a Jacobson filter of its
// prediction error. On a heartbeat k (A_k its arrival, EA_k the expected
// arrival):
//
//	error_k     = A_k − EA_k − delay_k
//	delay_{k+1} = delay_k + γ·error_k
//	var_{k+1}   = var_k + γ·(|error_k| − var_k)
//	α_{k+1}     = β·delay_{k+1} + φ·var_{k+1}
//	τ_{k+1}     = EA_{k+1} + α_{k+1}
//
// delay and var start at 0. The expected arrivals come from a
// chen.Estimator and delay and var are a jacobson.Estimator with both gains
// γ and InitZero (the same update: deviation first, with the old mean).
//
// Awkward input: a single heartbeat gives τ = A + Δ (α = 0); zero variance
// makes delay and var decay to 0 and τ to EA; duplicates and stale numbers
// are dropped; a late heartbeat (s < ℓ) enters the window but updates
// neither delay, var nor τ; a backwards jump of more than RestartJump is a
// sender restart and resets everything, warm-up included; an arrival
// earlier than the newest Fresh one (the clock went backwards) is dropped
// and counted (BackwardArrivals), never an error sample; a gap of hours is counted: its error raises delay and var by
// γ·gap, which decays by a factor 1−γ per heartbeat; a burst of losses is
// absorbed by the sequence numbers under ErrorVsReceived; τ saturates at
// the ends of the time.Duration range rather than wrapping.
type Detector struct {
	est        *chen.Estimator
	filter     *jacobson.Estimator
	beta, phi  float64
	minSamples int
	rule       LossRule
	lastErr    float64
	tau        time.Duration
	eaRel      float64 // EA_{ℓ+1} − T_last, ns (T_last: est.LastArrival)
	cached     bool    // eaRel matches the window
	seen       bool
}

var _ detector.Linear = (*Detector)(nil)

// New returns a detector, or an error describing the first invalid field.
func New(cfg Config) (*Detector, error) {
	est, err := chen.NewEstimator(cfg.Estimator)
	if err != nil {
		return nil, err
	}
	cfg.Gain = cmp.Or(cfg.Gain, DefaultGain)
	filter, err := jacobson.NewEstimator(jacobson.EstimatorConfig{Gain: cfg.Gain, DevGain: cfg.Gain, Init: jacobson.InitZero})
	if err != nil {
		return nil, fmt.Errorf("bertier: gain γ: %w", err)
	}
	cfg.Beta = cmp.Or(cfg.Beta, DefaultBeta)
	cfg.Phi = cmp.Or(cfg.Phi, DefaultPhi)
	if !(cfg.Beta > 0) || math.IsInf(cfg.Beta, 0) {
		return nil, fmt.Errorf("bertier: β %v must be finite and > 0", cfg.Beta)
	}
	if !(cfg.Phi > 0) || math.IsInf(cfg.Phi, 0) {
		return nil, fmt.Errorf("bertier: φ %v must be finite and > 0", cfg.Phi)
	}
	if cfg.LossRule != ErrorVsReceived && cfg.LossRule != ErrorVsNext {
		return nil, fmt.Errorf("bertier: unknown LossRule %d", cfg.LossRule)
	}
	m, err := chen.MinSamples(cfg.MinSamples, est.WindowSize())
	if err != nil {
		return nil, err
	}
	return &Detector{est: est, filter: filter, beta: cfg.Beta, phi: cfg.Phi, minSamples: m, rule: cfg.LossRule}, nil
}

// Observe records a heartbeat; see Detector for what is dropped or reset.
func (d *Detector) Observe(hb detector.Heartbeat) {
	switch d.est.Classify(hb) {
	case chen.Duplicate, chen.Stale:
		return
	case chen.Backward:
		d.est.Observe(hb) // counted, not recorded
		return
	case chen.Late:
		d.est.Observe(hb)
		d.cached = false // the window changed: EA_{ℓ+1} moved
		return
	case chen.Restart:
		d.est.Reset()
		d.filter.Reset()
		d.lastErr, d.cached = 0, false
	case chen.Fresh:
		if last, ok := d.est.Last(); ok {
			k := d.est.SeqOf(hb)
			if d.rule == ErrorVsNext {
				k = last + 1
			}
			var r float64 // A_k − EA(k), ns
			if d.cached {
				// EA(k) = EA_{ℓ+1} + (k−ℓ−1)·Δ, from the value kept at ℓ.
				r = float64(hb.Arrival-d.est.LastArrival()-d.est.Interval()*time.Duration(int64(k-last-1))) - d.eaRel
			} else {
				r = -d.est.ExpectedArrivalSince(k, hb.Arrival)
			}
			d.lastErr = r - d.filter.SRTTNanos()
			d.filter.UpdateNanos(r)
		}
	}
	d.est.Observe(hb)
	last, _ := d.est.Last()
	d.eaRel = d.est.ExpectedArrivalSince(last+1, hb.Arrival)
	d.cached = true
	d.tau = addNanos(hb.Arrival, d.eaRel+d.marginNanos())
	d.seen = true
}

// addNanos returns t + x nanoseconds, rounded and saturating at the ends of
// the Duration range. x itself may lie beyond the range (a negative t plus
// more than math.MaxInt64 can still be an instant that fits): it is then
// added in two halves.
func addNanos(t time.Duration, x float64) time.Duration {
	if math.Abs(x) < 0x1p63 {
		return detector.AddSat(t, detector.RoundNanos(x))
	}
	h := x / 2
	return detector.AddSat(detector.AddSat(t, detector.RoundNanos(h)), detector.RoundNanos(x-h))
}

func (d *Detector) marginNanos() float64 {
	return d.beta*d.filter.SRTTNanos() + d.phi*d.filter.RTTVARNanos()
}

// Estimator returns the NFD-E estimator (read it, do not feed it).
func (d *Detector) Estimator() *chen.Estimator { return d.est }

// ErrorFilter returns the delay/var filter (SRTT is delay, RTTVAR is var).
func (d *Detector) ErrorFilter() *jacobson.Estimator { return d.filter }

// LastError returns error_k of the newest Fresh heartbeat (0 for the first).
func (d *Detector) LastError() time.Duration { return detector.RoundNanos(d.lastErr) }

// Margin returns α = β·delay + φ·var, rounded to the nanosecond. It can be
// negative when heartbeats arrive earlier than EA.
func (d *Detector) Margin() time.Duration { return detector.RoundNanos(d.marginNanos()) }

// FreshnessPoint returns τ_{ℓ+1} = EA_{ℓ+1} + α; ok is false before the
// first heartbeat. During warm-up it is returned too, and WarmingUp is true.
func (d *Detector) FreshnessPoint() (time.Duration, bool) { return d.tau, d.seen }

// WarmingUp reports whether the window holds fewer than MinSamples samples.
func (d *Detector) WarmingUp() bool { return d.est.Len() < d.minSamples }

// Suspected reports now > τ.
func (d *Detector) Suspected(now time.Duration) bool { return d.seen && now > d.tau }

// LinearForm returns τ as linear in φ (an fdkit extension: Bertier has no swept
// parameter, docs/algorithms.md, “Sweeping a parameter in one pass”): Offset =
// EA_{ℓ+1} + β·delay, Scale = var in nanoseconds. delay and var do not depend
// on φ nor on the detector's outputs. ok is false before the first heartbeat.
func (d *Detector) LinearForm() (time.Duration, float64, bool) {
	if !d.seen {
		return 0, 0, false
	}
	return addNanos(d.est.LastArrival(), d.eaRel+d.beta*d.filter.SRTTNanos()), d.filter.RTTVARNanos(), true
}

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before the newest Fresh one (detector.BackwardCounter; chen.Backward).
func (d *Detector) BackwardArrivals() uint64 { return d.est.BackwardArrivals() }
