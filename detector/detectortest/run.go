package detectortest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// seeds are the fixed seeds each scenario runs with.
var seeds = []uint64{1, 2, 3}

// Run checks the properties listed in the package documentation on
// detectors made by newDet, one subtest per scenario and seed (named
// "scenario/seed=N"). newDet must return a fresh detector in its initial
// state on every call; it is called twice per subtest (the detector under
// test and its never-queried twin). A failure names the scenario, seed,
// step and the last heartbeats fed, so that it can be turned into a worked
// test.
func Run(t *testing.T, newDet func() detector.Detector, opts Config) {
	t.Helper()
	o := opts.withDefaults(testing.Short())
	for _, sc := range scenarios {
		if sc.unnumbered && o.RequiresSeq {
			continue
		}
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", sc.name, seed), func(t *testing.T) {
				check(t, newDet, o, sc.clean, stream(sc, seed, o), seed)
			})
		}
	}
}

// reporter is the part of testing.TB the checks use (a fake records
// failures in the kit's own tests).
type reporter interface {
	Helper()
	Fatalf(format string, args ...any)
}

// run holds the state of one checked stream.
type run struct {
	t        reporter
	o        Config
	seed     uint64
	hbs      []detector.Heartbeat
	step     int // index of the heartbeat being checked, -1 before the first
	arrivals map[time.Duration]bool
	maxGap   float64 // the widest gap between the arrivals fed so far, in ns
	r        *rand.Rand
}

func (c *run) fatalf(format string, args ...any) {
	c.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, step %d: ", c.seed, c.step)
	fmt.Fprintf(&b, format, args...)
	if c.step >= 0 {
		b.WriteString("\nlast heartbeats fed (oldest first):")
		for i := max(0, c.step-5); i <= c.step; i++ {
			h := c.hbs[i]
			fmt.Fprintf(&b, "\n  %d: Seq %d HasSeq %v Arrival %d", i, h.Seq, h.HasSeq, int64(h.Arrival))
		}
	}
	c.t.Fatalf("%s", b.String())
}

func check(t reporter, newDet func() detector.Detector, o Config, clean bool, hbs []detector.Heartbeat, seed uint64) {
	t.Helper()
	c := &run{t: t, o: o, seed: seed, hbs: hbs, step: -1, arrivals: map[time.Duration]bool{},
		r: rand.New(rand.NewPCG(seed, 0x5eed))}
	defer func() {
		if p := recover(); p != nil {
			c.fatalf("panic: %v", p)
		}
	}()
	d, twin := newDet(), newDet()
	if d == nil || twin == nil {
		c.fatalf("newDet returned nil")
	}
	c.checkEmpty(d)
	var prevTau time.Duration
	var maxArrival time.Duration
	warm := false // WarmingUp was false at some step (clean streams)
	linear := 0   // steps at which the Linear check ran
	for i, h := range hbs {
		c.step = i
		later := i == 0 || h.Arrival >= maxArrival
		d.Observe(h)
		twin.Observe(h)
		c.arrivals[h.Arrival] = true
		if i > 0 {
			c.maxGap = max(c.maxGap, math.Abs(float64(h.Arrival)-float64(hbs[i-1].Arrival)))
		}
		if i == 0 || h.Arrival > maxArrival {
			maxArrival = h.Arrival
		}

		tau, ok := d.FreshnessPoint()
		if !ok {
			c.fatalf("FreshnessPoint ok is false after a heartbeat")
		}
		tw, okw := twin.FreshnessPoint()
		if tw != tau || okw != ok {
			c.fatalf("a never-queried twin fed the same heartbeats has τ %d (ok %v), the queried one %d (ok %v): queries have side effects or Observe is not deterministic", tw, okw, tau, ok)
		}
		wu := d.WarmingUp()
		if tw := twin.WarmingUp(); tw != wu {
			c.fatalf("WarmingUp is %v, a never-queried twin's %v", wu, tw)
		}
		if o.NoWarmUp && wu {
			c.fatalf("WarmingUp is true after a heartbeat (Config.NoWarmUp)")
		}
		if clean {
			if warm && wu {
				c.fatalf("WarmingUp went back to true on a clean stream")
			}
			warm = warm || !wu
		}
		if o.TauNonDecreasing && i > 0 && later && tau < prevTau {
			c.fatalf("τ moved backwards from %d to %d on a heartbeat arriving no earlier than the others (Config.TauNonDecreasing)", prevTau, tau)
		}
		prevTau = tau

		c.checkSuspected(d, tau, h.Arrival)
		if a, isAcc := d.(detector.Accrual); isAcc {
			c.checkAccrual(a, tau, h.Arrival)
		}
		if l, isLin := d.(detector.Linear); isLin && !o.SkipLinear && c.checkLinear(l, tau) {
			linear++
		}
	}
	if _, isLin := d.(detector.Linear); isLin && !o.SkipLinear && clean && linear == 0 {
		c.step = -1
		c.fatalf("LinearForm was never ok on a clean stream of %d heartbeats: the Linear check did not run (set Config.SkipLinear if that is intended)", len(hbs))
	}
}

// checkEmpty checks a detector that has seen no heartbeat.
func (c *run) checkEmpty(d detector.Detector) {
	c.t.Helper()
	if tau, ok := d.FreshnessPoint(); ok {
		c.fatalf("FreshnessPoint is (%d, true) before the first heartbeat", tau)
	}
	d.WarmingUp()
	for _, now := range []time.Duration{math.MinInt64, 0, math.MaxInt64} {
		if d.Suspected(now) {
			c.fatalf("Suspected(%d) before the first heartbeat", now)
		}
	}
	if a, ok := d.(detector.Accrual); ok {
		for _, now := range []time.Duration{math.MinInt64, 0, math.MaxInt64} {
			if l := a.Level(now); l != 0 {
				c.fatalf("Level(%d) is %v before the first heartbeat, want 0", now, l)
			}
		}
		if e, ok := a.ElapsedFor(a.Threshold()); ok {
			c.fatalf("ElapsedFor(Θ) is (%v, true) before the first heartbeat", e)
		}
	}
	if l, ok := d.(detector.Linear); ok {
		if off, scale, ok := l.LinearForm(); ok {
			c.fatalf("LinearForm is (%d, %v, true) before the first heartbeat", off, scale)
		}
	}
}

// probes returns instants around τ and the newest arrival a, the ends of
// the Duration range and random instants, in increasing order.
func (c *run) probes(tau, a time.Duration) []time.Duration {
	p := []time.Duration{
		math.MinInt64, math.MinInt64 + 1, 0, math.MaxInt64 - 1, math.MaxInt64,
		detector.AddSat(tau, -1), tau, detector.AddSat(tau, 1), detector.AddSat(tau, -c.o.Interval), detector.AddSat(tau, c.o.Interval),
		detector.AddSat(a, -c.o.Interval), detector.AddSat(a, -1), a, detector.AddSat(a, 1), detector.AddSat(a, time.Hour), detector.AddSat(a, 24*time.Hour),
		time.Duration(c.r.Uint64()),
	}
	for range 4 {
		p = append(p, detector.AddSat(tau, time.Duration(c.r.NormFloat64()*float64(3*c.o.Interval))))
	}
	if a < tau {
		span := uint64(tau) - uint64(a)
		for range 4 {
			p = append(p, a+time.Duration(c.r.Uint64N(span)))
		}
	}
	slices.Sort(p)
	return p
}

// checkSuspected checks Suspected(t) == (t > τ) at probes.
func (c *run) checkSuspected(d detector.Detector, tau, a time.Duration) {
	c.t.Helper()
	for _, now := range c.probes(tau, a) {
		if got := d.Suspected(now); got != (now > tau) {
			c.fatalf("Suspected(%d) = %v with τ = %d (now − τ = %d ns): want now > τ", now, got, tau, int64(now)-int64(tau))
		}
	}
}

// levels are the suspicion levels at which ElapsedFor is checked besides Θ
// and random ones.
var levels = []float64{0, 1e-9, 0.1, 0.5, 1, 2, 3, 8, 16, 50, 300}

// checkAccrual checks Level and ElapsedFor for the current state.
func (c *run) checkAccrual(d detector.Accrual, tau, a time.Duration) {
	c.t.Helper()
	th := d.Threshold()
	prev, prevAt := -1.0, time.Duration(0)
	for _, now := range c.probes(tau, a) {
		l := d.Level(now)
		if math.IsNaN(l) || l < 0 {
			c.fatalf("Level(%d) = %v: want a number ≥ 0", now, l)
		}
		if l < prev {
			c.fatalf("Level decreases in now with no heartbeat in between: Level(%d) = %v > Level(%d) = %v", prevAt, prev, now, l)
		}
		prev, prevAt = l, now
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1} {
		d.ElapsedFor(x) // must not panic; the result is unspecified
	}

	e, ok := d.ElapsedFor(th)
	if !ok || tau == math.MaxInt64 {
		return // τ saturated: T_last + t*(Θ) is clamped
	}
	last := tau - e
	if e < 0 || !c.arrivals[last] {
		c.fatalf("FreshnessPoint %d − ElapsedFor(Θ = %v) %d = %d is not the arrival of any heartbeat fed: FreshnessPoint is not T_last + ElapsedFor(Θ)", tau, th, e, last)
	}
	ls := append(slices.Clone(levels), th, th*(1-1e-9), th*(1+1e-9))
	for range 4 {
		ls = append(ls, c.r.Float64()*2*th, c.r.ExpFloat64()*20)
	}
	slices.Sort(ls)
	prevE, prevOK, prevL := time.Duration(0), true, 0.0
	for _, level := range ls {
		el, ok := d.ElapsedFor(level)
		if ok && !prevOK {
			c.fatalf("ElapsedFor(%v) is ok but ElapsedFor(%v), a lower level, is never reached", level, prevL)
		}
		if ok && el < prevE {
			c.fatalf("ElapsedFor is not non-decreasing in the level: ElapsedFor(%v) = %d > ElapsedFor(%v) = %d", prevL, prevE, level, el)
		}
		prevOK, prevL = ok, level
		if !ok {
			continue
		}
		prevE = el
		if el < 0 {
			c.fatalf("ElapsedFor(%v) = %d is negative", level, el)
		}
		// The crossing found by bisection on Level lies within 1 ns of
		// el: Level(T_last+el+1) ≥ level and Level(T_last+el−2) < level.
		// Beyond 2^53 ns (104 days) a float64 elapsed time no longer
		// resolves 1 ns: the slack grows by a few ulps of el, and of the
		// widest gap fed, which bounds the statistics el is computed from
		// (a mean and a deviation of intervals, whose float64 product with
		// a level's coefficient errs by ulps of their size, not of el's).
		slack := 1 + time.Duration((float64(el)+c.maxGap)*0x1p-50)
		at := detector.AddSat(last, el)
		if at > math.MaxInt64-slack {
			continue // T_last + ElapsedFor + slack is beyond the Duration range
		}
		if l := d.Level(at + slack); l < level {
			c.fatalf("Level(T_last + ElapsedFor(%v) + %dns) = %v is below the level (T_last = %d, ElapsedFor = %d)", level, slack, l, last, el)
		}
		if el > slack {
			if l := d.Level(at - slack - 1); l >= level {
				c.fatalf("Level(T_last + ElapsedFor(%v) − %dns) = %v already reaches the level: ElapsedFor is not the smallest elapsed time (T_last = %d, ElapsedFor = %d)", level, slack+1, l, last, el)
			}
		}
	}
}

// checkLinear checks τ = Offset + Scale·p and reports whether it could.
func (c *run) checkLinear(d detector.Linear, tau time.Duration) bool {
	c.t.Helper()
	off, scale, ok := d.LinearForm()
	if !ok || tau == math.MaxInt64 || tau == math.MinInt64 {
		return false
	}
	want := float64(off) + scale*c.o.LinearParam
	// float64 keeps 53 bits: allow a few ulps of the terms added.
	tol := 2 + (math.Abs(float64(off))+math.Abs(scale*c.o.LinearParam)+math.Abs(float64(tau)))*0x1p-51
	if math.IsNaN(want) || math.Abs(want-float64(tau)) > tol {
		c.fatalf("LinearForm: Offset %d + Scale %v · p %v = %.1f, FreshnessPoint %d (off by %.1f ns, tolerance %.1f)", off, scale, c.o.LinearParam, want, tau, want-float64(tau), tol)
	}
	return true
}

// RunConfigs runs Run, in a subtest named after each key of configs, on
// detectors made by newDet from that configuration (the algorithm
// package's constructor, such as jacobson.New). opts returns the Config
// for a configuration, given one detector made from it (so that LinearParam
// can be read from the detector's defaults); nil means the zero Config. A
// configuration that newDet rejects fails the subtest.
func RunConfigs[C any, D detector.Detector](t *testing.T, configs map[string]C, newDet func(C) (D, error), opts func(C, D) Config) {
	t.Helper()
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			d, err := newDet(cfg)
			if err != nil {
				t.Fatalf("config %+v: %v", cfg, err)
			}
			var o Config
			if opts != nil {
				o = opts(cfg, d)
			}
			Run(t, func() detector.Detector {
				d, err := newDet(cfg)
				if err != nil {
					panic(fmt.Sprintf("config %+v accepted once, then rejected: %v", cfg, err)) // reported by check
				}
				return d
			}, o)
		})
	}
}
