package trace

import (
	"fmt"
	"math"
	"time"
)

// timeFinding is checkTime's finding for p's field of kind, med from
// what its neighbours predict (their median residual, in float64
// nanoseconds), beyond the threshold T, with the median step m; note, when
// not empty, says why a late heartbeat's delay is still a finding.
func (c *Checker) timeFinding(s *senderCheck, p *pending, kind FindingKind, med, T, m float64, note string) *Finding {
	r := &p.c.Record
	dev := c.exactDeviation(kind, p, med, m)
	var what string
	switch kind {
	case FindingArrival:
		what = fmt.Sprintf("arrival %v is %s off what its neighbours predict", r.Arrival, dev)
	case FindingSent:
		what = fmt.Sprintf("send time %v is %s off what its neighbours predict", r.Sent, dev)
	case FindingDelay:
		what = fmt.Sprintf("one-way delay A−σ = %s is %s off the neighbours' (the stream's clock offset plus delay)", diffText(int64(r.Arrival), int64(r.Sent), false), dev)
		if r.Arrival < r.Sent && med < 0 {
			what += ": it arrives before it was sent, beyond the clock offset"
		}
	}
	if note != "" {
		note = "; " + note
	}
	return c.finding(s, *p, kind, fmt.Sprintf("%s (more than %v = max(%g × median step %v, %g × the neighbours' spread, %v))%s: left out",
		what, time.Duration(math.Round(T)), c.opt.Factor, time.Duration(math.Round(m)), c.opt.Spread, c.opt.Floor, note))
}

// exactDeviation formats, with its sign, how far p's field of kind is
// from the prediction of the neighbour whose residual is med, the median
// (residual's), computed on integers: the float64 residual is off by its
// rounding for fields far from the neighbours' (an arrival of 2^63 − 1 ns
// was printed 257 ns off; atk25's F9). It formats med when no neighbour
// has that residual or a prediction overflows.
func (c *Checker) exactDeviation(kind FindingKind, p *pending, med, m float64) string {
	for _, q := range c.nbr {
		if d, ok := residual(kind, mustField(kind, p), m, p, q); !ok || d != med {
			continue
		}
		vp, okp := intField(kind, p)
		vq, okq := intField(kind, q)
		if !okp || !okq {
			break
		}
		if kind != FindingDelay {
			shift := math.Round(dx(p, q) * m)
			if !(math.Abs(shift) < math.MaxInt64) {
				break
			}
			pred := vq + int64(shift)
			if (shift > 0) != (pred > vq) && shift != 0 { // overflow
				break
			}
			vq = pred
		}
		return diffText(vp, vq, true)
	}
	return signedDur(time.Duration(math.Round(med)))
}

// mustField returns timeField's value (p has the field: checkTime judged
// it).
func mustField(kind FindingKind, p *pending) float64 {
	v, _ := timeField(kind, p)
	return v
}

// intField returns q's field of kind (timeField's) in integer
// nanoseconds, and false when q lacks it or its one-way delay A − σ
// overflows int64.
func intField(kind FindingKind, q *pending) (int64, bool) {
	r := &q.c.Record
	switch kind {
	case FindingArrival:
		return int64(r.Arrival), r.HasArrival
	case FindingSent:
		return int64(r.Sent), r.HasSent
	}
	a, s := int64(r.Arrival), int64(r.Sent)
	d := a - s
	if (s < 0 && d < a) || (s > 0 && d > a) { // overflow
		return 0, false
	}
	return d, r.HasArrival && r.HasSent
}

// diffText formats a − b exactly, as a duration, also beyond the range of
// time.Duration (a difference of two int64 takes 65 bits), with a "+"
// before a difference ≥ 0 when plus.
func diffText(a, b int64, plus bool) string {
	sign := ""
	var u uint64
	if a >= b {
		u = uint64(a) - uint64(b) // exact: the difference is below 2^64
		if plus {
			sign = "+"
		}
	} else {
		u, sign = uint64(b)-uint64(a), "-"
	}
	if u <= math.MaxInt64 {
		return sign + time.Duration(u).String()
	}
	// Beyond 2^63 − 1 ns: hours, minutes and seconds, as Duration.String.
	const hour, minute, second = uint64(time.Hour), uint64(time.Minute), uint64(time.Second)
	h, u := u/hour, u%hour
	mi, u := u/minute, u%minute
	sec, ns := u/second, u%second
	frac := ""
	if ns > 0 {
		frac = fmt.Sprintf(".%09d", ns)
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
	}
	return fmt.Sprintf("%s%dh%dm%d%ss", sign, h, mi, sec, frac)
}

// signedDur formats a deviation with its sign.
func signedDur(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}
