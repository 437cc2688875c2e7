package satzger

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// Defaults (see the package documentation for the reasoning).
const (
	// DefaultWindowSize is N, the number of inter-arrival times kept.
	DefaultWindowSize = 1000
	// DefaultThreshold is θ.
	DefaultThreshold = 0.99
	// DefaultScale is c.
	DefaultScale = 0.9
	// DefaultBootstrapInterval is the sample assumed before the first
	// inter-arrival time.
	DefaultBootstrapInterval = time.Second
	// DefaultRestartJump is the backwards sequence jump taken as a sender
	// restart.
	DefaultRestartJump = 100
)

// Config configures a Detector. The zero value means the defaults.
type Config struct {
	// WindowSize N: the number of most recent inter-arrival times kept.
	// Default DefaultWindowSize (1000); must not be negative.
	WindowSize int
	// Threshold θ in (0, 1]: the process is suspected once the level
	// reaches θ. Default DefaultThreshold (0.99).
	Threshold float64
	// Scale c > 0: the level compares the samples with c·(t − T_last).
	// Default DefaultScale (0.9); 1 is the plain empirical distribution.
	Scale float64
	// BootstrapInterval: the single sample assumed while the window is
	// empty. Default (nil): DefaultBootstrapInterval (1 s); new(0) assumes a
	// zero interval, so that the process is suspected as soon as time passes
	// until an interval is known. Must not be negative.
	BootstrapInterval *time.Duration
	// MinSamples: WarmingUp is true while the window holds fewer
	// inter-arrival times. Default WindowSize, as in the papers; must be in
	// [0, WindowSize]; new(0) turns warm-up off.
	MinSamples *int
	// RestartJump: a sequence number more than RestartJump below the
	// largest seen is a sender restart. Default DefaultRestartJump (100).
	RestartJump *uint64
}

// Detector is Satzger et al.'s adaptive accrual failure detector (ACM SAC
// 2007: the suspicion level of the detector's definition; docs/algorithms.md,
// “Satzger's adaptive accrual detector”). With S the window of the N' most recent inter-arrival
// times and T_last the arrival of the newest heartbeat, the suspicion
// level at t is (with the scale c of Config.Scale):
//
//	L(t) = |{I ∈ S : I ≤ c·(t − T_last)}| / N'
//
// L is in [0, 1] and non-decreasing while no heartbeat arrives. It reaches
// a level θ ∈ (0, 1] when c·(t − T_last) reaches I_(m), the m-th smallest
// sample, m = ⌈θ·N'⌉:
//
//	τ = T_last + I_(m)/c   (rounded up to the nanosecond)
//
// so the freshness point is an order statistic of the window. The window
// is kept sorted next to the arrival-ordered detector.Window: Observe costs
// O(N) in the worst case (one insertion and one deletion in a sorted
// array, a memmove), Level O(log N), FreshnessPoint O(1), and Trackers
// reads each of many thresholds' τ with one index.
//
// A Detector is not safe for concurrent use.
type Detector struct {
	window     *detector.Window
	sorted     []time.Duration // the window's samples in increasing order
	threshold  float64
	scale      float64
	bootstrap  time.Duration
	minSamples int
	restart    uint64

	back   uint64        // heartbeats dropped for arriving before T_last
	last   time.Duration // T_last
	seen   bool
	maxSeq uint64
	hasSeq bool
	tau    time.Duration
	own    crossingMemo // the crossing of the detector's own threshold
}

var _ detector.Accrual = (*Detector)(nil)

// New returns a detector, or an error naming the first invalid field.
func New(cfg Config) (*Detector, error) {
	if cfg.WindowSize < 0 {
		return nil, fmt.Errorf("satzger: WindowSize %d is negative", cfg.WindowSize)
	}
	cfg.WindowSize = cmp.Or(cfg.WindowSize, DefaultWindowSize)
	cfg.Threshold = cmp.Or(cfg.Threshold, DefaultThreshold)
	if !(cfg.Threshold > 0 && cfg.Threshold <= 1) {
		return nil, fmt.Errorf("satzger: Threshold %v is not in (0, 1]", cfg.Threshold)
	}
	cfg.Scale = cmp.Or(cfg.Scale, DefaultScale)
	if !(cfg.Scale > 0) || math.IsInf(cfg.Scale, 1) {
		return nil, fmt.Errorf("satzger: Scale %v is not finite and positive", cfg.Scale)
	}
	bootstrap := detector.OrDefault(cfg.BootstrapInterval, DefaultBootstrapInterval)
	if bootstrap < 0 {
		return nil, fmt.Errorf("satzger: BootstrapInterval %v is negative", bootstrap)
	}
	minSamples := detector.OrDefault(cfg.MinSamples, cfg.WindowSize)
	if minSamples < 0 || minSamples > cfg.WindowSize {
		return nil, fmt.Errorf("satzger: MinSamples %d is outside [0, WindowSize=%d]", minSamples, cfg.WindowSize)
	}
	w, err := detector.NewWindow(cfg.WindowSize)
	if err != nil {
		return nil, err
	}
	return &Detector{
		window: w, sorted: make([]time.Duration, 0, cfg.WindowSize),
		threshold: cfg.Threshold, scale: cfg.Scale, bootstrap: bootstrap,
		minSamples: minSamples, restart: detector.OrDefault(cfg.RestartJump, DefaultRestartJump),
	}, nil
}

// Threshold returns θ.
func (d *Detector) Threshold() float64 { return d.threshold }

// Scale returns c.
func (d *Detector) Scale() float64 { return d.scale }

// Window returns the inter-arrival times in arrival order (read it, do not
// add to it).
func (d *Detector) Window() *detector.Window { return d.window }

// Observe records a heartbeat: I = A − T_last enters the window, T_last = A,
// and τ is recomputed. Stale and duplicate sequence numbers and arrivals
// before T_last are ignored; a restart moves T_last without an interval.
func (d *Detector) Observe(hb detector.Heartbeat) {
	if hb.HasSeq {
		if d.hasSeq && hb.Seq <= d.maxSeq {
			if d.maxSeq-hb.Seq <= d.restart {
				return // stale or duplicate
			}
			d.maxSeq = hb.Seq // a sender restart: no interval across it
			d.last = hb.Arrival
			d.update()
			return
		}
		d.maxSeq, d.hasSeq = hb.Seq, true
	}
	if d.seen {
		if hb.Arrival < d.last {
			d.back++
			return // the monitor's clock went backwards
		}
		// hb.Arrival ≥ T_last: the unsigned difference is exact, and
		// saturates as an interval.
		d.add(time.Duration(min(uint64(hb.Arrival)-uint64(d.last), math.MaxInt64)))
	}
	d.last, d.seen = hb.Arrival, true
	d.update()
}

// add puts an interval in the window and in the sorted copy. An interval
// that evicts another replaces it in place: only the samples between the
// two positions move, one step.
func (d *Detector) add(iv time.Duration) {
	old, evicted := d.window.Add(iv)
	s := d.sorted
	if !evicted {
		d.sorted = slices.Insert(s, lowerBound(s, iv), iv)
		return
	}
	j, i := lowerBounds(s, iv, old) // s[i] == old
	if j <= i {
		copy(s[j+1:i+1], s[j:i])
		s[j] = iv
	} else {
		copy(s[i:j-1], s[i+1:j])
		s[j-1] = iv
	}
}

// lowerBound returns the first index of s, sorted, whose value is at least v
// (len(s) if none); s and v are intervals, never negative. The halving loop
// has no data-dependent branch (x − v cannot overflow, and its sign says
// x < v): intervals near v are as often below as above it, and a branch on
// them is mispredicted half the time.
func lowerBound(s []time.Duration, v time.Duration) int {
	base, n := 0, len(s)
	for n > 1 {
		half := n >> 1
		base += half & int((s[base+half-1]-v)>>63)
		n -= half
	}
	if n == 1 {
		base += 1 & int((s[base]-v)>>63)
	}
	return base
}

// lowerBounds returns lowerBound(s, v) and lowerBound(s, w), the two
// searches interleaved in one loop: each step's load waits on the step
// before, so two independent searches take about the time of one.
func lowerBounds(s []time.Duration, v, w time.Duration) (int, int) {
	bv, bw, n := 0, 0, len(s)
	for n > 1 {
		half := n >> 1
		bv += half & int((s[bv+half-1]-v)>>63)
		bw += half & int((s[bw+half-1]-w)>>63)
		n -= half
	}
	if n == 1 {
		bv += 1 & int((s[bv]-v)>>63)
		bw += 1 & int((s[bw]-w)>>63)
	}
	return bv, bw
}

func (d *Detector) update() {
	var boot [1]time.Duration
	s := d.samples(&boot)
	d.tau = detector.AddSat(d.last, d.own.elapsed(s, d.threshold, d.scale)) // MaxInt64 when never reached
}

// crossingMemo is ElapsedFor(level) for a level in (0, 1], remembering
// the rank of the last sample count and the crossing of the last order
// statistic: while the window's length stays (as it does once full) and
// its m-th smallest sample does not change, neither does the answer.
type crossingMemo struct {
	n, m  int           // the rank m for n samples (n = 0: none)
	x, e  time.Duration // e = crossing(x) when set
	known bool
}

// elapsed returns ElapsedFor(level) (MaxInt64 when not reached) on the
// sorted samples s.
func (c *crossingMemo) elapsed(s []time.Duration, level, scale float64) time.Duration {
	if len(s) != c.n {
		c.n, c.m = len(s), Rank(level, len(s))
	}
	if x := s[c.m-1]; !c.known || x != c.x {
		c.e, _ = crossing(x, scale)
		c.x, c.known = x, true
	}
	return c.e
}

// samples returns the sorted samples, or the bootstrap sample while the
// window is empty.
func (d *Detector) samples(boot *[1]time.Duration) []time.Duration {
	if len(d.sorted) > 0 {
		return d.sorted
	}
	boot[0] = d.bootstrap
	return boot[:]
}

// Level returns L(now): 0 before the first heartbeat; an instant before
// T_last counts as T_last.
func (d *Detector) Level(now time.Duration) float64 {
	if !d.seen {
		return 0
	}
	var boot [1]time.Duration
	s := d.samples(&boot)
	var e float64
	if now > d.last {
		e = float64(uint64(now) - uint64(d.last))
	}
	bound := d.scale * e
	// The number of samples I with float64(I) ≤ c·e: the predicate is
	// monotone along the sorted samples.
	n, _ := slices.BinarySearchFunc(s, bound, func(x time.Duration, b float64) int {
		if float64(x) <= b {
			return -1
		}
		return 1
	})
	return float64(n) / float64(len(s))
}

// ElapsedFor returns the smallest elapsed time e ≥ 0 (whole nanoseconds)
// with L(T_last + e) ≥ level: I_(m)/c rounded up, m the smallest count with
// m/N' ≥ level (0 for a level ≤ 0). ok is false before the first
// heartbeat, for a level above 1 or NaN (never reached), and when e does
// not fit in a time.Duration.
func (d *Detector) ElapsedFor(level float64) (time.Duration, bool) {
	if !d.seen || !(level <= 1) {
		return 0, false
	}
	if level <= 0 {
		return 0, true
	}
	var boot [1]time.Duration
	s := d.samples(&boot)
	return crossing(s[Rank(level, len(s))-1], d.scale)
}

// Rank returns m, the smallest count of n samples whose fraction m/n (as
// Level divides it) reaches level: ⌈level·n⌉ up to rounding, between 1 and
// n. The freshness point is T_last + I_(m)/c, so thresholds of equal rank
// for every n have equal freshness points (qos's sweep merges them). level
// must be in (0, 1] and n ≥ 1.
func Rank(level float64, n int) int {
	fn := float64(n)
	m := min(max(int(math.Ceil(level*fn)), 1), n)
	for m > 1 && float64(m-1)/fn >= level {
		m--
	}
	for m < n && float64(m)/fn < level {
		m++
	}
	return m
}

// WindowSize returns N.
func (d *Detector) WindowSize() int { return d.window.Size() }

// crossing returns the smallest whole e ≥ 0 with float64(x) ≤ c·float64(e),
// and false when it is beyond the Duration range.
func crossing(x time.Duration, c float64) (time.Duration, bool) {
	if x <= 0 {
		return 0, true
	}
	v := math.Ceil(float64(x) / c)
	if !(v < float64(math.MaxInt64)) {
		return math.MaxInt64, false
	}
	e := time.Duration(v)
	// A few steps repair the rounding of the division (each float64 step
	// is exact below 2^53 ns; above it the ulp exceeds 1 ns and the
	// comparison with Level's is still the same expression).
	for i := 0; i < 4 && e > 0 && float64(x) <= c*float64(e-1); i++ {
		e--
	}
	for i := 0; i < 4 && float64(x) > c*float64(e) && e < math.MaxInt64; i++ {
		e++
	}
	return e, true
}

// FreshnessPoint returns τ = T_last + I_(m)/c (saturating at the largest
// time.Duration); ok is false before the first heartbeat.
func (d *Detector) FreshnessPoint() (time.Duration, bool) { return d.tau, d.seen }

// FreshnessPointAt returns the freshness point the detector would have with
// threshold θ instead of its own, on the same window (which does not
// depend on θ): what qos's threshold sweep replays. ok is false before the
// first heartbeat and for θ outside (0, 1].
func (d *Detector) FreshnessPointAt(threshold float64) (time.Duration, bool) {
	if !d.seen || !(threshold > 0 && threshold <= 1) {
		return 0, false
	}
	e, _ := d.ElapsedFor(threshold)
	return detector.AddSat(d.last, e), true
}

// WarmingUp reports whether no heartbeat was seen or the window holds fewer
// than MinSamples intervals.
func (d *Detector) WarmingUp() bool { return !d.seen || d.window.Len() < d.minSamples }

// Suspected reports now > τ.
func (d *Detector) Suspected(now time.Duration) bool { return d.seen && now > d.tau }

// BackwardArrivals returns how many heartbeats were dropped for arriving
// before T_last (detector.BackwardCounter).
func (d *Detector) BackwardArrivals() uint64 { return d.back }
