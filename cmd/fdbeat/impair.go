package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fdkit/fdkit/trace"
	"gonum.org/v1/gonum/stat/distuv"
)

// delayModel draws the delay added to each heartbeat on the sender's own
// sending path (user-space stand-in for netem's delay and jitter).
type delayModel struct {
	dist         string
	mean, jitter time.Duration
	draw         func() float64 // nanoseconds, before clamping at 0
}

// Delay distributions accepted by --delay-dist.
var delayDists = []string{"constant", "normal", "uniform", "exponential"}

// newDelay builds a delay model: constant (mean), normal (mean, standard
// deviation jitter, as netem's "delay 80ms 60ms distribution normal"),
// uniform (mean ± jitter) or exponential (mean). Draws below 0 become 0.
func newDelay(dist string, mean, jitter time.Duration, rng *rand.Rand) (*delayModel, error) {
	if mean < 0 || jitter < 0 {
		return nil, fmt.Errorf("delay %v and jitter %v must not be negative", mean, jitter)
	}
	d := &delayModel{dist: dist, mean: mean, jitter: jitter}
	switch dist {
	case "constant", "":
		d.dist = "constant"
		d.draw = func() float64 { return float64(mean) }
	case "normal":
		n := distuv.Normal{Mu: float64(mean), Sigma: float64(jitter), Src: rng}
		if jitter == 0 {
			d.draw = func() float64 { return float64(mean) }
		} else {
			d.draw = n.Rand
		}
	case "uniform":
		d.draw = func() float64 { return float64(mean-jitter) + rng.Float64()*float64(2*jitter) }
	case "exponential":
		if mean == 0 {
			return nil, fmt.Errorf("exponential delay needs a positive --delay")
		}
		e := distuv.Exponential{Rate: 1 / float64(mean), Src: rng}
		d.draw = e.Rand
	default:
		return nil, fmt.Errorf("unknown delay distribution %q (want one of %s)", dist, strings.Join(delayDists, ", "))
	}
	return d, nil
}

// next returns the next delay (≥ 0).
func (d *delayModel) next() time.Duration {
	x := d.draw()
	if x <= 0 {
		return 0
	}
	return time.Duration(x)
}

// lossModel decides which heartbeats the sender drops. With burst 0 losses
// are independent (Bernoulli, netem "loss 15%"); with burst b ≥ 1 it is the
// two-state Gilbert model (Gilbert–Elliott with loss probability 1 in the bad
// state and 0 in the good one): bad → good with probability r = 1/b (mean
// burst length b heartbeats), good → bad with p = rate·r/(1 − rate), so that
// the long-run loss rate is rate (parameters from trace.GilbertElliott, as
// the trace generator uses them).
type lossModel struct {
	rate, p, r float64
	bursty     bool
	bad        bool
	rng        *rand.Rand
}

func newLoss(rate, burst float64, rng *rand.Rand) (*lossModel, error) {
	if !(rate >= 0 && rate < 1) {
		return nil, fmt.Errorf("loss rate %v must be in [0, 1)", rate)
	}
	if burst != 0 && !(burst >= 1) {
		return nil, fmt.Errorf("mean loss burst %v must be 0 (independent losses) or at least 1", burst)
	}
	l := &lossModel{rate: rate, rng: rng, bursty: burst >= 1}
	if l.bursty {
		ge := trace.GilbertElliott(rate, burst)
		l.p, l.r = ge.GoodToBad, ge.BadToGood
		if l.p > 1 {
			return nil, fmt.Errorf("loss rate %v with mean burst %v is impossible (needs good→bad probability %v > 1)", rate, burst, l.p)
		}
	}
	return l, nil
}

// lost reports whether the next heartbeat is dropped.
func (l *lossModel) lost() bool {
	if l.rate == 0 {
		return false
	}
	if !l.bursty {
		return l.rng.Float64() < l.rate
	}
	if l.bad {
		if l.rng.Float64() < l.r {
			l.bad = false
		}
	} else if l.rng.Float64() < l.p {
		l.bad = true
	}
	return l.bad
}

// pause stops the sender for Dur starting At after its start, like SIGSTOP
// then SIGCONT: no heartbeat is sent (nor numbered) during it, and one is sent
// at once when it ends.
type pause struct {
	At, Dur time.Duration
}

// parsePauses parses "AT:DUR[,AT:DUR...]" (Go durations), for example
// "20s:600ms,40s:600ms"; pauses must not overlap.
func parsePauses(s string) ([]pause, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ps []pause
	for i, f := range strings.Split(s, ",") {
		at, dur, ok := strings.Cut(strings.TrimSpace(f), ":")
		if !ok {
			return nil, fmt.Errorf("pause %d %q: want AT:DURATION, for example 20s:600ms", i+1, f)
		}
		a, err := time.ParseDuration(at)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("pause %d %q: start: want a non-negative Go duration", i+1, f)
		}
		d, err := time.ParseDuration(dur)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("pause %d %q: duration: want a positive Go duration", i+1, f)
		}
		ps = append(ps, pause{a, d})
	}
	slices.SortFunc(ps, func(x, y pause) int { return int(x.At - y.At) })
	for i := 1; i < len(ps); i++ {
		if ps[i].At < ps[i-1].At+ps[i-1].Dur {
			return nil, fmt.Errorf("pauses at %v and %v overlap", ps[i-1].At, ps[i].At)
		}
	}
	return ps, nil
}

// schedule gives the send instants (offsets from the start) of a sender with
// period interval and the given pauses.
type schedule struct {
	interval time.Duration
	pauses   []pause
	k        int64
}

// skipTo moves the schedule to the first tick after now (a sender that
// stalled until now).
func (s *schedule) skipTo(now time.Duration) {
	s.k = max(s.k, int64(now/s.interval)+1)
}

// next returns the next send instant and whether it ends a pause.
func (s *schedule) next() (time.Duration, bool) {
	at := time.Duration(s.k) * s.interval
	resumed := false
	// Pauses are sorted and do not overlap, but one may start where the
	// previous one ends: the resume instant is then inside it.
	for _, p := range s.pauses {
		if at >= p.At && at < p.At+p.Dur {
			at, resumed = p.At+p.Dur, true
		}
	}
	if resumed {
		s.k = int64(at/s.interval) + 1
		return at, true
	}
	s.k++
	return at, false
}
