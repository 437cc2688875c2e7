package trace

import (
	"math"
	"slices"
)

// The Checker's Hampel rule on the time fields: the arrival time, the
// send time and the one-way delay against the trend of their neighbours.

// dx returns x_p − x_q on the trend axis: the difference of sequence
// numbers when both have one, else of record indices (computed on integers,
// so huge sequence numbers lose no precision).
func dx(p, q *pending) float64 {
	if p.c.Record.HasSeq && q.c.Record.HasSeq {
		return float64(int64(p.c.Record.Seq - q.c.Record.Seq))
	}
	return float64(p.idx - q.idx)
}

// updateSteps re-estimates the median step per unit of x of the arrival
// and send times over the window (p and its neighbours, in file order).
func (c *Checker) updateSteps(s *senderCheck, p *pending) {
	win := c.win[:0]
	// c.nbr holds before-neighbours then after-neighbours; p goes between.
	i := 0
	for ; i < len(c.nbr) && c.nbr[i].idx < p.idx; i++ {
		win = append(win, c.nbr[i])
	}
	win = append(win, p)
	win = append(win, c.nbr[i:]...)
	c.win = win
	// Both fields' steps in one walk over the window.
	stA, stS := c.scratch[:0], c.iscrF[:0]
	for j := 1; j < len(win); j++ {
		q, r := &win[j-1].c.Record, &win[j].c.Record
		d := dx(win[j], win[j-1])
		if !(d > 0) {
			continue
		}
		if q.HasArrival && r.HasArrival {
			stA = append(stA, float64(r.Arrival-q.Arrival)/d)
		}
		if q.HasSent && r.HasSent {
			stS = append(stS, float64(r.Sent-q.Sent)/d)
		}
	}
	c.scratch, c.iscrF = stA, stS
	if m, ok := medianStep(stA); ok {
		s.stepA = m
	}
	if m, ok := medianStep(stS); ok {
		s.stepS = m
	}
}

// checkTimes applies the Hampel rule to the arrival time, the send time
// and the one-way delay. c.nbr holds the neighbours, the first nb before p.
func (c *Checker) checkTimes(s *senderCheck, p *pending, nb int) *Finding {
	if f := c.checkTime(s, p, nb, FindingArrival, s.stepA); f != nil {
		return f
	}
	if f := c.checkTime(s, p, nb, FindingSent, s.stepS); f != nil {
		return f
	}
	return c.checkTime(s, p, nb, FindingDelay, s.stepA)
}

// timeField returns the field of q that kind checks (the arrival time,
// the send time or the one-way delay A − σ), and whether q has it.
func timeField(kind FindingKind, q *pending) (float64, bool) {
	r := &q.c.Record
	switch kind {
	case FindingArrival:
		return float64(r.Arrival), r.HasArrival
	case FindingSent:
		return float64(r.Sent), r.HasSent
	}
	return float64(r.Arrival) - float64(r.Sent), r.HasArrival && r.HasSent
}

// residual returns how far p's field v (timeField's) is from what q
// predicts with the median step m (none for the delay), and whether q has
// the field.
func residual(kind FindingKind, v, m float64, p, q *pending) (float64, bool) {
	w, ok := timeField(kind, q)
	if !ok {
		return 0, false
	}
	d := v - w
	if kind != FindingDelay {
		d -= dx(p, q) * m
	}
	return d, true
}

// closeAgree reports whether p's field v of kind (timeField's) is within
// max(K·m, Floor) of what both prev and next predict with the median step
// m, and both have the field: checkTime's fast path, and timesAgree's.
func (c *Checker) closeAgree(kind FindingKind, v, m float64, p, prev, next *pending) bool {
	T := max(c.opt.Factor*m, float64(c.opt.Floor))
	d1, ok1 := residual(kind, v, m, p, prev)
	d2, ok2 := residual(kind, v, m, p, next)
	return ok1 && ok2 && math.Abs(d1) <= T && math.Abs(d2) <= T
}

// checkTime applies the Hampel rule to p's field of kind (timeField's),
// with the median step m.
func (c *Checker) checkTime(s *senderCheck, p *pending, nb int, kind FindingKind, m float64) *Finding {
	v, ok := timeField(kind, p)
	if !ok {
		return nil
	}
	// Fast path: both immediate neighbours agree within T.
	if nb > 0 && nb < len(c.nbr) && c.closeAgree(kind, v, m, p, c.nbr[nb-1], c.nbr[nb]) {
		return nil
	}
	T := max(c.opt.Factor*m, float64(c.opt.Floor))
	res := c.scratch[:0]
	res = append(res, 0)
	for _, q := range c.nbr {
		if d, ok := residual(kind, v, m, p, q); ok {
			res = append(res, d)
		}
	}
	c.scratch = res
	if len(res) < 3 {
		return nil
	}
	slices.Sort(res)
	med := res[len(res)/2]
	if math.Abs(med) <= T {
		return nil
	}
	// The spread term: S robust standard deviations (1.4826·MAD) of
	// the neighbours about the trend, so that a stream whose delays
	// scatter widely needs a wider deviation.
	ad := c.iscrF[:0]
	for _, d := range res {
		ad = append(ad, math.Abs(d-med))
	}
	c.iscrF = ad
	slices.Sort(ad)
	T = max(T, c.opt.Spread*1.4826*ad[len(ad)/2])
	if math.Abs(med) <= T {
		return nil
	}
	note := ""
	if kind != FindingSent && med < 0 && p.farLate {
		// Earlier than its run's neighbours predict, but overtaken far
		// below the front: those neighbours are late heartbeats too, and
		// later still (atk26's N4; see Checker).
		return nil
	}
	if kind != FindingSent && med > 0 {
		if ok, _ := c.overtaken(s, p); ok {
			// Later than its neighbours predict, and overtaken by
			// heartbeats sent after it: a late heartbeat, kept (see
			// Checker), when its lateness accounts for its delay.
			if kind != FindingDelay {
				return nil
			}
			if note = c.sentOffTrend(s, p); note == "" {
				return nil
			}
		}
	}
	return c.timeFinding(s, p, kind, med, T, m, note)
}
