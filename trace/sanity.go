package trace

import (
	"fmt"
	"math"
	"time"
)

// FindingKind says what is wrong with a record (see Finding).
type FindingKind int

const (
	// FindingArrival: the arrival time stands far outside what the
	// sender's neighbouring records predict (a late heartbeat that the
	// network reordered is not one: see Checker).
	FindingArrival FindingKind = iota + 1
	// FindingSent: the send time stands far outside what the neighbouring
	// records predict.
	FindingSent
	// FindingDelay: the apparent one-way delay A − σ is far from the
	// neighbours' (this includes an arrival before the send beyond the
	// stream's clock offset; a late heartbeat that the network reordered
	// is not one: see Checker).
	FindingDelay
	// FindingSeq: the sequence number stands far outside the neighbours'
	// (and the records after it do not continue from it, so it is not a
	// restart).
	FindingSeq
	// FindingTruncated: the record comes from the file's last line, which
	// has no line ending: a recorder killed mid-write leaves such a line,
	// cut anywhere, possibly inside a number that still parses.
	FindingTruncated
	// FindingRestart: the sequence numbers start again far below the
	// previous ones and the following records continue from there: a new
	// incarnation of the sender. The record is kept; it starts a new epoch.
	FindingRestart
)

// String returns a short name: "arrival", "sent", "delay", "seq",
// "truncated" or "restart".
func (k FindingKind) String() string {
	switch k {
	case FindingArrival:
		return "arrival"
	case FindingSent:
		return "sent"
	case FindingDelay:
		return "delay"
	case FindingSeq:
		return "seq"
	case FindingTruncated:
		return "truncated"
	case FindingRestart:
		return "restart"
	}
	return fmt.Sprintf("FindingKind(%d)", int(k))
}

// Finding is one record that cannot be right, or a sequence restart.
type Finding struct {
	File   string
	Line   int // 1-based line of the record
	Sender string
	Kind   FindingKind
	// Detail says what was found and what was expected, in words.
	Detail string
	// Excluded is true when the record is left out of the stream (every
	// kind but FindingRestart).
	Excluded bool
	// SeqKnown, for a FindingSeq, says that the number itself is right:
	// a copy of a number its incarnation received before, or a late
	// heartbeat of an incarnation before (Checked.Epoch is then its own,
	// 0 when that cannot be told). Otherwise a FindingSeq's number is
	// wrong, its true number unknown: it stands for a missing one.
	SeqKnown bool
}

// String formats the finding as "file:line: sender S: detail".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: sender %q: %s", f.File, f.Line, f.Sender, f.Detail)
}

// Error makes a Finding usable as an error (for strict checking).
func (f *Finding) Error() string { return f.String() }

// Defaults of CheckerConfig.
const (
	DefaultSanityNeighbours = 8
	DefaultSanityFactor     = 2
	DefaultSanitySpread     = 30
	DefaultSanityFloor      = 10 * time.Millisecond
	DefaultSanitySeqSpan    = 32
	// DefaultSanityReorderWindow is CheckerConfig.ReorderWindow's
	// default: 4096 sequence numbers, 41 s of heartbeats at Δ = 10 ms.
	DefaultSanityReorderWindow = 4096
)

// CheckerConfig tunes a Checker. Zero fields take the defaults above.
type CheckerConfig struct {
	// File names the input in findings.
	File string
	// Neighbours is k: a record is judged against the k records of its
	// sender before it (those kept) and the k after it, in file order.
	Neighbours int
	// Factor is K: a time field is an outlier when it is more than
	// max(K·m, S·1.4826·MAD, Floor) away from the median prediction of the
	// neighbours, where m is the median step of that field per sequence
	// number (per record without sequence numbers) in the window (the
	// median inter-arrival time for arrivals) and MAD the median absolute
	// deviation of the neighbours' predictions: K·m is relative to the
	// stream's pace, S·1.4826·MAD to its scatter (S robust standard
	// deviations). The defaults K = 2, S = 30 flag a row 205 ms off a
	// 100 ms stream with 1 ms of jitter and nothing on the LIP6 excerpt, on
	// fdgen's presets (the jitter preset's heavy-tailed delays among them)
	// nor on 10^6 and 10^7 generated lognormal heartbeats; see
	// docs/algorithms.md, “Input sanity”.
	Factor float64
	// Spread is S (see Factor).
	Spread float64
	// Floor is the smallest time deviation ever called an outlier, and
	// the slack of the arrival order that tells a late heartbeat (see
	// Checker).
	Floor time.Duration
	// SeqSpan is R: a sequence number more than R away from the
	// neighbours' prediction is an outlier, and a drop by more than R
	// below the sender's highest sequence number so far that the
	// following records continue is a restart; but see ReorderWindow.
	SeqSpan uint64
	// ReorderWindow is W: a record whose sequence number is at most W
	// below the highest of its sender's incarnation so far (the front) is
	// a late heartbeat, reordered by the network, and neither an outlier
	// nor a restart, when it was sent before the front by what the
	// sequence numbers say, within a factor of two give or take R
	// intervals (both have send times) or, without send times, when no more than half of the next k
	// records continue from it (the front goes on after it). A drop
	// by more than W, or a record sent after the front with a lower
	// sequence number, is judged by SeqSpan's rule.
	ReorderWindow uint64
}

// Checked is a record with the Checker's verdict.
type Checked struct {
	Record Record
	Line   int
	// Epoch is the sender's incarnation within the file: 1, then one more
	// at each FindingRestart; a late heartbeat of an incarnation before,
	// left out, has that one's (0 when it cannot be told).
	Epoch int
	// SenderIndex is the place of the record's sender among the senders
	// given to the Checker, from 0, in the order of their first records
	// (the order Flush goes through them): a slice indexed by it finds a
	// sender's state without a lookup by name.
	SenderIndex int
	// Finding is nil when the record looks right. When Finding.Excluded
	// the record must be left out.
	Finding *Finding
}

// Checker finds the records of a trace that cannot be right, per sender,
// in one streaming pass with memory bounded by 2k+2 records and 512 bytes
// per sender (the window, the front, see CheckerConfig.ReorderWindow,
// which of the 4096 numbers below the front were received, and the largest
// lateness of its kept records, see below).
//
// The rule is a Hampel filter (Hampel 1974; Pearson, "Outliers in process
// modeling and identification", IEEE TCST 10(1), 2002) on each field
// against its trend: for the record i and each neighbour j of the same
// sender (k kept records before it, k records after it, in file order),
// neighbour j predicts the field at i as t_j + (x_i − x_j)·m, where x is the
// sequence number (the record index without sequence numbers) and m is the
// median step of the field per unit of x over the window (Δ, or the median
// inter-arrival time). The record is an outlier when the median of these
// predictions and of t_i itself is farther than max(K·m, S·1.4826·MAD,
// Floor) from t_i (MAD: the median absolute deviation of those
// predictions about their median).
// Including t_i makes a run of up to k shifted records outliers while a
// lasting shift (more than k records: a clock step, a loss burst) is a step
// of the trend, not an outlier. The one-way delay A − σ is checked the same
// way with no trend, and the sequence number against the record index with
// threshold R, and against the sender's highest so far so that reordered
// heartbeats are neither outliers nor restarts (CheckerConfig.ReorderWindow).
//
// A late heartbeat is no finding: a record whose arrival, or one-way
// delay, is later than the neighbours predict, and that was overtaken by
// heartbeats of its sender sent after it (it comes, in file order, after a
// kept record of its incarnation with a higher sequence number, the kept
// records before it arrive no later than it and the k records after it,
// at least one, no earlier than it, give or take Floor, as in a receive
// log written in arrival order; or, the last record of its sender, with
// none after it, its lateness is at most max(S·L, Floor), where its
// lateness is its arrival behind the front's less what the send times
// between them account for (without send times: the numbers between them
// times the median arrival step), about its one-way delay beyond the
// front's, and L the largest lateness of its sender's kept records) is
// kept: a failure detector is judged on such heartbeats; a reordered
// trace's last records are its most delayed ones. Its send time and sequence number are still checked (a
// send time that disagrees with its sequence number is a FindingSent; one
// more than R below the front only within the reorder window's band). A
// record that arrives late without being overtaken (a corrupted arrival
// among records in order, or a last record hours late), or earlier than
// predicted, is a finding. A record more than R below the front, which
// no record of its run neighbours, is late by its number: the same rule
// judges its arrival (FindingArrival when it was not overtaken so); once
// overtaken, its arrival and delay are not judged early against the
// neighbours of its run, which are late heartbeats themselves (a burst
// delayed together, one of which got through first).
// See docs/algorithms.md, “Input sanity”.
//
// Records are given in file order with Add; verdicts come out through the
// emit function, per sender in file order, k records late (Flush emits the
// rest). It is not safe for concurrent use.
type Checker struct {
	opt     CheckerConfig
	emit    func(Checked)
	senders map[string]*senderCheck
	order   []*senderCheck
	scratch []float64
	iscr    []int64
	iscrF   []float64
	nbr     []*pending
	win     []*pending
	// full: judge every record in full, never by timesAgree alone (tests
	// check that both give the same verdicts).
	full bool
}

type pending struct {
	c            Checked
	unterminated bool
	// farLate: more than R below the front and overtaken (checkFarBelow),
	// so checkTime does not judge it early (see Checker).
	farLate bool
	idx     int64 // index of the record within its sender
}

type senderCheck struct {
	name   string
	index  int       // Checked.SenderIndex
	before []pending // last ≤ k kept records of the current epoch
	after  []pending // after[0] is judged once k records follow it
	// The arrays before and after slide along (pushWindow).
	beforeBuf, afterBuf []pending
	n                   int64
	epoch               int
	stepA               float64 // median arrival step per x (ns)
	stepS               float64 // median send step per x (ns)
	since               int
	// front is the sequence number and send time of the record of the
	// current epoch with the highest sequence number among those kept
	// (hasFront: one is).
	front    seqSent
	hasFront bool
	// start is the send time of the record that began the current epoch
	// at a restart (hasStart: it began at a restart and had one).
	start    time.Duration
	hasStart bool
	// prevStart is start of the epoch before (hasPrevStart: it had one).
	prevStart    time.Duration
	hasPrevStart bool
	// lateMax is the largest lateness (senderCheck.lateness) of the
	// current epoch's kept records below the front, 0 when none was.
	lateMax float64
	// seen marks the sequence numbers of the current epoch's kept
	// records from seenBits below the front to one below it (nil before
	// the first kept record with one): see markSeen.
	seen *[seenBits / 64]uint64
}

// NewChecker returns a Checker that passes each record with its verdict to
// emit.
func NewChecker(opt CheckerConfig, emit func(Checked)) *Checker {
	if opt.Neighbours <= 0 {
		opt.Neighbours = DefaultSanityNeighbours
	}
	if !(opt.Factor > 0) || math.IsInf(opt.Factor, 0) {
		opt.Factor = DefaultSanityFactor
	}
	if !(opt.Spread > 0) || math.IsInf(opt.Spread, 0) {
		opt.Spread = DefaultSanitySpread
	}
	if opt.Floor <= 0 {
		opt.Floor = DefaultSanityFloor
	}
	if opt.SeqSpan == 0 {
		opt.SeqSpan = DefaultSanitySeqSpan
	}
	opt.SeqSpan = min(opt.SeqSpan, math.MaxInt64/4)
	if opt.ReorderWindow == 0 {
		opt.ReorderWindow = DefaultSanityReorderWindow
	}
	return &Checker{opt: opt, emit: emit, senders: make(map[string]*senderCheck)}
}

// Add gives the next record of the file, its 1-based line, and whether it
// came from a last line without line ending (Reader.Unterminated).
func (c *Checker) Add(rec Record, line int, unterminated bool) {
	s := c.senders[rec.Sender]
	if s == nil {
		s = &senderCheck{name: rec.Sender, index: len(c.order), epoch: 1, since: math.MaxInt}
		c.senders[rec.Sender] = s
		c.order = append(c.order, s)
	}
	s.after = pushWindow(s.after, &s.afterBuf, pending{c: Checked{Record: rec, Line: line, SenderIndex: s.index}, unterminated: unterminated, idx: s.n})
	s.n++
	if len(s.after) > c.opt.Neighbours {
		c.judge(s)
	}
}

// Senders returns how many senders the records given so far have.
func (c *Checker) Senders() int { return len(c.order) }

// Flush emits the verdicts of the records still waiting for neighbours,
// sender by sender in order of first appearance.
func (c *Checker) Flush() {
	for _, s := range c.order {
		for len(s.after) > 0 {
			c.judge(s)
		}
	}
}

// judge decides s.after[0], emits it and moves it to the kept context.
func (c *Checker) judge(s *senderCheck) {
	p := &s.after[0] // not a copy: a copy would escape to the heap
	la := s.after[1:]
	k := c.opt.Neighbours
	p.c.Epoch = s.epoch
	var f *Finding
	if p.unterminated {
		f = c.finding(s, *p, FindingTruncated, "last line has no line ending: the recording was cut (a complete file ends with a newline)")
	}
	if f == nil && p.c.Record.HasSeq {
		f = c.checkSeq(s, p, la)
		if f == nil {
			f = c.checkFarBelow(s, p)
		} else {
			s.markCopy(f, &p.c.Record)
		}
	}
	if f == nil || !f.Excluded {
		// Between re-estimates of the steps, a record whose closest
		// neighbours agree with it on every time field is found right
		// without gathering the others (checkTime's fast path).
		if due := s.since >= k; due || c.full || !c.timesAgree(s, p, la) {
			nb := c.gather(s, p, la)
			if due {
				c.updateSteps(s, p)
				s.since = 0
			}
			if g := c.checkTimes(s, p, nb); g != nil {
				if f != nil { // a restart record that is also wrong: report both
					g.Detail = f.Detail + "; " + g.Detail
				}
				f = g
			}
		}
		s.since++
	}
	p.c.Finding = f
	c.emit(p.c)
	kept := *p
	s.after = s.after[1:]
	c.nbr, c.win = c.nbr[:0], c.win[:0] // they point into s.after and s.before
	if f == nil || !f.Excluded {
		if len(s.before) == k {
			s.before = s.before[1:]
		}
		s.before = pushWindow(s.before, &s.beforeBuf, kept)
		if r := &kept.c.Record; r.HasSeq {
			if l, ok := s.lateness(r); ok && l > s.lateMax {
				s.lateMax = l
			}
			s.markSeen(r.Seq)
			if !s.hasFront || r.Seq > s.front.Seq {
				s.front, s.hasFront = seqSent{r.Seq, r.Sent, r.Arrival, r.HasSent, r.HasArrival}, true
			}
		}
	}
}

// gather sets c.nbr to p's neighbours: the kept records before it, then
// the records after it (la), whose sequence numbers belong to the same run
// as p's (a restart or a wild sequence number is not a neighbour); it
// returns how many are before p.
func (c *Checker) gather(s *senderCheck, p *pending, la []pending) int {
	c.nbr = c.nbr[:0]
	for i := range s.before {
		if c.sameRun(p, &s.before[i]) {
			c.nbr = append(c.nbr, &s.before[i])
		}
	}
	nb := len(c.nbr)
	for i := range la {
		if c.sameRun(p, &la[i]) {
			c.nbr = append(c.nbr, &la[i])
		}
	}
	return nb
}

// timesAgree reports whether checkTimes would find nothing by its fast
// paths alone: p's closest neighbours of its run, the last before it and
// the first after it (gather's c.nbr[nb−1] and c.nbr[nb]), both agree
// with each of p's time fields within its threshold, or p lacks the field.
// false means checkTimes must run.
func (c *Checker) timesAgree(s *senderCheck, p *pending, la []pending) bool {
	var prev, next *pending
	for i := len(s.before) - 1; i >= 0; i-- {
		if c.sameRun(p, &s.before[i]) {
			prev = &s.before[i]
			break
		}
	}
	for i := range la {
		if c.sameRun(p, &la[i]) {
			next = &la[i]
			break
		}
	}
	if prev == nil || next == nil {
		return false
	}
	for _, f := range [3]struct {
		kind FindingKind
		m    float64
	}{{FindingArrival, s.stepA}, {FindingSent, s.stepS}, {FindingDelay, s.stepA}} {
		v, ok := timeField(f.kind, p)
		if !ok {
			continue
		}
		if !c.closeAgree(f.kind, v, f.m, p, prev, next) {
			return false
		}
	}
	return true
}

// pushWindow appends x to w, a window of records that lies in buf and
// loses its first record as it moves on. At the end of buf it moves w to
// buf's start, or to a new buf of twice its length: a record is then
// copied about once per window length, instead of at every step as when
// the window is kept at buf's start, and buf grows as append would for a
// sender of a few records.
func pushWindow(w []pending, buf *[]pending, x pending) []pending {
	if len(w) == cap(w) {
		if cap(*buf) < max(2*len(w), 1) {
			*buf = make([]pending, max(2*len(w), 1))
		}
		w = (*buf)[:copy(*buf, w)]
	}
	return append(w, x)
}

func (c *Checker) finding(s *senderCheck, p pending, kind FindingKind, detail string) *Finding {
	return &Finding{File: c.opt.File, Line: p.c.Line, Sender: s.name, Kind: kind, Detail: detail, Excluded: kind != FindingRestart}
}
