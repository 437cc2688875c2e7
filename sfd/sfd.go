package sfd

import (
	"cmp"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

// DefaultSlotHeartbeats is the default slot length in Fresh heartbeats.
const DefaultSlotHeartbeats = 100

// Config configures a Detector. The zero value means Chen's defaults (Δ =
// 100 ms, n = 1000, warm-up until the window is full), SM_1 = max(Δ, SM_min), β = Δ/10,
// SM_min = 0, slots of 100 heartbeats, no targets (SFD then never adapts and
// behaves as Chen's NFD-E with α = SM_1), arrival-based TD with d̄ = 0.
type Config struct {
	// Estimator sets Δ, n and the restart threshold of the NFD-E estimate.
	Estimator chen.EstimatorConfig
	// MinSamples is the warm-up length: WarmingUp is true, and QoS is not
	// measured, while the window holds fewer samples. Default: the window
	// size; new(0) turns warm-up off.
	MinSamples *int
	// InitialMargin is SM_1 (SFD's α), ≥ MinMargin. Default max(Δ, MinMargin).
	InitialMargin *time.Duration
	// Step is the adjustment rate β > 0. Default Δ/10.
	Step time.Duration
	// MinMargin is SM_min ≥ 0, a floor on SM (fdkit guard). Default 0.
	MinMargin time.Duration
	// SlotHeartbeats is the slot length in Fresh heartbeats measured after
	// warm-up; SM is adjusted once per slot. Default DefaultSlotHeartbeats.
	SlotHeartbeats int
	// Targets are TD_U, MR_U and QAP_L; zero fields are no bound.
	Targets Targets
	// UseSendTime measures TD_k = τ_{k+1} − σ_k from the heartbeat's send
	// time when it has one; only meaningful when sender and monitor clocks
	// share an origin. Default false: TD_k = τ_{k+1} − A_k + OneWayDelay.
	UseSendTime bool
	// OneWayDelay is d̄, added to the arrival-based TD estimate (for example
	// RTT/2 from pings). Default 0 (TD then excludes the network delay).
	OneWayDelay time.Duration
}

// State is SFD's adaptation state.
type State int

const (
	// Adapting: before the first slot evaluated, or the last slot moved SM
	// (rule 1 or 3).
	Adapting State = iota
	// Steady: the last slot met every target (rule 2).
	Steady
	// CannotMeet: a slot violated speed and accuracy at once (rule 4): SFD
	// cannot meet the requested QoS, has stopped adapting and keeps SM from
	// then on (create a new detector, for example with new targets, to retry).
	CannotMeet
	// AtFloor: the last slot asked for a smaller SM (rule 1: TD > TD_U with
	// accuracy to spare) but SM is already at MinMargin, so the TD target
	// cannot be met with this floor (an fdkit guard, not in the paper).
	// Unlike CannotMeet it is not final: SFD keeps evaluating slots and
	// leaves this state when a later slot applies another rule.
	AtFloor
)

var stateNames = [...]string{"adapting", "steady", "cannot meet the requested QoS", "at the safety-margin floor: cannot meet the TD target"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Status is SFD's queryable state.
type Status struct {
	State        State
	SafetyMargin time.Duration // current SM
	LastRule     Rule          // rule of the last slot, RuleNone before the first
	Slots        int           // slots evaluated
	Measured     QoS           // cumulative QoS of its own output since warm-up
	Mistakes     int           // T→S transitions counted
	Observed     time.Duration // time over which QoS was measured
	Suspected    time.Duration // time spent suspecting
}

// Detector is the self-tuning failure detector SFD (N. Xiong, A. V. Vasilakos,
// J. Wu, Y. R. Yang, A. Rindos, Y. Zhou, W.-Z. Song, Y. Pan, "A self-tuning
// failure detection scheme for cloud computing service", IPDPS 2012, 668–679,
// as restated in [SFD-zh]; docs/algorithms.md, “SFD, the self-tuning
// detector”):
//
//	τ_{k+1} = EA_{k+1} + SM_{k+1}            (eq. 2; EA of Chen's NFD-E)
//	SM_1 = α,   SM_{j+1} = SM_j + Sat_j       (eqs. 3–4, reconstructed)
//
// with Sat_j ∈ {−β, 0, +β} chosen once per slot by Control from the QoS the
// detector measures on its own output, cumulated since warm-up, against the
// targets. The measurement follows docs/algorithms.md, “Replaying a trace”: a
// mistake is a trust→suspect transition (the next Fresh heartbeat arriving
// after τ, or τ already behind the heartbeat that set it), suspected time is
// the measure of suspect periods, MR = mistakes/observed, QAP = 1 −
// suspected/observed, TD is the mean of τ_{k+1} − σ_k (or of τ_{k+1} − A_k +
// d̄). No slot is evaluated before any time has elapsed.
//
// Awkward input: as chen.Detector (a single heartbeat gives τ = A + Δ + SM;
// duplicates and stale numbers are dropped; a late heartbeat enters the
// window but neither moves τ nor ends a mistake; a backwards jump of more
// than RestartJump is a sender restart: the window is reset and warm-up
// restarts, the gap before it is not measured, SM, state and cumulative QoS
// are kept; arrivals going backwards are dropped and counted
// (BackwardArrivals); a gap of hours or
// a burst of losses is counted as one mistake lasting the gap; τ saturates
// at the ends of the time.Duration range rather than wrapping).
type Detector struct {
	est        *chen.Estimator
	minSamples int
	step       time.Duration
	minMargin  time.Duration
	slotLen    int
	targets    Targets
	useSent    bool
	oneWay     time.Duration

	sm    time.Duration
	state State
	rule  Rule
	slots int
	tau   time.Duration
	seen  bool

	// QoS measurement (docs/algorithms.md, “Replaying a trace”).
	measuring bool
	trusted   bool
	prev      time.Duration // arrival of the previous Fresh heartbeat
	mistakes  int
	observed  time.Duration
	suspected time.Duration
	tdSum     float64 // ns
	tdCount   int
	inSlot    int
}

var _ detector.Detector = (*Detector)(nil)

// New returns a detector, or an error describing the first invalid field.
func New(cfg Config) (*Detector, error) {
	est, err := chen.NewEstimator(cfg.Estimator)
	if err != nil {
		return nil, err
	}
	m, err := chen.MinSamples(cfg.MinSamples, est.WindowSize())
	if err != nil {
		return nil, err
	}
	initial := detector.OrDefault(cfg.InitialMargin, max(est.Interval(), cfg.MinMargin))
	cfg.Step = cmp.Or(cfg.Step, est.Interval()/10)
	cfg.SlotHeartbeats = cmp.Or(cfg.SlotHeartbeats, DefaultSlotHeartbeats)
	switch {
	case cfg.MinMargin < 0:
		return nil, fmt.Errorf("sfd: MinMargin %v is negative", cfg.MinMargin)
	case initial < cfg.MinMargin:
		return nil, fmt.Errorf("sfd: InitialMargin %v is below MinMargin %v", initial, cfg.MinMargin)
	case cfg.Step <= 0:
		return nil, fmt.Errorf("sfd: Step %v must be positive", cfg.Step)
	case cfg.SlotHeartbeats < 0:
		return nil, fmt.Errorf("sfd: SlotHeartbeats %d is negative", cfg.SlotHeartbeats)
	case cfg.OneWayDelay < 0:
		return nil, fmt.Errorf("sfd: OneWayDelay %v is negative", cfg.OneWayDelay)
	}
	if err := cfg.Targets.validate(); err != nil {
		return nil, err
	}
	return &Detector{
		est: est, minSamples: m, step: cfg.Step, minMargin: cfg.MinMargin,
		slotLen: cfg.SlotHeartbeats, targets: cfg.Targets, useSent: cfg.UseSendTime,
		oneWay: cfg.OneWayDelay, sm: initial,
	}, nil
}

// Observe records a heartbeat, measures the QoS of the output it ends, and
// at a slot boundary adjusts SM before computing the new τ.
func (d *Detector) Observe(hb detector.Heartbeat) {
	kind := d.est.Classify(hb)
	if !d.before(hb, kind) {
		if kind == chen.Late || kind == chen.Backward {
			d.est.Observe(hb) // a Backward one is only counted
		}
		return
	}
	d.est.Observe(hb)
	d.after(hb, d.est.Next(), d.est.Len() >= d.minSamples)
}

// before does the part of Observe that precedes the estimator's update, for
// a heartbeat of kind kind; it reports whether the heartbeat moves τ (Fresh
// or Restart: the estimator is then updated and after called).
func (d *Detector) before(hb detector.Heartbeat, kind chen.Kind) bool {
	switch kind {
	case chen.Duplicate, chen.Stale, chen.Late, chen.Backward:
		return false
	case chen.Restart:
		d.measuring = false // the sender was down: not a mistake
	case chen.Fresh:
		if d.measuring {
			d.closeGap(hb.Arrival)
		}
	}
	return true
}

// after does the part of Observe that follows the estimator's update of a
// heartbeat that moves τ; next is the estimator's EA_{ℓ+1} after it (the
// window is not empty then, so τ = EA_{ℓ+1} + SM as
// chen.Estimator.FreshnessPoint computes it), and full whether the window
// then holds at least MinSamples samples (warm-up is over).
func (d *Detector) after(hb detector.Heartbeat, next time.Duration, full bool) {
	if !d.measuring && full {
		d.measuring, d.trusted = true, true
	} else if d.measuring {
		if d.inSlot++; d.inSlot >= d.slotLen {
			d.inSlot = 0
			d.endSlot()
		}
	}
	// A numbered arrival going backwards keeps the later instant, so that
	// the time it steps back over is not observed twice.
	if !d.measuring || hb.Arrival >= d.prev {
		d.prev = hb.Arrival
	}
	d.tau, d.seen = detector.AddSat(next, d.sm), true
	if !d.measuring {
		return
	}
	d.tdSum += float64(d.tau - d.tdBase(hb))
	d.tdCount++
	if d.tau < hb.Arrival { // suspected right at the arrival
		if d.trusted {
			d.mistakes++
		}
		d.trusted = false
	} else {
		d.trusted = true
	}
}

// tdBase returns the instant TD_k is measured from, TD_k = τ_{k+1} − base:
// σ_k with UseSendTime and a send time, else A_k − d̄.
func (d *Detector) tdBase(hb detector.Heartbeat) time.Duration {
	if d.useSent && hb.HasSent {
		return hb.Sent
	}
	return hb.Arrival - d.oneWay
}

// closeGap accounts the output over (prev, a]: trust until max(τ, prev),
// suspect after.
func (d *Detector) closeGap(a time.Duration) {
	if a > d.prev {
		d.observed += a - d.prev
	}
	if a <= d.tau {
		return
	}
	from := max(d.tau, d.prev)
	if d.trusted {
		d.mistakes++
	}
	if a > from {
		d.suspected += a - from
	}
	d.trusted = false
}

// endSlot applies the control rule once, unless SFD already gave up.
func (d *Detector) endSlot() {
	if d.state == CannotMeet || d.observed <= 0 || d.tdCount == 0 {
		return
	}
	d.slots++
	d.rule = Control(d.measured(), d.targets)
	prev := d.sm
	d.sm = Adjust(d.sm, d.rule, d.step, d.minMargin)
	switch {
	case d.rule == RuleHold:
		d.state = Steady
	case d.rule == RuleCannotMeet:
		d.state = CannotMeet
	case d.rule == RuleDecrease && d.sm == prev:
		d.state = AtFloor
	default:
		d.state = Adapting
	}
}

func (d *Detector) measured() QoS {
	var q QoS
	if d.tdCount > 0 {
		q.TD = detector.RoundNanos(d.tdSum / float64(d.tdCount))
	}
	q.QAP = 1
	if d.observed > 0 {
		sec := d.observed.Seconds()
		q.MistakesPerSecond = float64(d.mistakes) / sec
		q.QAP = 1 - float64(d.suspected)/float64(d.observed)
	}
	return q
}

// Estimator returns the NFD-E estimator (read it, do not feed it).
func (d *Detector) Estimator() *chen.Estimator { return d.est }

// SafetyMargin returns the current SM.
func (d *Detector) SafetyMargin() time.Duration { return d.sm }

// State returns the adaptation state.
func (d *Detector) State() State { return d.state }

// Status returns the adaptation state, SM and the measured QoS.
func (d *Detector) Status() Status {
	return Status{
		State: d.state, SafetyMargin: d.sm, LastRule: d.rule, Slots: d.slots,
		Measured: d.measured(), Mistakes: d.mistakes, Observed: d.observed, Suspected: d.suspected,
	}
}

// FreshnessPoint returns τ_{ℓ+1} = EA_{ℓ+1} + SM; ok is false before the
// first heartbeat. During warm-up it is returned too, and WarmingUp is true.
func (d *Detector) FreshnessPoint() (time.Duration, bool) { return d.tau, d.seen }

// WarmingUp reports whether the window holds fewer than MinSamples samples.
func (d *Detector) WarmingUp() bool { return d.est.Len() < d.minSamples }

// Suspected reports now > τ.
func (d *Detector) Suspected(now time.Duration) bool { return d.seen && now > d.tau }

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before the newest Fresh one (detector.BackwardCounter; chen.Backward).
func (d *Detector) BackwardArrivals() uint64 { return d.est.BackwardArrivals() }
