package monitor_test

import (
	"sync"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
)

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

func fixedFactory(timeout time.Duration) monitor.Factory {
	return func() (detector.Detector, error) {
		return detector.NewFixed(detector.FixedConfig{Timeout: new(timeout)})
	}
}

// recorder collects transitions delivered to OnTransition.
type recorder struct {
	mu sync.Mutex
	ts []monitor.Transition
}

func (r *recorder) add(t monitor.Transition) {
	r.mu.Lock()
	r.ts = append(r.ts, t)
	r.mu.Unlock()
}

func (r *recorder) all() []monitor.Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]monitor.Transition(nil), r.ts...)
}

// rampAccrual is a test accrual detector whose level after a heartbeat is
// base + elapsed/unit, with base chosen by the test before each heartbeat:
// it lets a test put the level anywhere relative to High and Low right at an
// arrival, which real detectors (whose level falls to about 0 on arrival)
// only do in corner cases.
type rampAccrual struct {
	unit      time.Duration
	threshold float64
	base      *float64
	cur       float64
	last      time.Duration
	seen      bool
}

func (r *rampAccrual) Observe(hb detector.Heartbeat) {
	r.last, r.seen, r.cur = hb.Arrival, true, *r.base
}
func (r *rampAccrual) Level(now time.Duration) float64 {
	if !r.seen || now < r.last {
		return r.cur
	}
	return r.cur + float64(now-r.last)/float64(r.unit)
}
func (r *rampAccrual) Threshold() float64 { return r.threshold }
func (r *rampAccrual) ElapsedFor(l float64) (time.Duration, bool) {
	if !r.seen {
		return 0, false
	}
	if l <= r.cur {
		return 0, true
	}
	return time.Duration((l - r.cur) * float64(r.unit)), true
}
func (r *rampAccrual) FreshnessPoint() (time.Duration, bool) {
	e, ok := r.ElapsedFor(r.threshold)
	return r.last + e, ok
}
func (r *rampAccrual) WarmingUp() bool { return false }
func (r *rampAccrual) Suspected(now time.Duration) bool {
	tau, ok := r.FreshnessPoint()
	return ok && now > tau
}

// earlyTau is a binary detector whose freshness point is a fixed offset from
// the arrival, possibly negative (as Chen's can be after a late heartbeat).
type earlyTau struct {
	offset *time.Duration
	tau    time.Duration
	seen   bool
}

func (e *earlyTau) Observe(hb detector.Heartbeat)         { e.tau, e.seen = hb.Arrival+*e.offset, true }
func (e *earlyTau) FreshnessPoint() (time.Duration, bool) { return e.tau, e.seen }
func (e *earlyTau) WarmingUp() bool                       { return false }
func (e *earlyTau) Suspected(now time.Duration) bool      { return e.seen && now > e.tau }
