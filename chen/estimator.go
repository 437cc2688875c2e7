package chen

import (
	"cmp"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Defaults shared by the Estimator, the Detector and the packages that build
// on them.
const (
	// DefaultInterval is Δ when none is configured: 100 ms, the sending
	// interval of the LIP6 traces and of every worked example in
	// docs/algorithms.md. Δ must match the sender: a wrong Δ makes A_j − Δ·s_j
	// drift and EA wrong by about |error|·n/2.
	DefaultInterval = 100 * time.Millisecond
	// DefaultWindowSize is n, the window of the φ and SFD experiments.
	DefaultWindowSize = 1000
	// DefaultRestartJump is the default EstimatorConfig.RestartJump.
	DefaultRestartJump = 100
)

// EstimatorConfig configures an Estimator. The zero value means Δ = 100 ms,
// n = 1000, restart after a backwards jump of more than 100. Pointer fields
// follow fdkit's rule on zero (see package detector).
type EstimatorConfig struct {
	// Interval is Δ (Chen's η), the sender's nominal heartbeat interval.
	// Default DefaultInterval; must not be negative.
	Interval time.Duration
	// WindowSize is n, the number of most recent heartbeats (by arrival)
	// averaged. Default DefaultWindowSize; must not be negative.
	WindowSize int
	// RestartJump: a sequence number more than RestartJump below ℓ is taken
	// as a sender restart and resets the estimator. Default
	// DefaultRestartJump; new(uint64(0)) resets at every backwards number;
	// math.MaxUint64 never resets.
	RestartJump *uint64
}

func (c *EstimatorConfig) normalize() error {
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.WindowSize = cmp.Or(c.WindowSize, DefaultWindowSize)
	if c.Interval < 0 {
		return fmt.Errorf("chen: Interval %v is negative", c.Interval)
	}
	if c.WindowSize < 0 {
		return fmt.Errorf("chen: WindowSize %d is negative", c.WindowSize)
	}
	return nil
}

// Kind classifies a heartbeat for the Estimator.
type Kind int

const (
	// Fresh: the first heartbeat, or s > ℓ, or a heartbeat without sequence
	// number arriving no earlier than the previous one. It enters the window
	// and advances ℓ: it extends trust.
	Fresh Kind = iota
	// Late: ℓ−n < s < ℓ and s is not in the window. It enters the window as
	// a valid sample but ℓ does not change.
	Late
	// Duplicate: s is ℓ or already in the window. Dropped.
	Duplicate
	// Stale: s ≤ ℓ−n (older than anything the window can hold, possibly a
	// duplicate of an evicted heartbeat). Dropped.
	Stale
	// Restart: s is more than RestartJump below ℓ, or so far above the first
	// sequence number s0 that Δ·(s − s0) would leave the time.Duration
	// range (more than 2^62 ns: a sender that restarted with a random or
	// clock-based number). The estimator is reset and the heartbeat recorded
	// as the first one.
	Restart
	// Backward: the heartbeat arrived before the newest Fresh one (the
	// monitor's clock went backwards) and is not a Restart. Its
	// arrival offset A − Δ·s would be wrong by the clock step, so it is
	// dropped and counted (BackwardArrivals).
	Backward
)

var kindNames = [...]string{"fresh", "late", "duplicate", "stale", "restart", "backward"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Estimator is the expected-arrival estimator of Chen, Toueg and Aguilera's
// NFD-E ("On the quality of service of failure detectors", IEEE Trans.
// Computers 51(5):561–580, 2002; docs/algorithms.md, “Chen's NFD-E”). With W
// the n most recently received heartbeats (by arrival), n' = |W| and ℓ the
// largest sequence number received,
//
//	EA(k) = (1/n')·Σ_{j∈W} (A_j − Δ·s_j) + k·Δ,   EA_{ℓ+1} = EA(ℓ+1).
//
// The terms A_j − Δ·s_j ("arrival minus nominal send offset") are kept in a
// detector.Window relative to the first sequence number seen, in exact int64
// nanoseconds, so EA stays right whichever heartbeats were lost.
//
// Heartbeats without sequence number are numbered by arrival: such a
// heartbeat gets s = ℓ+1. On a stream without any sequence numbers this
// makes EA exactly the simplified formula mean(A in W) + ((n'+1)/2)·Δ, with
// its known bias while a loss lies in the window.
//
// Awkward input is classified by Classify (see Kind). A heartbeat arriving
// before the newest Fresh one is Backward and never becomes a sample. A gap of hours is counted: the late sample raises the window
// mean by gap/n' and ages out after n heartbeats.
//
// Duplicate detection is O(1): a bitmap of n bits remembers which of the
// sequence numbers in (ℓ−n, ℓ] were received, so that a duplicate is
// recognised even after later arrivals evicted its first copy from the
// window (a window of 3 given 10, 9, 8, 11 took a second 10 as a new Late
// sample before). Bertier, SFD, 2W-FD and κ-FD build on this type.
type Estimator struct {
	delta       time.Duration
	restartJump uint64
	w           *detector.Window
	got         []uint64 // bit s mod n: s received, for s in (ℓ−n, ℓ]
	base        uint64   // s0: sequence numbers are taken relative to it
	last        uint64   // ℓ
	lastArrival time.Duration
	seen        bool
	maxSpan     uint64 // largest s − s0 with Δ·(s − s0) ≤ 2^62 ns
	back        uint64 // Backward heartbeats dropped
}

// NewEstimator returns an empty estimator, or an error for a negative Δ or
// window size.
func NewEstimator(cfg EstimatorConfig) (*Estimator, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	w, err := detector.NewWindow(cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	return &Estimator{
		delta: cfg.Interval, restartJump: detector.OrDefault(cfg.RestartJump, DefaultRestartJump), w: w,
		got: make([]uint64, (cfg.WindowSize+63)/64), maxSpan: uint64(1<<62) / uint64(cfg.Interval),
	}, nil
}

// BackwardArrivals returns how many heartbeats were dropped as Backward
// (detector.BackwardCounter); a Reset does not clear it.
func (e *Estimator) BackwardArrivals() uint64 { return e.back }

// Interval returns Δ.
func (e *Estimator) Interval() time.Duration { return e.delta }

// WindowSize returns n.
func (e *Estimator) WindowSize() int { return e.w.Size() }

// Len returns n', the number of samples in the window.
func (e *Estimator) Len() int { return e.w.Len() }

// Last returns ℓ, the largest sequence number received (synthetic numbers
// included); ok is false before the first heartbeat.
func (e *Estimator) Last() (seq uint64, ok bool) { return e.last, e.seen }

// LastArrival returns the arrival of the newest Fresh heartbeat.
func (e *Estimator) LastArrival() time.Duration { return e.lastArrival }

// SeqOf returns the sequence number the estimator uses for hb: hb.Seq, or
// ℓ+1 (0 before the first heartbeat) when hb has none.
func (e *Estimator) SeqOf(hb detector.Heartbeat) uint64 {
	switch {
	case hb.HasSeq:
		return hb.Seq
	case e.seen:
		return e.last + 1
	}
	return 0
}

// Classify tells what Observe would do with hb, without changing anything.
func (e *Estimator) Classify(hb detector.Heartbeat) Kind {
	if !e.seen {
		return Fresh
	}
	if !hb.HasSeq {
		if hb.Arrival < e.lastArrival {
			return Backward
		}
		return Fresh
	}
	s := hb.Seq
	switch {
	case s > e.last && s-e.base > e.maxSpan:
		return Restart
	case s < e.last && e.last-s > e.restartJump:
		return Restart // before Backward: the window starts afresh anyway
	case hb.Arrival < e.lastArrival:
		return Backward
	case s > e.last:
		return Fresh
	case s == e.last:
		return Duplicate
	case e.last-s >= uint64(e.w.Size()):
		return Stale
	}
	if e.received(s) {
		return Duplicate // even when evicted from the window by later arrivals
	}
	return Late
}

// Observe records hb and returns its classification.
func (e *Estimator) Observe(hb detector.Heartbeat) Kind {
	if hb.HasSeq && e.seen && hb.Seq > e.last && hb.Seq-e.base <= e.maxSpan && hb.Arrival >= e.lastArrival { // fast path: cannot be a duplicate
		e.add(hb.Seq, hb.Arrival)
		e.last, e.lastArrival = hb.Seq, hb.Arrival
		return Fresh
	}
	k := e.Classify(hb)
	switch k {
	case Backward:
		e.back++
		return k
	case Duplicate, Stale:
		return k
	case Restart:
		e.Reset()
	}
	s := e.SeqOf(hb)
	if !e.seen {
		e.base = s
	}
	e.add(s, hb.Arrival)
	if k != Late {
		e.last, e.lastArrival, e.seen = s, hb.Arrival, true
	}
	return k
}

// add puts the sample of (s, a) in the window.
func (e *Estimator) add(s uint64, a time.Duration) {
	e.w.Add(a - e.nominal(s))
	n := uint64(e.w.Size())
	switch {
	case !e.seen || s-e.last >= n && s > e.last:
		clear(e.got)
	case s > e.last:
		for q := e.last + 1; q < s; q++ {
			e.got[q%n/64] &^= 1 << (q % n % 64)
		}
	}
	e.got[s%n/64] |= 1 << (s % n % 64)
}

// received reports whether s, with ℓ−n < s ≤ ℓ, was received.
func (e *Estimator) received(s uint64) bool {
	n := uint64(e.w.Size())
	return e.got[s%n/64]&(1<<(s%n%64)) != 0
}

// nominal returns Δ·(s − s0), the nominal send offset of s relative to the
// first sequence number (two's complement keeps s < s0 right).
func (e *Estimator) nominal(s uint64) time.Duration {
	return e.delta * time.Duration(int64(s-e.base))
}

// Reset empties the estimator, keeping its configuration.
func (e *Estimator) Reset() {
	e.w.Reset()
	clear(e.got)
	e.base, e.last, e.lastArrival, e.seen = 0, 0, 0, false
}

// ExpectedArrival returns EA(k) rounded to the nearest nanosecond, 0 before
// the first heartbeat. Use k = ℓ+1 for Chen's EA_{ℓ+1} (see Next).
func (e *Estimator) ExpectedArrival(k uint64) time.Duration {
	if e.w.Len() == 0 {
		return 0
	}
	return e.w.MeanDuration() + e.nominal(k)
}

// StdDev returns the population standard deviation of the window's samples
// A_j − Δ·s_j in nanoseconds (0 with fewer than two samples): the spread of
// the arrivals around their expected arrivals, which κ-FD uses.
func (e *Estimator) StdDev() float64 { return e.w.StdDev() }

// Next returns EA_{ℓ+1}, the expected arrival of the next heartbeat.
func (e *Estimator) Next() time.Duration { return e.ExpectedArrival(e.last + 1) }

// FreshnessPoint returns τ_{ℓ+1} = EA_{ℓ+1} + margin, saturating at the ends
// of the time.Duration range instead of wrapping (a margin such as
// math.MaxInt64, meant as "never suspect", must not turn τ into an instant
// in the far past). 0 before the first heartbeat. Chen's Detector and SFD
// compute τ with it.
func (e *Estimator) FreshnessPoint(margin time.Duration) time.Duration {
	if e.w.Len() == 0 {
		return 0
	}
	return detector.AddSat(e.Next(), margin)
}

// ExpectedArrivalSince returns EA(k) − base in nanoseconds, unrounded and
// exact even when instants are near 5e16 ns, for callers that add a
// fractional margin before rounding once (Bertier, SFD). 0 before the first
// heartbeat.
func (e *Estimator) ExpectedArrivalSince(k uint64, base time.Duration) float64 {
	if e.w.Len() == 0 {
		return 0
	}
	return e.w.MeanOffset(base - e.nominal(k))
}
