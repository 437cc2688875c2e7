package qos

import (
	"errors"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// ClockMode says whether the sender's clock (Heartbeat.Sent) and the
// monitor's clock (Heartbeat.Arrival) are synchronized, which decides how TD
// is computed.
type ClockMode int

const (
	// ClockAuto (the default) treats the clocks as synchronized when every
	// evaluated heartbeat has a send time and its apparent one-way delay
	// A − σ lies in [0, MaxPlausibleDelay]; otherwise as unsynchronized.
	ClockAuto ClockMode = iota
	// ClockSynchronized: send and arrival times share one clock.
	ClockSynchronized
	// ClockUnsynchronized: A − σ contains an unknown offset (LIP6 traces).
	ClockUnsynchronized
)

// MaxPlausibleDelay is the largest apparent one-way delay A − σ that
// ClockAuto accepts as a delay rather than as a clock offset.
const MaxPlausibleDelay = time.Minute

// String returns "auto", "synchronized" or "unsynchronized".
func (m ClockMode) String() string {
	switch m {
	case ClockAuto:
		return "auto"
	case ClockSynchronized:
		return "synchronized"
	case ClockUnsynchronized:
		return "unsynchronized"
	}
	return fmt.Sprintf("ClockMode(%d)", int(m))
}

// TDBasis names how TD was computed.
type TDBasis string

const (
	// TDSend is TD_k = τ_{k+1} − σ_k (docs/algorithms.md, “Replaying a trace”,
	// synchronized clocks).
	TDSend TDBasis = "send"
	// TDArrival is TD_k = τ_{k+1} − A_k + d̄ with d̄ = Result.DelayOffset,
	// used when clocks are not synchronized or send times are missing.
	TDArrival TDBasis = "arrival"
)

// Config configures a replay. The zero value means: evaluate from the first
// heartbeat after the detector's own warm-up, detect clock synchronization
// automatically, d̄ = 0.
type Config struct {
	// WarmUp is the number of fresh heartbeats excluded from the metrics at
	// the start of the stream, on top of the detector's own warm-up
	// (Detector.WarmingUp): evaluation starts with the first fresh heartbeat
	// after which the detector is not warming up and more than WarmUp fresh
	// heartbeats have been observed. Must not be negative.
	WarmUp int
	// Clock says whether send and arrival clocks are synchronized.
	Clock ClockMode
	// DelayOffset is d̄, the mean one-way delay added to the arrival-based TD
	// (for example RTT/2 measured by pings). Default 0; must not be negative.
	DelayOffset time.Duration
	// RecordMistakes makes a replay list every mistake as an interval in
	// Result.MistakeIntervals (memory grows with the number of mistakes).
	RecordMistakes bool
	// Intervals makes ReplaySlice, ReplaySource and Sweep compute 95 %
	// confidence intervals for MR, QAP and the mean TD (Result.CI) by a
	// circular block bootstrap over time (see docs/algorithms.md,
	// “Confidence intervals for TD, MR and QAP”).
	Intervals bool
	// Spill places and bounds the temporary files of replays of a Source
	// that is not held in memory (see Spill).
	Spill Spill
}

func (c Config) validate() error {
	if c.WarmUp < 0 {
		return fmt.Errorf("qos: warm-up %d is negative", c.WarmUp)
	}
	if c.DelayOffset < 0 {
		return fmt.Errorf("qos: delay offset %v is negative", c.DelayOffset)
	}
	if c.Clock < ClockAuto || c.Clock > ClockUnsynchronized {
		return fmt.Errorf("qos: unknown clock mode %d", int(c.Clock))
	}
	return c.Spill.validate()
}

// TDStats summarizes the per-heartbeat detection times TD_k.
// Percentiles are nearest-rank: the value at rank ⌈q·n⌉ of the sorted TD_k.
type TDStats struct {
	Mean time.Duration `json:"mean_ns"`
	P50  time.Duration `json:"p50_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
}

// Interval is a mistake: the monitor suspects the (alive) process at every
// instant t with Start < t < End.
type Interval struct {
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
}

// Result holds the QoS of one detector on one stream (docs/algorithms.md, “QoS
// metrics”, “Replaying a trace”). Durations are on the monitor's clock except
// where noted. When there are no mistakes, MeanTM, MeanTMR and MeanTG are 0
// (undefined) and MRPerSecond is 0.
type Result struct {
	// Records is the number of heartbeats read; Stale of them had a sequence
	// number not above the largest seen (stale or duplicate): they are shown
	// to the detector but start no TD and, for sequence-aware detectors, do
	// not end a mistake.
	Records int `json:"records"`
	Stale   int `json:"stale"`
	// WarmUp fresh heartbeats were excluded by warm-up; Evaluated fresh
	// heartbeats were evaluated (one TD each).
	WarmUp    int `json:"warm_up"`
	Evaluated int `json:"evaluated"`
	// Start is the arrival of the first evaluated heartbeat, End the last
	// arrival; Span = End − Start is the observed time T_obs.
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	Span  time.Duration `json:"span_ns"`
	// Mistakes is the number of trust→suspect transitions; Suspected the
	// total time suspected.
	Mistakes  int           `json:"mistakes"`
	Suspected time.Duration `json:"suspected_ns"`
	// MRPerSecond = Mistakes / Span in mistakes per second (λ_M).
	MRPerSecond float64 `json:"mr_per_second"`
	// QAP = 1 − Suspected/Span (P_A); 1 when Span is 0.
	QAP float64 `json:"qap"`
	// MeanTM = Suspected/Mistakes (E[T_M]); MeanTMR = Span/Mistakes
	// (E[T_MR]); MeanTG = MeanTMR − MeanTM (E[T_G]).
	MeanTM  time.Duration `json:"mean_tm_ns"`
	MeanTMR time.Duration `json:"mean_tmr_ns"`
	MeanTG  time.Duration `json:"mean_tg_ns"`
	// TD summarizes TD_k over the evaluated heartbeats (TD_k = max(τ_{k+1},
	// A_k) − σ_k: when τ_{k+1} < A_k the monitor suspects from A_k, so TD_k is
	// never below the delay, or below d̄ when arrival-based;
	// docs/algorithms.md, “Replaying a trace” writes τ_{k+1} − σ_k, which is
	// negative then). LastTD is TD_k of the last evaluated heartbeat: if the
	// stream ends because the sender crashed right after sending it, the
	// monitor detects the crash LastTD after that send.
	TD     TDStats       `json:"td"`
	LastTD time.Duration `json:"last_td_ns"`
	// ClockSync reports whether send and arrival clocks were taken as
	// synchronized; TDBasis says how TD was computed and DelayOffset is the
	// d̄ added to the arrival-based TD.
	ClockSync   bool          `json:"clock_sync"`
	TDBasis     TDBasis       `json:"td_basis"`
	DelayOffset time.Duration `json:"delay_offset_ns"`
	// MistakeIntervals lists the mistakes when Config.RecordMistakes is set;
	// a mistake still open at the end of the stream ends at End.
	MistakeIntervals []Interval `json:"mistake_intervals,omitempty"`
	// CI holds 95 % confidence intervals for MR, QAP and the mean TD when
	// Config.Intervals is set (nil otherwise).
	CI *CI `json:"ci,omitempty"`

	// cells is the per-time-cell breakdown the intervals were computed
	// from, kept for paired comparisons (CompareTD); nil without
	// Config.Intervals and after a JSON round trip.
	cells *cellSeries
}

// ErrNoEvaluation is returned (wrapped) when warm-up covers the whole stream.
var ErrNoEvaluation = errors.New("qos: no heartbeat evaluated")

// ReplaySlice replays hbs, in arrival order, through det (which must be
// fresh) and returns its QoS, as the package doc's “Replay” section
// defines it.
func ReplaySlice(det detector.Detector, hbs []detector.Heartbeat, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	if det == nil {
		return Result{}, errors.New("qos: nil detector")
	}
	return replaySource(det, sliceSource(hbs), cfg)
}

// ReplaySource is ReplaySlice reading the heartbeats from src, in one
// pass (two with Config.Intervals), keeping memory that does not grow
// with the stream beyond what the TD percentiles need (see Result.TD).
func ReplaySource(det detector.Detector, src Source, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	if det == nil {
		return Result{}, errors.New("qos: nil detector")
	}
	return replaySource(det, src, cfg)
}

func replaySource(det detector.Detector, src Source, cfg Config) (Result, error) {
	r := newSourceReplayer(det, cfg, src)
	if cfg.Intervals {
		r.withCells(src)
	}
	if err := r.run(src); err != nil {
		return Result{}, err
	}
	return r.finish()
}

// run steps r through one pass over src.
func (r *replayer) run(src Source) error {
	if hbs, ok := src.(sliceSource); ok { // no iterator call per heartbeat
		for i := range hbs {
			if err := r.step(hbs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	seq, done := src.Pass()
	var err error
	for hb := range seq {
		if err = r.step(hb); err != nil {
			break
		}
	}
	if e := done(); e != nil {
		return e
	}
	return err
}

// replayer is the one-pass engine of docs/algorithms.md, “Replaying a trace”,
// shared by the replays and the sweeps (which adds a collector of slacks).
type replayer struct {
	det detector.Detector
	cfg Config
	lin *linearCollector

	res      Result
	havePrev bool
	prevA    time.Duration
	hasSeq   bool
	lastSeq  uint64

	evaluating bool
	pending    bool          // a freshness point is in force over the current gap
	tau        time.Duration // that freshness point
	out        bool          // suspected just after prevA

	openStart time.Duration // start of the open mistake interval

	tdArr   []int64 // τ_{k+1} − A_k per evaluated heartbeat, ns
	delay   []int64 // A_k − σ_k per evaluated heartbeat, ns
	allSent bool
	plaus   bool // every delay in [0, MaxPlausibleDelay]

	// With Config.Intervals: the stream (for the span per cell), the
	// cells, and the cell of each evaluated heartbeat.
	src    Source
	cells  *cellSeries
	evCell []uint8
	spans  *spanMemo // shared by the replays of one stream, or nil

	// spillAt > 0 (replays of a Source that is not a slice, without a
	// linear collector: Config.Spill.After) moves tdArr, delay and evCell
	// to spill once they hold spillAt heartbeats.
	spillAt int
	spill   *tdSpill
	hint    int // the expected number of heartbeats (capacity to allocate)
}

// withCells makes r account mistakes, suspected time and TD per time cell
// of src's grid.
func (r *replayer) withCells(src Source) {
	r.src = src
	r.cells = newCellSeries(newCellGrid(src))
	r.evCell = make([]uint8, 0, r.hint)
}

// newSourceReplayer is newReplayer (without a linear collector) for a
// replay of src: one that spills its per-heartbeat data (Config.Spill) when
// src is not a slice.
func newSourceReplayer(det detector.Detector, cfg Config, src Source) *replayer {
	if _, isSlice := src.(sliceSource); isSlice {
		return newReplayer(det, cfg, nil, src.Len())
	}
	r := newReplayer(det, cfg, nil, min(src.Len(), cfg.Spill.after()))
	r.spillAt = cfg.Spill.after()
	return r
}

// newReplayer returns an engine; sizeHint is the expected number of
// heartbeats (0 if unknown). With a linear collector the per-heartbeat TD
// at the detector's own parameter is not kept (the collector keeps the
// linear form instead).
func newReplayer(det detector.Detector, cfg Config, lin *linearCollector, sizeHint int) *replayer {
	r := &replayer{det: det, cfg: cfg, lin: lin, allSent: true, plaus: true, hint: sizeHint}
	if sizeHint > 0 {
		if lin == nil {
			r.tdArr = make([]int64, 0, sizeHint)
		}
		r.delay = make([]int64, 0, sizeHint)
	}
	return r
}

func (r *replayer) step(hb detector.Heartbeat) error {
	if r.havePrev && hb.Arrival < r.prevA {
		return errArrivalOrder(r.res.Records+1, hb, r.prevA)
	}
	r.res.Records++
	stale := hb.HasSeq && r.hasSeq && hb.Seq <= r.lastSeq
	r.gap(hb.Arrival)
	if r.lin != nil {
		r.lin.closeSegment(hb.Arrival)
	}

	r.det.Observe(hb)
	if stale {
		r.res.Stale++
	} else if hb.HasSeq {
		r.lastSeq, r.hasSeq = hb.Seq, true
	}
	r.prevA, r.havePrev = hb.Arrival, true
	tau, ok := r.det.FreshnessPoint()
	ready := ok && !r.det.WarmingUp()

	if !r.evaluating && !r.startsEvaluation(hb.Arrival, stale, ready) {
		return nil
	}
	if !ready {
		// The detector went back into warm-up (for example a reset after a
		// sender restart): no freshness point is in force and nothing is
		// reported until it is ready again.
		if !stale {
			r.res.WarmUp++
		}
		r.closeMistake(hb.Arrival)
		r.pending, r.out = false, false
		if r.lin != nil {
			r.lin.breakChain()
		}
		return nil
	}
	r.pending, r.tau = true, tau
	if !stale {
		if err := r.evaluate(hb, tau); err != nil {
			return err
		}
	}
	r.transition(hb.Arrival, tau < hb.Arrival)
	if r.lin != nil {
		if err := r.lin.openSegment(r.det, hb.Arrival, !stale); err != nil {
			return err
		}
	}
	return nil
}

// gap accounts the gap (prevA, a]: trust until τ, suspect after it.
func (r *replayer) gap(a time.Duration) {
	if !r.pending || a <= r.tau {
		return
	}
	from := max(r.tau, r.prevA)
	starts := !r.out
	if starts {
		r.res.Mistakes++
		r.openStart = from
	}
	r.res.Suspected += a - from
	r.out = true
	if r.cells != nil {
		c := r.cells.grid.cell(r.prevA)
		if starts {
			r.cells.mist[c]++
		}
		r.cells.susp[c] += float64(a - from)
	}
}

// oneWayDelay returns the one-way delay A − σ of hb in nanoseconds (0 when
// hb carries no send time), whether hb carries one, and whether the delay
// is plausible: within [0, MaxPlausibleDelay], or absent.
func oneWayDelay(hb detector.Heartbeat) (d int64, sent, plausible bool) {
	if !hb.HasSent {
		return 0, false, true
	}
	d = int64(hb.Arrival - hb.Sent)
	return d, true, d >= 0 && d <= int64(MaxPlausibleDelay)
}

// startsEvaluation reports whether the heartbeat arriving at a, after
// which the detector is ready or not, starts the evaluation (past the
// detector's and Config's warm-up), and counts it in warm-up if not.
func (r *replayer) startsEvaluation(a time.Duration, stale, ready bool) bool {
	if !r.res.startsEvaluation(a, stale, ready, r.cfg.WarmUp) {
		return false
	}
	r.evaluating, r.out = true, false
	return true
}

// startsEvaluation is the part of replayer.startsEvaluation kept in the
// Result (Records, Stale, WarmUp, Start), shared with thresholdPass:
// whether a fresh heartbeat arriving at a starts the evaluation, past the
// detector's warm-up (ready) and warmUp fresh heartbeats.
func (res *Result) startsEvaluation(a time.Duration, stale, ready bool, warmUp int) bool {
	if stale {
		return false
	}
	if fresh := res.Records - res.Stale; !ready || fresh <= warmUp {
		res.WarmUp++
		return false
	}
	res.Start = a
	return true
}

// evaluate records the evaluated heartbeat hb, after which the freshness
// point is tau: its TD, delay and time cell.
func (r *replayer) evaluate(hb detector.Heartbeat, tau time.Duration) error {
	r.res.Evaluated++
	// τ < A_k (for example Chen's EA lagging after a sender pause):
	// q suspects from A_k, not before it has processed k.
	t := int64(max(tau-hb.Arrival, 0))
	var c uint8
	if r.cells != nil {
		c = uint8(r.cells.grid.cell(hb.Arrival))
	}
	d, sent, plausible := oneWayDelay(hb)
	if !plausible {
		r.plaus = false
	}
	if !sent {
		r.allSent = false
	}
	switch {
	case r.spill != nil:
		r.spill.add(t, d, c)
		return nil
	case r.lin != nil && r.lin.spill != nil:
		r.lin.pendD, r.lin.pendCell = d, c // spilled by openSegment
		return nil
	}
	if r.lin == nil {
		r.tdArr = append(r.tdArr, t)
	}
	if r.cells != nil {
		r.evCell = append(r.evCell, c)
	}
	if hb.HasSent {
		r.delay = append(r.delay, d)
	}
	if r.spillAt > 0 && len(r.tdArr) >= r.spillAt {
		return r.startSpill()
	}
	return nil
}

// transition sets the output just after the arrival a: suspect when the
// freshness point is before it (after), which starts a mistake; trust
// otherwise, which ends one.
func (r *replayer) transition(a time.Duration, after bool) {
	if after && !r.out {
		r.res.Mistakes++
		r.openStart = a
		if r.cells != nil {
			r.cells.mist[r.cells.grid.cell(a)]++
		}
	}
	if !after && r.out {
		r.closeMistake(a)
	}
	r.out = after
}

// startSpill moves the per-heartbeat data to a spill file.
func (r *replayer) startSpill() error {
	cells := 0
	if r.cells != nil {
		cells = len(r.cells.tdN)
	}
	s, err := newTDSpill(r.cfg.Spill.Dir, int64(r.cfg.DelayOffset), cells)
	if err != nil {
		return err
	}
	full := len(r.delay) == len(r.tdArr) // else some lacked σ: no send-based TD
	for k, t := range r.tdArr {
		var d int64
		if full {
			d = r.delay[k]
		}
		var c uint8
		if r.evCell != nil {
			c = r.evCell[k]
		}
		s.add(t, d, c)
	}
	r.spill, r.tdArr, r.delay, r.evCell = s, nil, nil, nil
	return nil
}

func (r *replayer) closeMistake(at time.Duration) {
	if r.out && r.cfg.RecordMistakes {
		r.res.MistakeIntervals = append(r.res.MistakeIntervals, Interval{Start: r.openStart, End: at})
	}
}

// clockSync decides, after the pass, whether TD is send-based.
func (r *replayer) clockSync() bool { return clockSyncOf(r.cfg.Clock, r.allSent, r.plaus) }

// tdBase returns, per evaluated heartbeat, what is added to τ − A_k to get
// TD_k: the delay A_k − σ_k when send-based, d̄ otherwise.
func (r *replayer) tdBase(sync bool, k int) int64 {
	if sync {
		return r.delay[k]
	}
	return int64(r.cfg.DelayOffset)
}
