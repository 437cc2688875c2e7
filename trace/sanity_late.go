package trace

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// The late-heartbeat rules of the Checker: whether a record below the
// front was overtaken (a late heartbeat the network reordered), the
// arrival of one far below the front, and the send time of a late one.

// overtaken reports whether p, the record being judged (s.after[0]), was
// overtaken by heartbeats of its sender sent after it, as a receive log
// written in arrival order shows it: it comes, in file order, after a kept
// record of its incarnation with a higher sequence number (the front), the
// kept records before it (the k last and the front) arrive no later than
// it, and the records after it in the file (the k that follow, at least
// one with an arrival) no earlier than it, give or take Floor. A record
// whose arrival is later than one of those after it, or earlier than one
// of those before it, has a wrong arrival (or theirs is: either way the
// file contradicts itself there); kept, it would be replayed late by as
// much as the records it was written before. When not, why says what
// contradicts it (empty when p is not below the front or has no arrival).
func (c *Checker) overtaken(s *senderCheck, p *pending) (ok bool, why string) {
	r := &p.c.Record
	if !r.HasSeq || !r.HasArrival || !s.hasFront || r.Seq >= s.front.Seq {
		return false, ""
	}
	for i := len(s.before) - 1; i >= 0; i-- {
		if q := &s.before[i]; q.c.Record.HasArrival && earlierBy(r.Arrival, q.c.Record.Arrival, c.opt.Floor) {
			return false, fmt.Sprintf("line %d, before it, arrives %v after it", q.c.Line, q.c.Record.Arrival-r.Arrival)
		}
	}
	if f := &s.front; f.HasArrival && earlierBy(r.Arrival, f.Arrival, c.opt.Floor) {
		return false, fmt.Sprintf("heartbeat %d, before it, arrives %v after it", f.Seq, f.Arrival-r.Arrival)
	}
	n := 0
	for i := 1; i < len(s.after); i++ {
		if q := &s.after[i]; q.c.Record.HasArrival {
			if earlierBy(q.c.Record.Arrival, r.Arrival, c.opt.Floor) {
				return false, fmt.Sprintf("line %d, after it, arrives %v before it", q.c.Line, r.Arrival-q.c.Record.Arrival)
			}
			n++
		}
	}
	if n == 0 {
		return c.lastLate(s, r)
	}
	return true, ""
}

// lastLate reports whether r, a record below the front with no record of
// its sender after it that has an arrival (the sender's last in the file),
// is a late heartbeat by its lateness (senderCheck.lateness): at most K
// times the largest of its incarnation's kept records
// (senderCheck.lateMax), or Floor. Nothing after it shows that it was
// overtaken, but a reordered trace's last records are its most delayed
// heartbeats (the sender stopped, and those on the way arrive last:
// TestSanityLastLate*); an arrival corrupted by more than K times the
// lateness its incarnation showed, or any last record far below the
// front in a trace whose kept records show no late heartbeat, is none.
// K, not the spread factor S: nothing after the record bounds what a
// corrupt arrival adds, so the bound is tight, and on heavy tails a
// genuine last record past it is left out with a warning
// (docs/algorithms.md, “Input sanity”). When not, why says so.
func (c *Checker) lastLate(s *senderCheck, r *Record) (ok bool, why string) {
	why = "no record of its sender after it shows that the file is in arrival order there"
	l, ok := s.lateness(r)
	if !ok {
		return false, why
	}
	if l <= max(c.opt.Factor*s.lateMax, float64(c.opt.Floor)) {
		return true, ""
	}
	by := "send times"
	if !r.HasSent || !s.front.HasSent {
		by = fmt.Sprintf("numbers times the median arrival step, %v", time.Duration(math.Round(s.stepA)))
	}
	return false, fmt.Sprintf("%s, and it is late by %s behind heartbeat %d, more than %g × %s, the most its incarnation's kept records were late (at least %v; by their arrivals and %s)",
		why, floatDur(l), s.front.Seq, c.opt.Factor, floatDur(s.lateMax), c.opt.Floor, by)
}

// lateness returns how much later r arrived than the front (the record
// with the highest sequence number so far), r being below it, beyond what
// the heartbeats between them account for: A_r − A_front plus the
// difference of their send times when both have one, else plus the
// difference of numbers times the median arrival step (both then about
// the excess of r's one-way delay over the front's). ok is false when r is
// not below the front or either lacks an arrival.
func (s *senderCheck) lateness(r *Record) (l float64, ok bool) {
	f := &s.front
	if !s.hasFront || !r.HasSeq || r.Seq >= f.Seq || !r.HasArrival || !f.HasArrival {
		return 0, false
	}
	l = float64(r.Arrival) - float64(f.Arrival)
	if r.HasSent && f.HasSent {
		return l + float64(f.Sent) - float64(r.Sent), true
	}
	return l + float64(f.Seq-r.Seq)*s.stepA, true
}

// floatDur formats a duration held in float64 nanoseconds, also beyond
// time.Duration's range.
func floatDur(x float64) string {
	if math.Abs(x) < 1<<62 {
		return time.Duration(math.Round(x)).String()
	}
	return fmt.Sprintf("%.4gh", x/float64(time.Hour))
}

// sentOffTrend says, for p, a late heartbeat whose one-way delay is far
// above its neighbours', whether its send time accounts for part of that:
// it is earlier than its neighbours predict by more than max(Floor, S
// robust standard deviations of their predictions), the send check's
// bound without its K·m term (empty when it is not, or too few neighbours
// have send times). A heartbeat the network delayed keeps its send time
// on its number's trend, so its lateness accounts for its delay; but the
// send check's 2Δ would let a send time moved up to 2Δ earlier through
// as a late heartbeat (rvL25). A send time later than predicted (a timer
// that fired late) makes the delay A − σ smaller, never larger: it
// accounts for none of it (atk26's N5: 15 ms of timer lateness and 280 ms
// in the network was left out).
func (c *Checker) sentOffTrend(s *senderCheck, p *pending) string {
	v, ok := timeField(FindingSent, p)
	if !ok {
		return ""
	}
	res := c.scratch[:0]
	res = append(res, 0)
	for _, q := range c.nbr {
		if d, ok := residual(FindingSent, v, s.stepS, p, q); ok {
			res = append(res, d)
		}
	}
	c.scratch = res
	if len(res) < 3 {
		return ""
	}
	slices.Sort(res)
	med := res[len(res)/2]
	ad := c.iscrF[:0]
	for _, d := range res {
		ad = append(ad, math.Abs(d-med))
	}
	c.iscrF = ad
	slices.Sort(ad)
	T := max(float64(c.opt.Floor), c.opt.Spread*1.4826*ad[len(ad)/2])
	if med >= -T {
		return ""
	}
	return fmt.Sprintf("overtaken, a late heartbeat, but its send time is %s off what its neighbours predict (more than %v = max(%v, %g × the neighbours' spread)), which its lateness does not account for",
		c.exactDeviation(FindingSent, p, med, s.stepS), time.Duration(math.Round(T)), c.opt.Floor, c.opt.Spread)
}

// earlierBy reports whether a is earlier than b by more than slack,
// exactly for any two times (b − a can exceed the int64 range).
func earlierBy(a, b, slack time.Duration) bool {
	return a < b && uint64(b)-uint64(a) > uint64(slack)
}

// checkFarBelow judges the arrival of p, a record kept by the sequence
// rules, when its number is more than R below the front: no record of its
// run neighbours it, so checkTime has nothing to predict its arrival by,
// and it arrives late by more than R intervals by what its number says
// (it comes after the front in the file). Such a record is a late
// heartbeat, kept, only when it was overtaken (overtaken); otherwise its
// arrival is a finding, whatever the distance to the front (atk25's F1:
// a last record an hour late, or a record whose later neighbours arrived
// before it, was kept without a word).
//
// A record whose number was received already (markSeen), more than R
// numbers back, cannot have been overtaken either: a copy the network
// duplicates comes right after its original, and a number corrupted to
// one received long before looks like a late heartbeat to the sequence
// rules without send times (atk25's F2: 150 written as 15, kept as a
// duplicate). A FindingSeq.
func (c *Checker) checkFarBelow(s *senderCheck, p *pending) *Finding {
	r := &p.c.Record
	if !s.hasFront || !farBelow(r.Seq, s.front.Seq, c.opt.SeqSpan) {
		return nil
	}
	if s.wasSeen(r.Seq) {
		f := c.finding(s, *p, FindingSeq, fmt.Sprintf("sequence number %d is %d below the highest so far, %d, and was received before: a copy that late is no heartbeat the network reordered (a corrupted number?): left out",
			r.Seq, s.front.Seq-r.Seq, s.front.Seq))
		f.SeqKnown = true // received: it stands for no missing number
		return f
	}
	if !r.HasArrival {
		return nil
	}
	ok, why := c.overtaken(s, p)
	if ok {
		p.farLate = true
		return nil
	}
	return c.finding(s, *p, FindingArrival, fmt.Sprintf("arrival %v: heartbeat %d is %d below the highest so far, %d, so it was overtaken, but %s (a late heartbeat arrives after the records before it in the file and before those after it, give or take %v): left out",
		r.Arrival, r.Seq, s.front.Seq-r.Seq, s.front.Seq, why, c.opt.Floor))
}
