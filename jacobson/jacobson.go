package jacobson

import (
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Defaults of a Detector.
const (
	// DefaultK is the deviation multiplier of RFC 6298 (RTO = SRTT + 4·RTTVAR).
	DefaultK = 4.0
	// DefaultInitialTimeout is TO_init, the timeout after the first heartbeat
	// while no inter-arrival sample exists (RFC 6298 §2.1 uses 1 s for RTO).
	DefaultInitialTimeout = time.Second
	// DefaultRestartJump is the default Config.RestartJump.
	DefaultRestartJump = 100
)

// Config configures a Detector. The zero value means RFC 6298's gains and K,
// TO_init = 1 s, no clamp, inter-arrival times used as they are. Pointer
// fields follow fdkit's rule on zero (see package detector): nil is the
// default, new(v) says any value, zero included.
type Config struct {
	// Estimator sets the gains g and h (defaults 1/8 and 1/4) and the
	// initial state (default RFC 6298: SRTT = R, RTTVAR = R/2).
	Estimator EstimatorConfig
	// K is the deviation multiplier, finite and ≥ 0 (K = 0 gives TO =
	// SRTT). Default DefaultK (4).
	K *float64
	// InitialTimeout is TO_init, used from the first heartbeat until the
	// second gives the first sample (2Δ or 3Δ are sensible). Default
	// DefaultInitialTimeout (1 s); must not be negative.
	InitialTimeout *time.Duration
	// MinTimeout is TO_min, a floor on the timeout; 0 means none. With no
	// jitter RTTVAR decays to 0 and TO to the mean interval, so any slightly
	// late heartbeat becomes a mistake: set a floor in production (for
	// example 2Δ; [UIUC-notes] uses 3·T_probe). Must not be negative.
	MinTimeout time.Duration
	// MaxTimeout is TO_max, a ceiling on the timeout; 0 means none. It also
	// bounds the effect of a gap of hours. Must be 0 or ≥ MinTimeout.
	MaxTimeout time.Duration
	// DivideBySeqGap, when both heartbeats carry sequence numbers, divides the
	// inter-arrival time by the sequence gap s − ℓ before filtering it, so
	// that a lost heartbeat gives a sample near Δ instead of 2Δ.
	DivideBySeqGap bool
	// RestartJump: a sequence number more than RestartJump below the largest
	// seen is taken as a sender restart and resets the detector (the
	// heartbeat is then the first one). Default DefaultRestartJump (100).
	RestartJump *uint64
}

// Detector is the Jacobson/Karels timeout applied to heartbeat inter-arrival
// times (docs/algorithms.md, “Jacobson's estimator”; V. Jacobson, SIGCOMM 1988;
// RFC 6298 §2): the sample of heartbeat k is I_k = A_k − A_prev, the timeout is
//
//	TO = clamp(SRTT + K·RTTVAR, TO_min, TO_max)
//
// and the freshness point is τ = T_last + TO, with T_last the newest
// heartbeat's arrival. Before the second heartbeat TO = TO_init (clamped).
// The filter follows RFC 6298's order (deviation first, with the old SRTT);
// the variant of [UIUC-notes], SRTT first, gives a deviation smaller by the
// factor 1−g and is not implemented.
//
// Awkward input:
//   - A single heartbeat: τ = A + TO_init; no warm-up (WarmingUp is false
//     once a heartbeat was seen).
//   - Zero variance: RTTVAR decays geometrically to 0, TO to the interval;
//     never NaN. Use MinTimeout.
//   - Duplicate or stale sequence number (s ≤ ℓ, not a restart): ignored.
//   - Sequence number more than RestartJump below ℓ: reset (sender restart).
//   - Arrival earlier than T_last (clock going backwards): ignored, ℓ is not
//     advanced, τ never moves backwards because of it.
//   - Gap of hours: counted as one sample (divided by the sequence gap if
//     DivideBySeqGap); it inflates SRTT and RTTVAR for tens of heartbeats.
//     MaxTimeout bounds the effect.
//   - Burst of losses: counted as one long interval, or as the per-heartbeat
//     average with DivideBySeqGap.
//   - Instants near the ends of the time.Duration range: the inter-arrival
//     time is computed without overflow, and τ saturates at math.MaxInt64
//     (never wraps to a negative instant).
//
// Heartbeats without sequence numbers are accepted in arrival order.
type Detector struct {
	est         Estimator
	k           float64
	toInit      time.Duration
	toMin       time.Duration
	toMax       time.Duration
	divide      bool
	restartJump uint64

	last    time.Duration
	seq     uint64
	hasSeq  bool
	seen    bool
	tau     time.Duration
	to      time.Duration // TO behind tau
	clamped bool
	back    uint64 // heartbeats dropped for arriving before T_last
}

var _ detector.Linear = (*Detector)(nil)

// New returns a detector, or an error describing the first invalid field.
func New(cfg Config) (*Detector, error) {
	est, err := NewEstimator(cfg.Estimator)
	if err != nil {
		return nil, err
	}
	k := detector.OrDefault(cfg.K, DefaultK)
	if !(k >= 0) || math.IsInf(k, 0) {
		return nil, fmt.Errorf("jacobson: K %v must be finite and ≥ 0", k)
	}
	toInit := detector.OrDefault(cfg.InitialTimeout, DefaultInitialTimeout)
	switch {
	case toInit < 0:
		return nil, fmt.Errorf("jacobson: InitialTimeout %v is negative", toInit)
	case cfg.MinTimeout < 0:
		return nil, fmt.Errorf("jacobson: MinTimeout %v is negative", cfg.MinTimeout)
	case cfg.MaxTimeout < 0:
		return nil, fmt.Errorf("jacobson: MaxTimeout %v is negative", cfg.MaxTimeout)
	case cfg.MaxTimeout != 0 && cfg.MaxTimeout < cfg.MinTimeout:
		return nil, fmt.Errorf("jacobson: MaxTimeout %v is below MinTimeout %v", cfg.MaxTimeout, cfg.MinTimeout)
	}
	return &Detector{
		est: *est, k: k, toInit: toInit, toMin: cfg.MinTimeout,
		toMax: cfg.MaxTimeout, divide: cfg.DivideBySeqGap,
		restartJump: detector.OrDefault(cfg.RestartJump, DefaultRestartJump),
	}, nil
}

// Estimator returns the detector's SRTT/RTTVAR filter (read it, do not
// update it).
func (d *Detector) Estimator() *Estimator { return &d.est }

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before T_last (detector.BackwardCounter).
func (d *Detector) BackwardArrivals() uint64 { return d.back }

// K returns the deviation multiplier.
func (d *Detector) K() float64 { return d.k }

// Observe records a heartbeat; see Detector for what is ignored or reset.
func (d *Detector) Observe(hb detector.Heartbeat) {
	gap := uint64(1)
	if hb.HasSeq && d.hasSeq {
		if hb.Seq <= d.seq {
			if d.seq-hb.Seq <= d.restartJump {
				return // duplicate or stale
			}
			d.reset() // sender restart
		} else {
			gap = hb.Seq - d.seq
		}
	}
	if d.seen && hb.Arrival < d.last {
		d.back++
		return // monitor clock went backwards
	}
	if d.seen {
		// hb.Arrival ≥ d.last, so the unsigned difference is exact even
		// when the signed one would overflow (for example from a
		// negative instant near math.MinInt64 to a positive one).
		r := float64(uint64(hb.Arrival) - uint64(d.last))
		if d.divide && gap > 1 {
			r /= float64(gap)
		}
		d.est.UpdateNanos(r)
	}
	if hb.HasSeq {
		d.seq, d.hasSeq = hb.Seq, true
	}
	d.last, d.seen = hb.Arrival, true
	d.to = d.timeout()
	d.tau = detector.AddSat(d.last, d.to)
}

func (d *Detector) reset() {
	d.est.Reset()
	d.seen, d.hasSeq, d.clamped = false, false, false
}

// timeout computes TO and records whether a clamp is active.
func (d *Detector) timeout() time.Duration {
	to := d.toInit
	if d.est.samples > 0 {
		to = d.est.Timeout(d.k)
	}
	d.clamped = false
	if to < d.toMin {
		to, d.clamped = d.toMin, true
	}
	if d.toMax != 0 && to > d.toMax {
		to, d.clamped = d.toMax, true
	}
	return to
}

// Timeout returns the current TO (TO_init before the first sample, clamped),
// or 0 before the first heartbeat.
func (d *Detector) Timeout() time.Duration {
	if !d.seen {
		return 0
	}
	return d.to
}

// FreshnessPoint returns τ = T_last + TO; ok is false before the first
// heartbeat.
func (d *Detector) FreshnessPoint() (time.Duration, bool) { return d.tau, d.seen }

// WarmingUp is always false: TO_init covers the time before the first sample.
func (d *Detector) WarmingUp() bool { return false }

// Suspected reports now > τ.
func (d *Detector) Suspected(now time.Duration) bool { return d.seen && now > d.tau }

// LinearForm returns τ = Offset + Scale·K with Offset = T_last + SRTT and
// Scale = RTTVAR in nanoseconds. ok is false before the first inter-arrival
// sample (τ then rests on TO_init) and while MinTimeout or MaxTimeout is
// active (τ is then not linear in K).
func (d *Detector) LinearForm() (time.Duration, float64, bool) {
	if !d.seen || d.est.samples == 0 || d.clamped {
		return 0, 0, false
	}
	return detector.AddSat(d.last, d.est.SRTT()), d.est.rttvar, true
}
