package trace

import (
	"cmp"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Dist summarises a sample of durations. SD is the sample standard deviation
// (n−1 denominator; gonum stat.MeanStdDev). Percentiles are empirical: the
// smallest sample value whose empirical CDF reaches p (gonum stat.Quantile
// with stat.Empirical). All fields are 0 when N is 0; SD is 0 when N is 1.
type Dist struct {
	N                       int
	Mean, SD                time.Duration
	Min, P50, P90, P99, Max time.Duration
}

// Stats summarises one sender's stream. Counts about sequence numbers are
// meaningful only when HasSeq, those about send times only when HasSent,
// those about arrivals only when HasArrival (that is, when at least one
// record had the field).
type Stats struct {
	Sender  string
	Records int

	HasArrival bool
	// FirstArrival and LastArrival are the smallest and largest arrival
	// instants; Span is LastArrival − FirstArrival, or, without arrivals,
	// the span of send instants.
	FirstArrival, LastArrival time.Duration
	Span                      time.Duration
	// InterArrival summarises A_k − A_{k−1} between consecutive records in
	// the order given (arrival order for a Split stream). A pair whose
	// arrival goes backwards is counted in Backwards and left out.
	InterArrival Dist
	Backwards    int

	HasSeq       bool
	FirstSeq     uint64  // smallest sequence number received
	LastSeq      uint64  // largest sequence number received
	Expected     uint64  // LastSeq − FirstSeq + 1
	Lost         uint64  // sequence numbers in [FirstSeq, LastSeq] never received (see Accumulator.AlsoReceived)
	LossRate     float64 // Lost / Expected (fraction, 0..1)
	LossBursts   int     // maximal runs of consecutive lost sequence numbers
	LongestBurst uint64  // length of the longest run
	Duplicates   int     // records whose sequence number was already received
	Reordered    int     // records (not duplicates) arriving after a larger sequence number

	HasSent bool
	// FirstSent and LastSent are the smallest and largest send instants.
	FirstSent, LastSent time.Duration
	// SendInterval summarises σ_k − σ_{k−1} between consecutive records
	// whose sequence numbers differ by exactly 1 (between all consecutive
	// records when there are no sequence numbers), so losses do not inflate
	// it. SenderJitter is its standard deviation.
	SendInterval Dist
	SenderJitter time.Duration

	// HasClock is true when at least two records have both send and arrival
	// times. ClockOffset and DriftPPM come from a least-squares line (gonum
	// stat.LinearRegression) of A_k − σ_k against A_k: ClockOffset is the
	// fitted A − σ at the arrival of the first record having both times
	// (receiver clock minus sender clock plus
	// the typical one-way delay; the two cannot be separated) and DriftPPM is
	// the slope in microseconds per second (parts per million, positive when
	// the receiver's clock runs faster than the sender's or delays grow).
	HasClock    bool
	ClockOffset time.Duration
	DriftPPM    float64

	// Interval estimates the nominal heartbeat interval Δ from the steps
	// between successive records: the send-time difference divided by the
	// sequence-number difference (for records in file order with
	// increasing sequence numbers), or without sequence numbers the send
	// interval; without send times the same with arrival times. It is the
	// mean of the steps within a factor 2 of their median, so that a
	// sender pause, an outage or a clock step does not move it (the span
	// divided by the sequence span would: one hour of pause in a 100 ms
	// stream of ten minutes gives 1.3 s).
	Interval time.Duration
}

const seqPageBits = 16

// seqPage is a bitmap of 2^16 consecutive sequence numbers.
type seqPage [1 << seqPageBits / 64]uint64

// Accumulator computes Stats over one stream in one pass. Add records in
// arrival order. Memory: a bitmap of received sequence numbers (one bit per
// number in the covered range, in 8 KiB pages), plus 24 bytes per record for
// the inter-arrival sample (exact percentiles need the whole sample) and the
// clock fit. The zero value is ready to use.
type Accumulator struct {
	sender string
	n      int

	hasArr            bool
	prevArr           time.Duration
	firstArr, lastArr time.Duration
	ia                series // ns
	backwards         int

	hasSeq                         bool
	pages                          map[uint64]*seqPage
	minSeq                         uint64
	maxSeq                         uint64
	distinct                       uint64
	dups                           int
	reordered                      int
	sentMinSeq, sentMaxSeq         time.Duration
	arrMinSeq, arrMaxSeq           time.Duration
	haveSentMinSeq, haveSentMaxSeq bool
	haveArrMinSeq, haveArrMaxSeq   bool

	hasSent             bool
	firstSent, lastSent time.Duration
	prev                Record
	havePrev            bool
	si                  series // ns
	stepS, stepA        series // per-step send and arrival differences, ns (see Stats.Interval)

	clockBase   time.Duration
	clockOrigin time.Duration
	haveBase    bool
	clock       fit // x: s since the first arrival, y: A − σ − clockBase, ns

	// exact is how many samples each series keeps before it is summarized
	// (0: exactSamples); tests lower it.
	exact int

	// also holds records received but not in the stream (AlsoReceived).
	also *Accumulator
}

// limit returns how many samples a series keeps exactly.
func (a *Accumulator) limit() int { return cmp.Or(a.exact, exactSamples) }

// Add adds one record of the stream.
func (a *Accumulator) Add(r Record) {
	if a.n == 0 {
		a.sender = r.Sender
	}
	a.n++
	if r.HasArrival {
		if !a.hasArr {
			a.hasArr = true
			a.firstArr, a.lastArr = r.Arrival, r.Arrival
		} else {
			d := r.Arrival - a.prevArr
			if d < 0 {
				a.backwards++
			} else {
				a.ia.add(float64(d), a.limit())
			}
			a.firstArr = min(a.firstArr, r.Arrival)
			a.lastArr = max(a.lastArr, r.Arrival)
		}
		a.prevArr = r.Arrival
	}
	if r.HasSeq {
		a.addSeq(r)
		if a.havePrev && a.prev.HasSeq && r.Seq > a.prev.Seq {
			k := float64(r.Seq - a.prev.Seq)
			if r.HasSent && a.prev.HasSent {
				a.stepS.add(float64(r.Sent-a.prev.Sent)/k, a.limit())
			}
			if r.HasArrival && a.prev.HasArrival {
				a.stepA.add(float64(r.Arrival-a.prev.Arrival)/k, a.limit())
			}
		}
	}
	if r.HasSent {
		if !a.hasSent {
			a.hasSent = true
			a.firstSent, a.lastSent = r.Sent, r.Sent
		}
		a.firstSent = min(a.firstSent, r.Sent)
		a.lastSent = max(a.lastSent, r.Sent)
		if a.havePrev && a.prev.HasSent && (r.HasSeq == a.prev.HasSeq) && (!r.HasSeq || r.Seq == a.prev.Seq+1) {
			a.si.add(float64(r.Sent-a.prev.Sent), a.limit())
		}
		if r.HasArrival {
			if !a.haveBase {
				a.haveBase = true
				a.clockBase = r.Arrival - r.Sent
			}
			// x in seconds since the first arrival, y in ns relative to the
			// first record's A − σ: both small enough for float64.
			a.clock.add((r.Arrival - a.firstArrOrThis(r)).Seconds(), float64(r.Arrival-r.Sent-a.clockBase), a.limit())
		}
	}
	a.prev, a.havePrev = r, true
}

// firstArrOrThis returns the first arrival seen (the record's own when it is
// the first), used as the origin of the clock fit's time axis.
func (a *Accumulator) firstArrOrThis(r Record) time.Duration {
	if a.clock.len() == 0 {
		a.clockOrigin = r.Arrival
	}
	return a.clockOrigin
}

func (a *Accumulator) addSeq(r Record) {
	s := r.Seq
	if !a.hasSeq {
		a.hasSeq = true
		a.pages = make(map[uint64]*seqPage)
		a.minSeq, a.maxSeq = s, s
	}
	key := s >> seqPageBits
	pg := a.pages[key]
	if pg == nil {
		pg = new(seqPage)
		a.pages[key] = pg
	}
	bit := s & (1<<seqPageBits - 1)
	w, m := bit/64, uint64(1)<<(bit%64)
	if pg[w]&m != 0 {
		a.dups++
		return
	}
	pg[w] |= m
	if a.distinct > 0 && s < a.maxSeq {
		a.reordered++
	}
	a.distinct++
	if a.distinct == 1 || s <= a.minSeq {
		a.minSeq = s
		a.sentMinSeq, a.haveSentMinSeq = r.Sent, r.HasSent
		a.arrMinSeq, a.haveArrMinSeq = r.Arrival, r.HasArrival
	}
	if a.distinct == 1 || s >= a.maxSeq {
		a.maxSeq = s
		a.sentMaxSeq, a.haveSentMaxSeq = r.Sent, r.HasSent
		a.arrMaxSeq, a.haveArrMaxSeq = r.Arrival, r.HasArrival
	}
}

// lossRuns returns the number of maximal runs of missing sequence numbers in
// [minSeq, maxSeq] and the longest run, skipping absent pages in O(1).
func (a *Accumulator) lossRuns() (runs int, longest uint64) {
	keys := slices.Sorted(maps.Keys(a.pages))
	var also map[uint64]*seqPage
	if a.also != nil && a.also.hasSeq {
		// Pages only the other records have, within [minSeq, maxSeq].
		also = a.also.pages
		for k := range also {
			if _, ok := a.pages[k]; !ok && k >= a.minSeq>>seqPageBits && k <= a.maxSeq>>seqPageBits {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
	}
	var run uint64
	next := a.minSeq // next sequence number to examine
	flush := func() {
		if run > 0 {
			runs++
			longest = max(longest, run)
			run = 0
		}
	}
	for _, k := range keys {
		start := k << seqPageBits
		if start > next { // absent pages: all missing
			run += start - next
			next = start
		}
		pg, op := a.pages[k], also[k]
		end := min(start+(1<<seqPageBits)-1, a.maxSeq)
		for s := next; s <= end; s++ {
			bit := s - start
			if pg != nil && pg[bit/64]&(1<<(bit%64)) != 0 || op != nil && op[bit/64]&(1<<(bit%64)) != 0 {
				flush()
			} else {
				run++
			}
			if s == math.MaxUint64 {
				break
			}
		}
		next = end + 1
	}
	flush()
	return runs, longest
}

func dist(ns []float64) Dist {
	if len(ns) == 0 {
		return Dist{}
	}
	sortFloats(ns)
	d := Dist{N: len(ns), Min: dur(ns[0]), Max: dur(ns[len(ns)-1])}
	mean, sd := stat.MeanStdDev(ns, nil)
	if len(ns) == 1 {
		sd = 0
	}
	d.Mean, d.SD = dur(mean), dur(sd)
	d.P50 = dur(stat.Quantile(0.50, stat.Empirical, ns, nil))
	d.P90 = dur(stat.Quantile(0.90, stat.Empirical, ns, nil))
	d.P99 = dur(stat.Quantile(0.99, stat.Empirical, ns, nil))
	return d
}

// dur rounds float64 nanoseconds to a Duration.
func dur(ns float64) time.Duration { return time.Duration(math.Round(ns)) }

// Stats returns the statistics of the records added so far. It sorts the
// accumulated samples in place; Add may still be called afterwards.
func (a *Accumulator) Stats() Stats {
	s := Stats{Sender: a.sender, Records: a.n}
	s.HasArrival = a.hasArr
	if a.hasArr {
		s.FirstArrival, s.LastArrival = a.firstArr, a.lastArr
		s.Span = a.lastArr - a.firstArr
		s.InterArrival = a.ia.dist()
		s.Backwards = a.backwards
	} else if a.hasSent {
		s.Span = a.lastSent - a.firstSent
	}
	if a.hasSent {
		s.FirstSent, s.LastSent = a.firstSent, a.lastSent
	}
	s.HasSeq = a.hasSeq
	if a.hasSeq {
		s.FirstSeq, s.LastSeq = a.minSeq, a.maxSeq
		s.Expected = a.maxSeq - a.minSeq + 1
		s.Lost = s.Expected - a.distinct - a.alsoReceived()
		if s.Expected > 0 {
			s.LossRate = float64(s.Lost) / float64(s.Expected)
		}
		s.LossBursts, s.LongestBurst = a.lossRuns()
		s.Duplicates, s.Reordered = a.dups, a.reordered
	}
	s.HasSent = a.hasSent
	if a.hasSent {
		s.SendInterval = a.si.dist()
		s.SenderJitter = s.SendInterval.SD
	}
	if a.clock.len() >= 2 {
		var alpha, beta float64
		if c := &a.clock; c.big {
			beta = c.cxy / c.cxx
			alpha = c.my - beta*c.mx
		} else {
			alpha, beta = stat.LinearRegression(c.x, c.y, nil, false)
		}
		if !math.IsNaN(alpha) && !math.IsNaN(beta) {
			s.HasClock = true
			s.ClockOffset = a.clockBase + dur(alpha)
			s.DriftPPM = beta / 1e3
		}
	}
	for _, sr := range []*series{&a.stepS, &a.stepA, &a.si, &a.ia} {
		if sr.len() > 0 {
			s.Interval = sr.robustMean()
			break
		}
	}
	return s
}

// Summarize returns the statistics of one stream given in arrival order.
func Summarize(recs []Record) Stats {
	var a Accumulator
	for _, r := range recs {
		a.Add(r)
	}
	return a.Stats()
}

// SummarizeReader reads r to the end in one pass and returns one Stats per
// sender, ordered by CompareSenders. Records are taken in file order, which
// should be arrival order (as in LIP6 reception logs).
func SummarizeReader(r *Reader) ([]Stats, error) {
	accs := make(map[string]*Accumulator)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		a := accs[rec.Sender]
		if a == nil {
			a = new(Accumulator)
			accs[rec.Sender] = a
		}
		a.Add(rec)
	}
	out := make([]Stats, 0, len(accs))
	for _, a := range accs {
		out = append(out, a.Stats())
	}
	slices.SortFunc(out, func(x, y Stats) int { return CompareSenders(x.Sender, y.Sender) })
	return out, nil
}
