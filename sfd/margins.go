package sfd

import (
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

// MarginChange says that from heartbeat From (an index in the stream) on,
// the freshness point is computed with safety margin SM.
type MarginChange struct {
	From int
	SM   time.Duration
}

// Margins runs SFD with the settings of cfg and each initial margin SM_1 of
// initial over hbs (in arrival order), and returns, per initial margin, the
// safety margins its detector used: SM_1 from heartbeat 0, then one change
// per slot that moved SM. The expected arrivals do not depend on SM, so one
// NFD-E estimator serves every margin: this costs one estimator pass plus
// the control of each margin, where replaying each margin costs an
// estimator pass per margin. A detector with initial margin initial[i] fed
// hbs has, after heartbeat k, τ = EA_{ℓ+1} + SM with SM that of the last
// change whose From ≤ k (τ moves only at Fresh and Restart heartbeats). A
// zero initial margin means the default, as in Config.
//
// The control of each margin skips the quiet stretches of a slot: where
// every heartbeat arrives by τ and τ stays at or after it, the QoS the
// detector measures changes only by what is the same for every margin
// (observed time) and by the TD_k, whose sum is then added at once, exactly
// (while every partial sum is an integer below 2^52 ns).
//
// Errors: those of New for cfg with each initial margin.
func Margins(cfg Config, initial []time.Duration, hbs []detector.Heartbeat) ([][]MarginChange, error) {
	return margins(cfg, initial, hbs, nil)
}

// EstimatorTrace is what the NFD-E estimator of SFD's settings made of
// each heartbeat of a stream, the same whatever the margin: after
// heartbeat k the window held Lens[k] inter-arrival times, and when
// Moves[k] (a Fresh heartbeat or a Restart, which moves τ) the expected
// arrival was Next[k] = EA_{ℓ+1}.
type EstimatorTrace struct {
	Next  []time.Duration
	Moves []bool
	Lens  []int32
}

// MarginsTrace is Margins that also returns the estimator's trace of hbs,
// from the same estimator pass (a sweep that replays each margin needs
// both).
func MarginsTrace(cfg Config, initial []time.Duration, hbs []detector.Heartbeat) ([][]MarginChange, *EstimatorTrace, error) {
	n := len(hbs)
	tr := &EstimatorTrace{Next: make([]time.Duration, n), Moves: make([]bool, n), Lens: make([]int32, n)}
	out, err := margins(cfg, initial, hbs, tr)
	if err != nil {
		return nil, nil, err
	}
	return out, tr, nil
}

// margins is Margins, filling tr when it is not nil.
func margins(cfg Config, initial []time.Duration, hbs []detector.Heartbeat, tr *EstimatorTrace) ([][]MarginChange, error) {
	dets := make([]*Detector, len(initial))
	out := make([][]MarginChange, len(initial))
	for i, m := range initial {
		c := cfg
		c.InitialMargin = &m
		d, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("sfd: initial margin %v: %w", m, err)
		}
		dets[i] = d
		out[i] = []MarginChange{{From: 0, SM: d.sm}}
	}
	if len(dets) == 0 && tr == nil {
		if _, err := chen.NewEstimator(cfg.Estimator); err != nil {
			return nil, err
		}
		return out, nil
	}
	p, err := newMarginPlan(cfg, hbs, tr)
	if err != nil {
		return nil, err
	}
	for i, d := range dets {
		d.est = p.est // shared, for the detector's accessors only
		out[i] = p.walk(d, hbs, out[i])
	}
	return out, nil
}

// marginEvent is a heartbeat that moves τ (Fresh or Restart) as the shared
// estimator saw it: its index k in the stream, EA_{ℓ+1} after it, whether
// it is a Restart, whether the window then held MinSamples samples (full),
// and whether its TD_k is measured. A plan holds one per such heartbeat,
// so k and the three flags share one word (16 bytes an event, not 24):
// the flags in its top 3 bits, k in the 61 below.
type marginEvent struct {
	kFlags uint64
	next   time.Duration
}

const (
	evRestart  uint64 = 1 << 63
	evFull     uint64 = 1 << 62
	evMeasured uint64 = 1 << 61

	// maxEventIndex is the largest k a marginEvent holds.
	maxEventIndex = 1<<61 - 1
)

// newMarginEvent returns the event of heartbeat k, false if k is outside
// [0, maxEventIndex].
func newMarginEvent(k int, next time.Duration, restart, full, measured bool) (marginEvent, bool) {
	if k < 0 || uint64(k) > maxEventIndex {
		return marginEvent{}, false
	}
	ev := marginEvent{kFlags: uint64(k), next: next}
	if restart {
		ev.kFlags |= evRestart
	}
	if full {
		ev.kFlags |= evFull
	}
	if measured {
		ev.kFlags |= evMeasured
	}
	return ev, true
}

func (ev *marginEvent) k() int         { return int(ev.kFlags & maxEventIndex) }
func (ev *marginEvent) restart() bool  { return ev.kFlags&evRestart != 0 }
func (ev *marginEvent) full() bool     { return ev.kFlags&evFull != 0 }
func (ev *marginEvent) measured() bool { return ev.kFlags&evMeasured != 0 }

// quietRun is a stretch of events [from, to) inside one slot, each a Fresh
// heartbeat measured while no slot ends: with SM in force throughout, the
// run is quiet for every SM ≥ q (math.MaxInt64: for none). The other fields
// are the same for every margin: what the run adds to Observed, the
// detector's prev and inSlot after it, Σ (EA_{ℓ+1} − base) and
// Σ |EA_{ℓ+1} − base| over its events, and EA_{ℓ+1} after its last.
type quietRun struct {
	from, to int
	q        int64
	observed time.Duration
	prev     time.Duration
	inSlot   int
	sum      int64
	abs      float64
	last     time.Duration
}

// marginPlan is what every margin's control shares: the events and the
// quiet runs among them.
type marginPlan struct {
	est    *chen.Estimator
	events []marginEvent
	runs   []quietRun
}

// tame is the magnitude below which instants and margins cannot overflow
// the sums and differences of the quiet test.
const tame = 1 << 61

// newMarginPlan runs the NFD-E estimator over hbs with a probe detector (of
// the default initial margin) whose margin-independent state (warm-up,
// slot count, prev, observed time) is that of every margin's detector,
// and fills tr when it is not nil.
func newMarginPlan(cfg Config, hbs []detector.Heartbeat, tr *EstimatorTrace) (*marginPlan, error) {
	est, err := chen.NewEstimator(cfg.Estimator)
	if err != nil {
		return nil, err
	}
	cfg.InitialMargin = nil
	probe, err := New(cfg)
	if err != nil {
		return nil, err
	}
	p := &marginPlan{est: est, events: make([]marginEvent, 0, len(hbs))}
	var run *quietRun
	for k, hb := range hbs {
		kind := est.Classify(hb)
		moves := kind == chen.Fresh || kind == chen.Restart
		if kind == chen.Late || moves {
			est.Observe(hb)
		}
		if tr != nil {
			tr.Lens[k] = int32(est.Len())
			if moves {
				tr.Next[k], tr.Moves[k] = est.Next(), true
			}
		}
		if !moves {
			continue
		}
		wasMeasuring, observed := probe.measuring, probe.observed
		probe.before(hb, kind)
		next, full := est.Next(), est.Len() >= probe.minSamples
		probe.after(hb, next, full)
		ev, ok := newMarginEvent(k, next, kind == chen.Restart, full, probe.measuring)
		if !ok {
			return nil, fmt.Errorf("sfd: heartbeat %d: past the 2^61 heartbeats a margin plan can index", k)
		}
		p.events = append(p.events, ev)
		if kind != chen.Fresh || !wasMeasuring || probe.inSlot == 0 {
			run = nil // a Restart, warm-up, or a slot's end
			continue
		}
		e := len(p.events) - 1
		if run == nil {
			p.runs = append(p.runs, quietRun{from: e, q: math.MinInt64})
			run = &p.runs[len(p.runs)-1]
		}
		prevNext, base := p.events[e-1].next, probe.tdBase(hb)
		if isTame(hb.Arrival) && isTame(prevNext) && isTame(base) && run.q != math.MaxInt64 {
			run.q = max(run.q, int64(hb.Arrival-prevNext), int64(hb.Arrival-ev.next))
			run.sum += int64(ev.next - base)
		} else {
			run.q = math.MaxInt64
		}
		run.to, run.abs, run.last = e+1, run.abs+tdAbs(ev.next, base), ev.next
		run.observed += probe.observed - observed
		run.prev, run.inSlot = probe.prev, probe.inSlot
	}
	return p, nil
}

func isTame(t time.Duration) bool { return t > -tame && t < tame }

// tdAbs returns |next − base| as a float64, +Inf where either reaches
// 2^61 in magnitude (no sum through it is taken at once).
func tdAbs(next, base time.Duration) float64 {
	if !isTame(next) || !isTame(base) {
		return math.Inf(1)
	}
	return math.Abs(float64(next - base))
}

// walk runs d's control over the plan's events, appending to out each
// change of SM, until d cannot meet its targets. A quiet run is skipped:
// every heartbeat of it arrives by τ = EA_{ℓ+1} + SM (so closeGap adds
// observed time alone) and has τ at or after it after its update (so it is
// trusted, no mistake), no slot ends, and TD_k = EA_{ℓ+1} − base + SM. The
// TD_k are added at once while bound, Σ |TD_k| over every TD_k added so
// far, shows every partial sum to be an integer below 2^52 (float64 sums of
// them are then exact in any order), and SM < 2^52 keeps τ from saturating.
func (p *marginPlan) walk(d *Detector, hbs []detector.Heartbeat, out []MarginChange) []MarginChange {
	var bound float64
	r := 0
	for e := 0; e < len(p.events); e++ {
		if r < len(p.runs) && p.runs[r].from == e {
			run := &p.runs[r]
			r++
			n := run.to - run.from
			sm := int64(d.sm)
			if after := bound + run.abs + float64(n)*float64(sm); sm >= run.q && run.q != math.MaxInt64 && after < 1<<52 {
				bound = after
				d.observed += run.observed
				d.prev, d.inSlot = run.prev, run.inSlot
				d.tdSum += float64(run.sum + int64(n)*sm)
				d.tdCount += n
				d.tau, d.trusted = run.last+d.sm, true
				e = run.to - 1
				continue
			}
		}
		ev := &p.events[e]
		hb := hbs[ev.k()]
		kind := chen.Fresh
		if ev.restart() {
			kind = chen.Restart
		}
		d.before(hb, kind)
		d.after(hb, ev.next, ev.full())
		if ev.measured() {
			bound += tdAbs(ev.next, d.tdBase(hb)) + float64(d.sm)
		}
		if last := out[len(out)-1]; d.sm != last.SM {
			out = append(out, MarginChange{From: ev.k(), SM: d.sm})
		}
		if d.state == CannotMeet {
			break
		}
	}
	return out
}
