package phi

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// arrivals applies the rules the three models share for the newest
// heartbeat: stale and duplicate sequence numbers, arrivals going backwards
// (see the package documentation).
type arrivals struct {
	last    time.Duration // T_last
	seen    bool
	maxSeq  uint64 // largest sequence number seen
	hasSeq  bool
	lastSeq uint64 // sequence number of the heartbeat at T_last
	lastHas bool
	back    uint64 // heartbeats dropped for arriving before T_last
}

// same reports whether a and b are equal (a == b, field by field, which
// the compiler inlines where it calls a function for ==).
func (a *arrivals) same(b *arrivals) bool {
	return a.last == b.last && a.maxSeq == b.maxSeq && a.lastSeq == b.lastSeq && a.back == b.back &&
		a.seen == b.seen && a.hasSeq == b.hasSeq && a.lastHas == b.lastHas
}

// accept reports whether hb is a new heartbeat and, if so, moves T_last to
// its arrival. It returns the interval since the previous T_last (0 for the
// first heartbeat), whether hb is the first heartbeat, and the sequence gap
// (1 when either heartbeat has no sequence number).
func (a *arrivals) accept(hb detector.Heartbeat) (interval time.Duration, gap uint64, first, ok bool) {
	if hb.HasSeq {
		if a.hasSeq && hb.Seq <= a.maxSeq {
			return 0, 0, false, false // stale or duplicate
		}
		a.maxSeq, a.hasSeq = hb.Seq, true
	}
	if !a.seen {
		a.last, a.seen = hb.Arrival, true
		a.lastSeq, a.lastHas = hb.Seq, hb.HasSeq
		return 0, 1, true, true
	}
	if hb.Arrival < a.last {
		a.back++
		return 0, 0, false, false // the monitor's clock went backwards
	}
	gap = 1
	if hb.HasSeq && a.lastHas {
		gap = hb.Seq - a.lastSeq
	}
	// hb.Arrival ≥ a.last: the unsigned difference is exact where the
	// signed one would overflow (from a negative instant to a positive
	// one more than math.MaxInt64 later); it saturates as an interval.
	interval = time.Duration(min(uint64(hb.Arrival)-uint64(a.last), math.MaxInt64))
	a.last = hb.Arrival
	a.lastSeq, a.lastHas = hb.Seq, hb.HasSeq
	return interval, gap, false, true
}

// elapsed returns now − T_last in nanoseconds, clamped at 0 (clock
// reordering, docs/algorithms.md, “φ accrual: normal model”).
func (a *arrivals) elapsed(now time.Duration) float64 {
	if now <= a.last {
		return 0
	}
	return float64(uint64(now) - uint64(a.last)) // exact where now − last would overflow
}

// maxElapsed is the largest crossing time a time.Duration can hold.
const maxElapsed = float64(math.MaxInt64)

// ceilDuration rounds a non-negative crossing time in nanoseconds up to a
// whole nanosecond. ok is false when it does not fit in a time.Duration (or
// is NaN): the level is then never reached in representable time.
func ceilDuration(ns float64) (time.Duration, bool) {
	if ns <= 0 {
		return 0, true
	}
	c := math.Ceil(ns)
	if !(c < maxElapsed) {
		return math.MaxInt64, false
	}
	return time.Duration(c), true
}

// freshnessPoint returns τ = T_last + ⌈t*⌉ for a crossing time t* in
// nanoseconds, saturating at the largest time.Duration: exact also where
// ⌈t*⌉ is beyond the Duration range but the sum is not (T_last < 0).
func freshnessPoint(last time.Duration, tstar float64) time.Duration {
	t, ok := ceilDuration(tstar)
	if ok {
		return detector.AddSat(last, t)
	}
	// ⌈t*⌉ ≥ 2^63, or NaN: below 2^64 (an integer in float64) and with
	// T_last < 0 the sum may fit; t* − 2^63 is then exact.
	if last >= 0 || !(tstar < 0x1p64) {
		return math.MaxInt64
	}
	return detector.AddSat(last+math.MaxInt64+1, time.Duration(tstar-0x1p63))
}

// freshnessPointNear returns freshnessPoint(last, tstar) and true when
// T_last and ⌈t*⌉ are both below 2^62 (then their sum fits), else false
// (the caller then calls freshnessPoint): the common case, small enough to
// inline into the loops that compute many freshness points.
func freshnessPointNear(last time.Duration, tstar float64) (time.Duration, bool) {
	c := math.Ceil(tstar)
	return last + time.Duration(c), c < 1<<62 && uint64(last) < 1<<62
}

// checkThreshold validates a configured threshold Θ (0 already replaced by
// the default).
func checkThreshold(model string, th float64) error {
	if !(th > 0) || math.IsInf(th, 1) {
		return fmt.Errorf("phi: %s threshold %v must be finite and positive", model, th)
	}
	return nil
}

// fields resolves the pointer fields of one model's configuration in
// order, keeping the first error: each value is the field's setting or
// its default, checked once here so that the detector holds plain values.
type fields struct {
	model string
	err   error
}

// duration returns *p, or def when p is nil; a negative value is an error
// naming the field.
func (f *fields) duration(name string, p *time.Duration, def time.Duration) time.Duration {
	d := detector.OrDefault(p, def)
	if d < 0 && f.err == nil {
		f.err = fmt.Errorf("phi: %s %s %v is negative", f.model, name, d)
	}
	return d
}

// threshold returns Θ, th or DefaultThreshold when th is 0; one that is
// negative, NaN or infinite is an error.
func (f *fields) threshold(th float64) float64 {
	th = cmp.Or(th, DefaultThreshold)
	if err := checkThreshold(f.model, th); err != nil && f.err == nil {
		f.err = err
	}
	return th
}

// window returns WindowSize, n or def when n is 0; a negative n is an
// error.
func (f *fields) window(n, def int) int {
	if n < 0 && f.err == nil {
		f.err = fmt.Errorf("phi: %s WindowSize %d is negative", f.model, n)
	}
	return cmp.Or(n, def)
}

// minSamples returns MinSamples, *p or def when p is nil; a value outside
// [0, window] is an error.
func (f *fields) minSamples(p *int, def, window int) int {
	n := detector.OrDefault(p, def)
	if (n < 0 || n > window) && f.err == nil {
		f.err = fmt.Errorf("phi: %s MinSamples %d is outside [0, WindowSize=%d]", f.model, n, window)
	}
	return n
}
