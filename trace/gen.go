package trace

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// DelayDist names the distribution of the random part of the one-way delay.
type DelayDist int

// Delay distributions.
const (
	// DelayConstant: the random part is exactly Mean.
	DelayConstant DelayDist = iota
	// DelayNormal: normal with mean Mean and standard deviation SD.
	DelayNormal
	// DelayLogNormal: log-normal with mean Mean and standard deviation SD
	// (the parameters of the underlying normal are derived from them).
	DelayLogNormal
	// DelayPareto: Pareto type I with shape Alpha (> 1) and scale chosen so
	// that the mean is Mean: x_m = Mean·(Alpha−1)/Alpha.
	DelayPareto
)

var delayNames = [...]string{"constant", "normal", "lognormal", "pareto"}

// String returns the name ParseDelayDist accepts.
func (d DelayDist) String() string {
	if d >= 0 && int(d) < len(delayNames) {
		return delayNames[d]
	}
	return fmt.Sprintf("DelayDist(%d)", int(d))
}

// ParseDelayDist parses constant, normal, lognormal or pareto.
func ParseDelayDist(s string) (DelayDist, error) {
	for i, n := range delayNames {
		if strings.EqualFold(s, n) {
			return DelayDist(i), nil
		}
	}
	return 0, fmt.Errorf("trace: unknown delay distribution %q (want %s)", s, strings.Join(delayNames[:], ", "))
}

// Delay is the one-way network delay model: Base plus a random part drawn
// from Dist, the total truncated at zero (negative draws are redrawn, so a
// normal delay has the truncated normal's mean; after 1000 negative draws in
// a row the delay is 0). Each draw is capped at math.MaxInt64/4 (about 73
// years); Base, Mean or SD above that is an error.
type Delay struct {
	Dist  DelayDist
	Base  time.Duration
	Mean  time.Duration
	SD    time.Duration
	Alpha float64
}

// LossModel selects how heartbeats are lost in the network.
type LossModel int

// Loss models.
const (
	LossNone LossModel = iota
	// LossBernoulli loses each heartbeat independently with probability P.
	LossBernoulli
	// LossGilbertElliott is a two-state Markov chain stepped once per sent
	// heartbeat: from Good it moves to Bad with probability GoodToBad, from
	// Bad to Good with probability BadToGood; a heartbeat is lost with
	// probability LossGood or LossBad according to the state it meets. The
	// chain starts in Good. With LossGood 0 and LossBad 1, loss bursts have a
	// geometric length of mean 1/BadToGood and the long-run loss rate is
	// GoodToBad/(GoodToBad+BadToGood).
	LossGilbertElliott
)

// Loss is the network loss model.
type Loss struct {
	Model                LossModel
	P                    float64
	GoodToBad, BadToGood float64
	LossGood, LossBad    float64
}

// GilbertElliott returns a Gilbert–Elliott loss model with long-run loss rate
// rate (0 ≤ rate < 1) in bursts of geometric length with mean meanBurst
// heartbeats (≥ 1): LossGood 0, LossBad 1, BadToGood 1/meanBurst,
// GoodToBad rate/(meanBurst·(1−rate)).
func GilbertElliott(rate, meanBurst float64) Loss {
	return Loss{
		Model:     LossGilbertElliott,
		GoodToBad: rate / (meanBurst * (1 - rate)),
		BadToGood: 1 / meanBurst,
		LossBad:   1,
	}
}

// Period is the stretch [At, At+Length) of the sender's time.
type Period struct {
	At, Length time.Duration
}

// GenConfig describes a synthetic heartbeat stream. Times (At, CrashAt,
// Duration) are on the sender's clock measured from its first scheduled
// heartbeat. The zero value means the defaults noted on each field.
type GenConfig struct {
	// Sender is the records' sender id. Default "p".
	Sender string
	// Interval is the nominal heartbeat interval Δ: heartbeat k is scheduled
	// at k·Δ. Default 100 ms.
	Interval time.Duration
	// Duration: heartbeats are scheduled in [0, Duration). Default 1 min.
	Duration time.Duration
	// Jitter is the standard deviation of the sender's scheduling error: the
	// k-th send happens at k·Δ + e_k, e_k normal with mean 0 and this
	// standard deviation, truncated to (−Δ/2, Δ/2) so sends stay ordered.
	// The s.d. of send intervals is then about √2·Jitter. At most Interval
	// (an error otherwise). Default 0.
	Jitter time.Duration
	// Delay is the one-way delay model. Default: constant 0.
	Delay Delay
	// Loss is the loss model. Default: no loss.
	Loss Loss
	// Outages are periods of the sender's time during which every sent
	// heartbeat is lost (a network partition), in addition to Loss.
	Outages []Period
	// Pauses are periods during which the sender is stopped (a GC pause,
	// SIGSTOP): heartbeats scheduled inside are not sent; when the sender
	// resumes at At+Length it sends one heartbeat at once (as a Go ticker
	// does) and then follows the schedule again. Sequence numbers count sent
	// heartbeats, so a pause leaves no sequence gap. Pauses must not overlap.
	Pauses []Period
	// CrashAt, when positive, is the crash instant: nothing is sent at or
	// after it. Default 0: no crash.
	CrashAt time.Duration
	// SenderStart is the sender clock's reading at instant 0 (Record.Sent =
	// SenderStart + send instant). Default 0.
	SenderStart time.Duration
	// ReceiverStart is the receiver clock's reading at instant 0, and
	// DriftPPM how much faster it runs (parts per million): Record.Arrival =
	// ReceiverStart + a + a·DriftPPM·1e−6 for a true arrival instant a.
	ReceiverStart time.Duration
	DriftPPM      float64
}

// Defaults and limits of GenConfig.
const (
	// MaxGenHeartbeats bounds Duration/Interval (a trace of this many
	// records is about 4 GB of text; Generate holds its output in memory,
	// 64 bytes per record, NewGenerator does not).
	MaxGenHeartbeats = 100_000_000

	DefaultGenSender   = "p"
	DefaultGenInterval = 100 * time.Millisecond
	DefaultGenDuration = time.Minute
)

// withDefaults fills in defaults and validates, reporting every problem
// found, not only the first.
func (c GenConfig) withDefaults() (GenConfig, error) {
	c.Sender = cmp.Or(c.Sender, DefaultGenSender)
	c.Interval = cmp.Or(c.Interval, DefaultGenInterval)
	c.Duration = cmp.Or(c.Duration, DefaultGenDuration)
	c.Pauses = slices.Clone(c.Pauses)
	slices.SortFunc(c.Pauses, func(a, b Period) int { return cmp.Compare(a.At, b.At) })
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("trace: generator: "+format, a...)) }
	c.checkSchedule(bad)
	c.Delay.check(bad)
	c.Loss.check(bad)
	c.checkWindows(bad)
	// The last heartbeats' instants must fit in a time.Duration (about 292
	// years): a stream that overflows only near its end was half yielded
	// (and fdgen half written) before the error.
	if last, ok := lastInstants(c); !ok {
		bad("%s overflows time.Duration: the last heartbeats' instants must fit", last)
	}
	return c, errors.Join(errs...)
}

// checkSchedule checks the send schedule: interval, duration, jitter,
// crash time and drift.
func (c GenConfig) checkSchedule(bad func(string, ...any)) {
	if c.Interval < 0 {
		bad("interval %v is negative", c.Interval)
	}
	if c.Duration < 0 {
		bad("duration %v is negative", c.Duration)
	}
	if c.Interval > 0 && c.Duration/c.Interval > MaxGenHeartbeats {
		bad("duration %v at interval %v schedules more than %d heartbeats", c.Duration, c.Interval, MaxGenHeartbeats)
	}
	if c.Jitter < 0 {
		bad("jitter %v is negative", c.Jitter)
	}
	if c.Interval > 0 && c.Jitter > c.Interval {
		// Truncated to ±Δ/2, a larger s.d. is nearly uniform, and beyond
		// about 100Δ the thousand draws allowed for one send all fall
		// outside: every send would come out on time, without a word.
		bad("jitter %v is larger than the interval %v: sends are truncated to ±Δ/2 to stay ordered, so a larger s.d. cannot be honoured", c.Jitter, c.Interval)
	}
	if c.CrashAt < 0 {
		bad("crash time %v is negative", c.CrashAt)
	}
	if math.IsNaN(c.DriftPPM) || math.Abs(c.DriftPPM) >= 1e6 {
		bad("drift %v ppm out of range", c.DriftPPM)
	}
}

// check checks a delay model's parameters against its distribution.
func (d Delay) check(bad func(string, ...any)) {
	if d.Mean < 0 || d.SD < 0 {
		bad("delay mean %v and s.d. %v must not be negative", d.Mean, d.SD)
	}
	if d.Base > maxDelay || d.Mean > maxDelay || d.SD > maxDelay {
		bad("delay base %v, mean %v and s.d. %v must each be at most %v", d.Base, d.Mean, d.SD, time.Duration(maxDelay))
	}
	switch d.Dist {
	case DelayConstant, DelayNormal:
	case DelayLogNormal:
		if d.Mean == 0 && d.SD > 0 {
			bad("log-normal delay needs a positive mean")
		}
	case DelayPareto:
		if !(d.Alpha > 1) {
			bad("Pareto delay needs shape Alpha > 1 (so the mean exists), got %v", d.Alpha)
		}
	default:
		bad("unknown delay distribution %v", d.Dist)
	}
}

// check checks that a loss model's probabilities lie in [0, 1].
func (l Loss) check(bad func(string, ...any)) {
	p01 := func(name string, p float64) {
		if !(p >= 0 && p <= 1) {
			bad("%s probability %v not in [0, 1]", name, p)
		}
	}
	switch l.Model {
	case LossNone:
	case LossBernoulli:
		p01("loss", l.P)
	case LossGilbertElliott:
		p01("Gilbert-Elliott good-to-bad", l.GoodToBad)
		p01("Gilbert-Elliott bad-to-good", l.BadToGood)
		p01("Gilbert-Elliott loss-in-good", l.LossGood)
		p01("Gilbert-Elliott loss-in-bad", l.LossBad)
	default:
		bad("unknown loss model %d", l.Model)
	}
}

// checkWindows checks outages and pauses (Pauses sorted by start): each
// within the time.Duration range, and no two pauses overlapping.
func (c GenConfig) checkWindows(bad func(string, ...any)) {
	for _, w := range append(slices.Clone(c.Outages), c.Pauses...) {
		if w.At < 0 || w.Length <= 0 || w.Length > math.MaxInt64-w.At {
			bad("period at %v of length %v: want At ≥ 0, Length > 0 and At+Length within the time.Duration range (use CrashAt for a sender that never resumes)", w.At, w.Length)
		}
	}
	for i := 1; i < len(c.Pauses); i++ {
		if p := c.Pauses[i-1]; p.At+p.Length > c.Pauses[i].At {
			bad("pauses at %v and %v overlap", p.At, c.Pauses[i].At)
		}
	}
}

// NewRand returns the random source fdkit's generator uses for a seed: a
// PCG seeded with (seed, seed).
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

// Generate returns a synthetic stream for cfg, sorted by arrival time (stable;
// delays may reorder heartbeats), drawing every random number from rng (use
// NewRand(seed)), so that the same configuration and seed always give the
// same records. Records carry Sender, Seq (from 0, one per sent heartbeat),
// Sent and Arrival. Memory is O(records); NewGenerator yields the same
// records one at a time in bounded memory. An instant that does not fit in a
// time.Duration (a SenderStart, ReceiverStart or delay near its limits) is
// an error, never a wrapped value.
func Generate(cfg GenConfig, rng *rand.Rand) ([]Record, error) {
	g, err := NewGenerator(cfg, rng)
	if err != nil {
		return nil, err
	}
	g.SetMaxInFlight(0) // the whole stream is held anyway
	var recs []Record
	for {
		r, ok, err := g.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return recs, nil
		}
		recs = append(recs, r)
	}
}

// lastInstants says whether the send instant of a heartbeat scheduled
// just before the end (Duration, or CrashAt when sooner, plus the largest
// jitter Δ/2) and its arrival after the delay's base and mean, through the
// receiver's clock, fit in a time.Duration, and if not, what overflows.
// A drawn delay far above the mean can still overflow: Next reports it.
func lastInstants(c GenConfig) (string, bool) {
	end := c.Duration
	if c.CrashAt > 0 {
		end = min(end, c.CrashAt)
	}
	send := float64(end) + float64(c.Interval)/2
	if v := float64(c.SenderStart) + send; v >= math.MaxInt64 || v <= math.MinInt64 {
		return fmt.Sprintf("SenderStart %v + send instants up to %v", c.SenderStart, time.Duration(send)), false
	}
	delay := max(0, float64(c.Delay.Base)+float64(c.Delay.Mean))
	if v := float64(c.ReceiverStart) + (send+delay)*(1+c.DriftPPM*1e-6); v >= math.MaxInt64 || v <= math.MinInt64 {
		return fmt.Sprintf("ReceiverStart %v + (send instants up to %v + delay base and mean %v) × (1 + drift %v ppm)",
			c.ReceiverStart, time.Duration(send), time.Duration(delay), c.DriftPPM), false
	}
	return "", true
}

// addDuration returns a + b and whether the sum fits in a time.Duration.
func addDuration(a, b time.Duration) (time.Duration, bool) {
	sum := a + b
	return sum, (b >= 0) == (sum >= a)
}

// inPeriod reports whether t falls in one of ws, and which.
func inPeriod(ws []Period, t time.Duration) (int, bool) {
	for i, w := range ws {
		if t >= w.At && t < w.At+w.Length {
			return i, true
		}
	}
	return 0, false
}

// maxDelay caps one drawn delay (a heavy-tailed draw can be huge), so that
// send instant plus delay cannot overflow; Delay fields beyond it are errors.
const maxDelay = math.MaxInt64 / 4

// delaySampler returns a function drawing one-way delays from d with rng.
func delaySampler(d Delay, rng *rand.Rand) (func() time.Duration, error) {
	mean, sd := float64(d.Mean), float64(d.SD)
	var x func() float64
	switch d.Dist {
	case DelayConstant:
		x = func() float64 { return mean }
	case DelayNormal:
		n := distuv.Normal{Mu: mean, Sigma: sd, Src: rng}
		x = n.Rand
	case DelayLogNormal:
		if sd == 0 {
			x = func() float64 { return mean }
			break
		}
		s2 := math.Log1p(sd * sd / (mean * mean))
		n := distuv.LogNormal{Mu: math.Log(mean) - s2/2, Sigma: math.Sqrt(s2), Src: rng}
		x = n.Rand
	case DelayPareto:
		if mean == 0 {
			x = func() float64 { return 0 }
			break
		}
		p := distuv.Pareto{Xm: mean * (d.Alpha - 1) / d.Alpha, Alpha: d.Alpha, Src: rng}
		x = p.Rand
	default:
		return nil, fmt.Errorf("trace: generator: unknown delay distribution %v", d.Dist)
	}
	base := float64(d.Base)
	return func() time.Duration {
		for range 1000 {
			if v := base + x(); v >= 0 {
				return time.Duration(math.Round(min(v, maxDelay)))
			}
		}
		return 0
	}, nil
}
