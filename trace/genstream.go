package trace

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Generator yields the synthetic stream of a GenConfig one record at a
// time, in the order Generate returns it (by arrival time; equal arrivals
// in sending order), holding only the records a later heartbeat may still
// overtake. Heartbeats are drawn in sending order; a drawn heartbeat waits
// in a heap until its arrival is below the earliest arrival any later one
// can have: the later one's send instant is not earlier (sends stay
// ordered: jitter is truncated to ±Δ/2, a pause moves a send to its end)
// and delays are ≥ 0, so that bound is the latest send instant taken
// through the receiver's clock (ReceiverStart, DriftPPM) with no delay.
// Memory is O(records in flight): about the largest delay divided by Δ,
// at most MaxInFlight records (see SetMaxInFlight).
type Generator struct {
	c       GenConfig
	rng     *rand.Rand
	jit     distuv.Normal
	draw    func() time.Duration
	end     time.Duration
	half    float64
	bad     bool // Gilbert–Elliott state
	resumed []bool
	k       int64
	seq     uint64
	done    bool
	pending minHeap[pendingRecord] // by (arrival, order)
	order   uint64                 // heartbeats pushed so far: ties keep sending order
	floor   time.Duration          // no later heartbeat arrives before floor
	floorOK bool
	last    time.Duration // the last arrival yielded
	yielded bool
	budget  *inFlight // shared by the streams of a MergedGenerator
}

// MaxInFlight is the default bound on the heartbeats a Generator, or all
// the streams of a MergedGenerator together, hold at once (sent, not yet
// yielded): 2^21, a few hundred MB at most. A stream whose delays are far
// longer than its interval (a 3 h constant delay at Δ = 1 ms holds every
// heartbeat of the first 3 h) stops with ErrTooManyInFlight rather than
// exhaust memory.
const MaxInFlight = 1 << 21

// ErrTooManyInFlight is wrapped by the error of a Generator or
// MergedGenerator that would hold more heartbeats than its bound.
var ErrTooManyInFlight = errors.New("too many heartbeats in flight")

type inFlight struct{ n, max int }

type pendingRecord struct {
	r     Record
	order uint64
}

// NewGenerator validates cfg and returns a Generator drawing every random
// number from rng, the same numbers in the same order as Generate.
func NewGenerator(cfg GenConfig, rng *rand.Rand) (*Generator, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("trace: generator: nil random source")
	}
	draw, err := delaySampler(c.Delay, rng)
	if err != nil {
		return nil, err
	}
	end := c.Duration
	if c.CrashAt > 0 {
		end = min(end, c.CrashAt)
	}
	return &Generator{
		c: c, rng: rng, jit: distuv.Normal{Mu: 0, Sigma: float64(c.Jitter), Src: rng}, draw: draw,
		end: end, half: float64(c.Interval) / 2, resumed: make([]bool, len(c.Pauses)),
		budget: &inFlight{max: MaxInFlight},
	}, nil
}

// SetMaxInFlight bounds the heartbeats g holds at once (see MaxInFlight);
// n ≤ 0: no bound (Generate, which holds the whole stream anyway).
func (g *Generator) SetMaxInFlight(n int) { g.budget.max = n }

// Next returns the next record in arrival order, false when the stream is
// over, or the error of a heartbeat whose instants overflow time.Duration.
func (g *Generator) Next() (Record, bool, error) {
	for {
		if len(g.pending) > 0 && (g.done || (g.floorOK && g.pending[0].r.Arrival < g.floor)) {
			r := g.pop()
			if g.yielded && r.Arrival < g.last {
				// The bound above was wrong (it cannot be with ordered
				// sends and delays ≥ 0): fail rather than write a trace
				// out of order.
				return Record{}, false, fmt.Errorf("trace: generator: heartbeat %d arrives at %v, before one already yielded at %v", r.Seq, r.Arrival, g.last)
			}
			g.last, g.yielded = r.Arrival, true
			return r, true, nil
		}
		if g.done {
			return Record{}, false, nil
		}
		if err := g.step(); err != nil {
			g.budget.n -= len(g.pending)
			g.done, g.pending = true, nil
			return Record{}, false, err
		}
	}
}

// step draws the next scheduled heartbeat: nothing when it is not sent
// (paused, crashed), else its loss, delay and arrival, pushed unless lost.
func (g *Generator) step() error {
	c := &g.c
	k := g.k
	g.k++
	sched := time.Duration(k) * c.Interval
	if sched >= c.Duration {
		g.done = true
		return nil
	}
	s := sched
	if c.Jitter > 0 {
		e := g.jit.Rand()
		for tries := 0; math.Abs(e) >= g.half && tries < 1000; tries++ {
			e = g.jit.Rand()
		}
		if math.Abs(e) >= g.half {
			e = 0
		}
		s += time.Duration(math.Round(e))
	}
	if i, in := inPeriod(c.Pauses, s); in {
		if g.resumed[i] {
			return nil
		}
		g.resumed[i] = true
		s = c.Pauses[i].At + c.Pauses[i].Length
		if _, again := inPeriod(c.Pauses, s); again {
			return nil
		}
	}
	if s < 0 {
		s = 0
	}
	if s >= g.end {
		if sched >= g.end {
			g.done = true
		}
		return nil
	}
	// The heartbeat is sent.
	lost := false
	switch l := c.Loss; l.Model {
	case LossBernoulli:
		lost = g.rng.Float64() < l.P
	case LossGilbertElliott:
		if g.bad {
			g.bad = g.rng.Float64() >= l.BadToGood
		} else {
			g.bad = g.rng.Float64() < l.GoodToBad
		}
		p := l.LossGood
		if g.bad {
			p = l.LossBad
		}
		lost = g.rng.Float64() < p
	}
	if _, out := inPeriod(c.Outages, s); out {
		lost = true
	}
	delay := g.draw()
	sent, ok := addDuration(c.SenderStart, s)
	if !ok {
		return fmt.Errorf("trace: generator: heartbeat %d: SenderStart %v + send instant %v overflows time.Duration", g.seq, c.SenderStart, s)
	}
	r := Record{Sender: c.Sender, Seq: g.seq, HasSeq: true, Sent: sent, HasSent: true}
	g.seq++
	g.floor, g.floorOK = g.arrivalFloor(s)
	if lost {
		return nil
	}
	a, ok1 := addDuration(s, delay)
	arr, ok2 := addDuration(c.ReceiverStart, a)
	drift := float64(a) * c.DriftPPM * 1e-6
	arr, ok3 := addDuration(arr, time.Duration(math.Round(drift)))
	if !ok1 || !ok2 || !ok3 || math.Abs(drift) >= math.MaxInt64 {
		return fmt.Errorf("trace: generator: heartbeat %d: arrival (ReceiverStart %v + send instant %v + delay %v, drift %v ppm) overflows time.Duration", r.Seq, c.ReceiverStart, s, delay, c.DriftPPM)
	}
	r.Arrival, r.HasArrival = arr, true
	if b := g.budget; b.max > 0 && b.n >= b.max {
		return fmt.Errorf("trace: generator: sender %q, heartbeat %d: %w: more than %d sent and not yet arrived at once (delay %v after a send at %v, interval %v): delays far longer than the interval hold every heartbeat sent meanwhile",
			c.Sender, r.Seq, ErrTooManyInFlight, b.max, delay, s, c.Interval)
	}
	g.push(r)
	return nil
}

// arrivalFloor is a lower bound on the arrival of any heartbeat sent at s
// or later: s with no delay through the receiver's clock, less a slack of
// 2^−20 of s (and 2 ns) for the rounding of the drift term, which
// float64 computes to about 2^−52 of s. false when it does not fit.
func (g *Generator) arrivalFloor(s time.Duration) (time.Duration, bool) {
	arr, ok1 := addDuration(g.c.ReceiverStart, s)
	drift := float64(s) * g.c.DriftPPM * 1e-6
	arr, ok2 := addDuration(arr, time.Duration(math.Round(drift)))
	if !ok1 || !ok2 || math.Abs(drift) >= math.MaxInt64 {
		return 0, false
	}
	return addDuration(arr, -(2 + s>>20))
}

func (g *Generator) push(r Record) {
	g.pending.push(pendingRecord{r, g.order})
	g.order++
	g.budget.n++
}

func (g *Generator) pop() Record {
	g.budget.n--
	return g.pending.pop().r
}

//lint:ignore U1000 called through minHeap's type constraint, which staticcheck does not follow
func (a pendingRecord) before(b pendingRecord) bool {
	if a.r.Arrival != b.r.Arrival {
		return a.r.Arrival < b.r.Arrival
	}
	return a.order < b.order
}

// MergedGenerator yields several synthetic streams merged by arrival time
// (equal arrivals in the order of the configurations), as Merge does.
type MergedGenerator struct {
	gens  []*Generator
	heads minHeap[mergedHead] // by (arrival, stream)
	err   error
}

type mergedHead struct {
	r      Record
	stream int
}

// NewMergedGenerator returns, one record at a time, what
// Merge(Generate(cfgs[0], rng), Generate(cfgs[1], rng), ...) returns for
// rng = NewRand(seed): each stream drawn from one source after the one
// before it. Memory is the streams' records in flight (see Generator) and
// a Generator per stream (about 1 KB). To start stream i where stream i−1's
// draws end without holding stream i−1, every stream but the last is drawn
// twice: once, discarding its records, to find that point (PCG's state is
// saved there), once to yield them. The streams together hold at most
// MaxInFlight heartbeats at once. Its error is the first one NewGenerator
// returns for a configuration, or a stream's first (Generator.Next,
// ErrTooManyInFlight among them).
func NewMergedGenerator(cfgs []GenConfig, seed uint64) (*MergedGenerator, error) {
	return newMergedGenerator(cfgs, seed, MaxInFlight)
}

func newMergedGenerator(cfgs []GenConfig, seed uint64, maxInFlight int) (*MergedGenerator, error) {
	src := rand.NewPCG(seed, seed) // NewRand's source
	m := &MergedGenerator{gens: make([]*Generator, len(cfgs))}
	shared := &inFlight{max: maxInFlight}
	for i, c := range cfgs {
		state, err := src.MarshalBinary()
		if err != nil {
			return nil, err
		}
		own := &rand.PCG{}
		if err := own.UnmarshalBinary(state); err != nil {
			return nil, err
		}
		if m.gens[i], err = NewGenerator(c, rand.New(own)); err != nil {
			return nil, err
		}
		m.gens[i].budget = shared
		if i == len(cfgs)-1 {
			break
		}
		skip, err := NewGenerator(c, rand.New(src))
		if err != nil {
			return nil, err
		}
		skip.SetMaxInFlight(maxInFlight)
		for {
			_, ok, err := skip.Next()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
		}
	}
	for i := range m.gens {
		if err := m.refill(i); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// refill pushes stream i's next record, if any.
func (m *MergedGenerator) refill(i int) error {
	r, ok, err := m.gens[i].Next()
	if err != nil || !ok {
		return err
	}
	m.heads.push(mergedHead{r, i})
	return nil
}

// Next returns the next record in arrival order, false when every stream
// is over, or the first error of a stream (see Generator.Next).
func (m *MergedGenerator) Next() (Record, bool, error) {
	if m.err != nil {
		return Record{}, false, m.err
	}
	if len(m.heads) == 0 {
		return Record{}, false, nil
	}
	top := m.heads.pop()
	if err := m.refill(top.stream); err != nil {
		m.err = err
		return Record{}, false, err
	}
	return top.r, true, nil
}

//lint:ignore U1000 called through minHeap's type constraint, which staticcheck does not follow
func (a mergedHead) before(b mergedHead) bool {
	if a.r.Arrival != b.r.Arrival {
		return a.r.Arrival < b.r.Arrival
	}
	return a.stream < b.stream
}
