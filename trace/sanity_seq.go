package trace

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// seqResidual is how far seq_p is from what q predicts (seq_q plus the
// difference of record indices), as a signed count, saturated at
// ±MaxInt64: sequence numbers are unsigned, and a difference taken modulo
// 2^64 made 2^64−1 look 49 below a neighbour at 48 (and one near 10 look
// in order).
func seqResidual(p, q *pending) int64 {
	a, b := p.c.Record.Seq, q.c.Record.Seq
	var d int64
	if a >= b {
		d = int64(min(a-b, math.MaxInt64))
	} else {
		d = -int64(min(b-a, math.MaxInt64))
	}
	i := p.idx - q.idx // a few records apart
	switch {
	case i > 0 && d < -math.MaxInt64+i:
		return -math.MaxInt64
	case i < 0 && d > math.MaxInt64+i:
		return math.MaxInt64
	}
	return d - i
}

// seqDistance says how far seq_p is from what q predicts, exactly (the
// residual saturates): "+D" above, "-D" below.
func seqDistance(p, q *pending) string {
	pred := q.c.Record.Seq + uint64(p.idx-q.idx) // modulo 2^64, as the prediction is in range
	if s := p.c.Record.Seq; s < pred {
		return fmt.Sprintf("-%d", pred-s)
	}
	return fmt.Sprintf("+%d", p.c.Record.Seq-pred)
}

// sameRun reports whether p continues q's run of sequence numbers: its
// residual from q (seqResidual) is within R, or either has none.
func (c *Checker) sameRun(p, q *pending) bool {
	if !p.c.Record.HasSeq || !q.c.Record.HasSeq {
		return true
	}
	r := seqResidual(p, q)
	return r >= -int64(c.opt.SeqSpan) && r <= int64(c.opt.SeqSpan)
}

// checkSeq applies the Hampel rule to the sequence number and detects
// restarts (a drop that the following records continue).
func (c *Checker) checkSeq(s *senderCheck, p *pending, la []pending) *Finding {
	R := int64(c.opt.SeqSpan)
	in := func(r int64) bool { return r >= -R && r <= R }
	// Fast path: both immediate neighbours agree.
	if len(s.before) > 0 && len(la) > 0 && s.before[len(s.before)-1].c.Record.HasSeq && la[0].c.Record.HasSeq &&
		in(seqResidual(p, &s.before[len(s.before)-1])) && in(seqResidual(p, &la[0])) {
		return nil
	}
	// Under reordering the neighbours include late records, whose
	// predictions for p are too low: p just above the front is in order.
	if q := p.c.Record.Seq; s.hasFront && q > s.front.Seq && q-s.front.Seq <= c.opt.SeqSpan {
		return nil
	}
	if c.late(s, p, la) {
		return nil
	}
	if f, ok := c.checkSeqSent(s, p, la); ok {
		return f
	}
	res := c.iscr[:0]
	res = append(res, 0) // the record itself
	var before []int64
	for i := range s.before {
		if s.before[i].c.Record.HasSeq {
			res = append(res, seqResidual(p, &s.before[i]))
		}
	}
	nb := len(res) - 1
	for i := range la {
		if la[i].c.Record.HasSeq {
			res = append(res, seqResidual(p, &la[i]))
		}
	}
	c.iscr = res
	if len(res) < 3 {
		return nil // too few neighbours to judge
	}
	before = append(before, res[1:1+nb]...)
	slices.Sort(res)
	med := res[len(res)/2]
	if !in(med) {
		q := p.c.Record.Seq
		beyond := ""
		if s.hasFront && farBelow(q, s.front.Seq, c.opt.ReorderWindow) {
			beyond = fmt.Sprintf(", and %d below the highest so far, %d (more than the reorder window, %d)", s.front.Seq-q, s.front.Seq, c.opt.ReorderWindow)
		}
		away := fmt.Sprintf("%+d", med)
		if n := seqNeighbour(p, s.before, la, med); n != nil {
			away = seqDistance(p, n)
		}
		return c.finding(s, *p, FindingSeq, fmt.Sprintf("sequence number %d is %s away from what its neighbours predict (more than %d)%s: left out", q, away, R, beyond))
	}
	if nb > 0 {
		slices.Sort(before)
		if mb := before[len(before)/2]; mb < -R && s.hasFront && farBelow(p.c.Record.Seq, s.front.Seq, uint64(R)) {
			// A drop the following records continue: a new incarnation.
			// The number due is the median neighbour's plus the records
			// between, exactly (the residual saturates: atk26's N10, a
			// wrap read "where about 9223372036854775807 was due").
			if n := seqNeighbour(p, s.before, nil, mb); n != nil {
				return c.restart(s, p, dueText(n.c.Record.Seq, uint64(p.idx-n.idx)))
			}
			return c.restart(s, p, dueText(p.c.Record.Seq, uint64(-mb)))
		}
	}
	return nil
}

// dueText says which sequence number was due at a restart: about base +
// ahead, or, past 2^64 − 1, that the 64-bit counter wrapped (user48's F17:
// "restarts at 0 where about 0 was due" after 2^64 − 1).
func dueText(base, ahead uint64) string {
	due := base + ahead
	if due >= base {
		return fmt.Sprintf("where about %d was due", due)
	}
	n := "2^64"
	if due > 0 {
		n += fmt.Sprintf(" + %d", due)
	}
	return fmt.Sprintf("where about %s was due: the 64-bit counter wrapped past %d", n, uint64(math.MaxUint64))
}

// restart starts a new epoch at p (kept: the new epoch's front) and
// returns its finding; due says what the sequence number was expected to
// be.
func (c *Checker) restart(s *senderCheck, p *pending, due string) *Finding {
	s.epoch++
	p.c.Epoch = s.epoch
	s.before = s.before[:0]
	s.hasFront = false
	s.lateMax = 0 // a new incarnation's last record is judged by its own late heartbeats
	s.prevStart, s.hasPrevStart = s.start, s.hasStart
	s.start, s.hasStart = p.c.Record.Sent, p.c.Record.HasSent
	return c.finding(s, *p, FindingRestart, fmt.Sprintf("sequence restarts at %d %s: a new incarnation of the sender (epoch %d)", p.c.Record.Seq, due, s.epoch))
}

// checkSeqSent judges by send times the sequence numbers that reordering
// makes the record index unfit for; ok is false when it does not apply
// (p or the front has no send time, or p is neither of these cases):
//   - p more than R below the front but sent after it is a restart when
//     most records after it (la) that were also sent after the front are
//     more than R below the front too, or continue from p (sameRun; the
//     new incarnation goes on: atk26's N3, a restart 33 below the front,
//     whose next records are within R of the front), else an outlier (the
//     front goes on: its sequence number is wrong);
//   - p above the front and sent after it is in order when its sequence
//     number is ahead by at most R more than the send times say (the
//     difference over the median send step Δ̂);
//   - p above the front but sent before the record that began the epoch at
//     a restart is a late heartbeat of the incarnation before: left out.
func (c *Checker) checkSeqSent(s *senderCheck, p *pending, la []pending) (*Finding, bool) {
	r, R := &p.c.Record, c.opt.SeqSpan
	if !r.HasSent || !s.hasFront || !s.front.HasSent {
		return nil, false
	}
	switch {
	case farBelow(r.Seq, s.front.Seq, R) && r.Sent > s.front.Sent:
		newer, below := 0, 0
		for i := range la {
			if a := &la[i].c.Record; a.HasSeq && a.HasSent && a.Sent > s.front.Sent {
				newer++
				if farBelow(a.Seq, s.front.Seq, R) || c.sameRun(&la[i], p) {
					below++
				}
			}
		}
		if 2*below > newer {
			return c.restart(s, p, fmt.Sprintf("%s (sent %v after %d)", dueText(s.front.Seq, 1), r.Sent-s.front.Sent, s.front.Seq)), true
		}
		return c.finding(s, *p, FindingSeq, fmt.Sprintf("sequence number %d is %d below %d but sent %v after it, and the records sent after it do not continue from it (more than %d): left out",
			r.Seq, s.front.Seq-r.Seq, s.front.Seq, r.Sent-s.front.Sent, R)), true
	case r.Seq > s.front.Seq && r.Sent > s.front.Sent && s.stepS > 0 &&
		float64(r.Seq-s.front.Seq) <= (float64(r.Sent)-float64(s.front.Sent))/s.stepS+float64(R):
		// Ahead of the front by what the send times say (a loss, or
		// records sent between them that are still on the way), give or
		// take R: in order, whatever late neighbours predict, unless the
		// file puts it before records that arrived before it (misplaced).
		return c.misplaced(s, p, la), true
	case s.hasStart && r.Seq > s.front.Seq && r.Sent < s.start:
		return c.oldIncarnation(s, p), true
	}
	return nil, false
}

// misplaced judges p, a record ahead of the front by what its send time
// says, by its place in the file, which a receive log writes in arrival
// order: when more than half of the records after it that have an
// arrival (the lookahead la) arrive before it by more than Floor, p is
// the record out of place, not they, and is left out; else nil. Such a
// record's number, send time and arrival can all agree with the stream's
// trend (one forged from a later heartbeat: atk27r's F1), and kept as the
// front it made every real record after it a late heartbeat that arrives
// before a record before it, left out.
func (c *Checker) misplaced(s *senderCheck, p *pending, la []pending) *Finding {
	r := &p.c.Record
	if !r.HasArrival {
		return nil
	}
	with, early := 0, 0
	var first *pending
	for i := range la {
		if a := &la[i].c.Record; a.HasArrival {
			with++
			if earlierBy(a.Arrival, r.Arrival, c.opt.Floor) {
				early++
				if first == nil {
					first = &la[i]
				}
			}
		}
	}
	if 2*early <= with {
		return nil
	}
	return c.finding(s, *p, FindingArrival, fmt.Sprintf("arrival %v: sequence number %d is %d above the highest so far, %d, as its send time says, but %d of the %d records of its sender after it in the file arrive more than %v before it (line %d, %v before): out of arrival order, left out",
		r.Arrival, r.Seq, r.Seq-s.front.Seq, s.front.Seq, early, with, c.opt.Floor, first.c.Line, r.Arrival-first.c.Record.Arrival))
}

// oldIncarnation leaves out p, a heartbeat sent before the record that
// began the current epoch at a restart: a late heartbeat of an incarnation
// before, with its number right (SeqKnown). It belongs to the epoch before
// when that one began at the file's start or was sent after its start;
// sent before that too, or when the epoch before began without a send
// time, which one it belongs to cannot be told: epoch 0, none (atk26's
// N2: it was counted against the new incarnation).
func (c *Checker) oldIncarnation(s *senderCheck, p *pending) *Finding {
	r := &p.c.Record
	p.c.Epoch = s.epoch - 1
	of := fmt.Sprintf("of the incarnation before (epoch %d)", p.c.Epoch)
	if p.c.Epoch > 1 && !(s.hasPrevStart && r.Sent >= s.prevStart) {
		p.c.Epoch = 0
		of = "of an incarnation before, which one cannot be told (counted in none)"
	}
	f := c.finding(s, *p, FindingSeq, fmt.Sprintf("sequence number %d, sent %v before the restart of epoch %d, is a late heartbeat %s: left out",
		r.Seq, s.start-r.Sent, s.epoch, of))
	f.SeqKnown = true
	return f
}

// seqSent is a record's sequence number, send time and arrival.
type seqSent struct {
	Seq                 uint64
	Sent, Arrival       time.Duration
	HasSent, HasArrival bool
}

// farBelow reports whether x is more than r below front (without
// overflow: sequence numbers take any 64-bit value).
func farBelow(x, front, r uint64) bool { return x < front && front-x > r }

// late reports whether p is a heartbeat reordered by the network within
// the reorder window W (CheckerConfig.ReorderWindow): its sequence number
// is below the front's by at most W, and it was sent before the front,
// by between half and twice the difference of sequence numbers times the
// median send step, give or take R steps, and it did not arrive more than
// R steps before the front (both have send times, and the step is known) or,
// without them, no more than half of the records after it (la) continue
// from it (sameRun). A restarted sender's
// first records are sent after the front, and the records after them
// continue from them.
func (c *Checker) late(s *senderCheck, p *pending, la []pending) bool {
	q := p.c.Record.Seq
	if !s.hasFront || q > s.front.Seq || s.front.Seq-q > c.opt.ReorderWindow {
		return false
	}
	if p.c.Record.HasSent && s.front.HasSent && s.stepS > 0 {
		// Sent before the front by what the sequence numbers say, within
		// a factor of two (the median step is an estimate, and a rough one
		// among reordered neighbours) give or take R steps: a record whose
		// send time is wrong too is not.
		// And it arrived after the front did (in file order it comes
		// after it), give or take R steps.
		d, r := float64(s.front.Seq-q), float64(c.opt.SeqSpan)
		gap := (float64(s.front.Sent) - float64(p.c.Record.Sent)) / s.stepS
		if rec := &p.c.Record; rec.HasArrival && s.front.HasArrival && (float64(s.front.Arrival)-float64(rec.Arrival))/s.stepS > r {
			return false
		}
		return gap >= 0 && gap >= d/2-r && gap <= 2*d+r
	}
	followers, cont := 0, 0
	for i := range la {
		if la[i].c.Record.HasSeq {
			followers++
			if c.sameRun(&la[i], p) {
				cont++
			}
		}
	}
	return 2*cont <= followers
}

// seenBits is how many sequence numbers below the front senderCheck.seen
// covers: DefaultSanityReorderWindow, 512 bytes a sender.
const seenBits = DefaultSanityReorderWindow

// markSeen marks q, the number of a record kept, as received, before the
// front moves to it. The front is received (it is a kept record's); the
// ring senderCheck.seen holds bit x mod seenBits for each number x from
// seenBits below the front to one below it, the reorder window W's
// numbers (atk26's N8: it held one fewer, so a copy exactly W below the
// front was taken for a late heartbeat). A front that moves up from F to
// q marks F and clears the bits of the numbers between (they stood for
// numbers seenBits lower, now out of range); a new epoch (no front)
// clears them all.
func (s *senderCheck) markSeen(q uint64) {
	if s.seen == nil {
		s.seen = new([seenBits / 64]uint64)
	}
	F := s.front.Seq
	switch {
	case !s.hasFront || q > F && q-F > seenBits:
		*s.seen = [seenBits / 64]uint64{}
	case q > F:
		for from, n := F+1, q-F-1; n > 0; {
			b := from % 64
			k := min(64-b, n)
			s.seen[from/64%(seenBits/64)] &^= (^uint64(0) >> (64 - k)) << b
			from, n = from+k, n-k
		}
		s.seen[F/64%(seenBits/64)] |= 1 << (F % 64)
	case q < F && F-q <= seenBits:
		s.seen[q/64%(seenBits/64)] |= 1 << (q % 64)
	}
}

// wasSeen reports whether a kept record of the current epoch had the
// number q, when q is the front or at most seenBits below it (markSeen).
func (s *senderCheck) wasSeen(q uint64) bool {
	if s.seen == nil || !s.hasFront || q > s.front.Seq {
		return false
	}
	return q == s.front.Seq || s.front.Seq-q <= seenBits && s.seen[q/64%(seenBits/64)]&(1<<(q%64)) != 0
}

// markCopy marks f, the FindingSeq of r, as SeqKnown when r's number was
// received before (wasSeen): a copy, which stands for no missing number
// (atk26's N1); unless r was sent after the front, as a copy, carrying its
// original's send time, is not: then its number is wrong.
func (s *senderCheck) markCopy(f *Finding, r *Record) {
	if f.Kind != FindingSeq || f.SeqKnown || !s.wasSeen(r.Seq) || r.HasSent && s.front.HasSent && r.Sent > s.front.Sent {
		return
	}
	f.SeqKnown = true
	f.Detail = strings.TrimSuffix(f.Detail, ": left out") + "; it was received before: left out"
}

// seqNeighbour returns a neighbour of p (before it or after it) whose
// residual is r, or nil.
func seqNeighbour(p *pending, before, after []pending, r int64) *pending {
	for _, ns := range [][]pending{before, after} {
		for i := range ns {
			if ns[i].c.Record.HasSeq && seqResidual(p, &ns[i]) == r {
				return &ns[i]
			}
		}
	}
	return nil
}
