package detectortest

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// scenario is one family of generated heartbeat streams.
type scenario struct {
	name string
	// clean: sequence numbers and arrivals strictly increase and the
	// sender never restarts.
	clean bool
	// unnumbered: the stream has heartbeats without sequence numbers
	// (skipped when Config.RequiresSeq).
	unnumbered bool
	gen        func(g *gen) []detector.Heartbeat
}

// gen builds one stream: a sender numbering from seq at the nominal
// interval, the monitor seeing arrivals at.
type gen struct {
	r     *rand.Rand
	delta time.Duration
	n     int
	seq   uint64
	at    time.Duration
	out   []detector.Heartbeat
}

// step advances the clock by about k intervals with jitter of a tenth of
// Δ, always forwards by at least 1 ns, saturating at math.MaxInt64.
func (g *gen) step(k int) {
	d := time.Duration(k)*g.delta + time.Duration(g.r.NormFloat64()*float64(g.delta)/10)
	g.at = detector.AddSat(g.at, max(d, 1))
}

func (g *gen) emit(seq uint64, hasSeq bool, at time.Duration) {
	g.out = append(g.out, detector.Heartbeat{Seq: seq, HasSeq: hasSeq, Arrival: at})
}

// next emits the next numbered heartbeat after k intervals.
func (g *gen) next(k int) {
	g.seq += uint64(k)
	g.step(k)
	g.emit(g.seq, true, g.at)
}

// reordered emits the next two numbered heartbeats swapped: the second
// arrives first.
func (g *gen) reordered() {
	g.step(1)
	a := g.at
	g.step(1)
	g.emit(g.seq+2, true, a)
	g.emit(g.seq+1, true, g.at)
	g.seq += 2
}

// awkward emits, with the given probability in percent, one of the awkward
// heartbeats the detectors document: duplicate, stale, reordered pair,
// arrival going backwards, unnumbered, sequence number 0, sender restart,
// huge forward jump of the sequence number.
func (g *gen) awkward(percent int, unnumbered bool) bool {
	if g.r.IntN(100) >= percent || len(g.out) == 0 {
		return false
	}
	last := g.out[len(g.out)-1]
	switch g.r.IntN(8) {
	case 0: // duplicate
		g.emit(last.Seq, last.HasSeq, detector.AddSat(last.Arrival, time.Duration(g.r.IntN(3))*time.Millisecond))
	case 1: // stale: an older number arriving now
		g.emit(g.seq-min(g.seq, uint64(1+g.r.IntN(5))), true, g.at)
	case 2:
		g.reordered()
	case 3: // the monitor's clock goes backwards
		g.seq++
		g.emit(g.seq, g.r.IntN(2) == 0 || !unnumbered, detector.AddSat(g.at, -time.Duration(g.r.Int64N(int64(2*g.delta)+1))))
	case 4: // without a sequence number
		g.step(1)
		g.emit(0, !unnumbered, g.at)
	case 5: // sequence number 0, again
		g.emit(0, true, g.at)
	case 6: // sender restart
		g.seq = uint64(g.r.IntN(2))
		g.step(1)
		g.emit(g.seq, true, g.at)
	case 7: // huge forward jump (a restart with a clock-based number)
		g.seq = math.MaxUint64 - uint64(g.r.IntN(10*g.n+10)) - uint64(g.n)
		g.step(1)
		g.emit(g.seq, true, g.at)
	}
	return true
}

var scenarios = []scenario{
	{name: "jitter", clean: true, gen: func(g *gen) []detector.Heartbeat {
		for len(g.out) < g.n {
			g.next(1)
		}
		return g.out
	}},
	{name: "losses-and-bursts", clean: true, gen: func(g *gen) []detector.Heartbeat {
		for len(g.out) < g.n {
			switch x := g.r.IntN(100); {
			case x < 3:
				g.next(5 + g.r.IntN(50))
			case x < 15:
				g.next(2)
			default:
				g.next(1)
			}
		}
		return g.out
	}},
	{name: "duplicates-stale-reordered", gen: func(g *gen) []detector.Heartbeat {
		for len(g.out) < g.n {
			if g.r.IntN(100) < 20 && len(g.out) > 0 {
				switch last := g.out[len(g.out)-1]; g.r.IntN(3) {
				case 0:
					g.emit(last.Seq, true, last.Arrival)
				case 1:
					g.emit(g.seq-min(g.seq, uint64(1+g.r.IntN(30))), true, g.at)
				case 2:
					g.reordered()
				}
				continue
			}
			g.next(1)
		}
		return g.out
	}},
	{name: "seq-zero-and-restarts", gen: func(g *gen) []detector.Heartbeat {
		g.seq = 0
		g.emit(0, true, g.at)
		g.emit(0, true, detector.AddSat(g.at, 1))
		for len(g.out) < g.n {
			switch x := g.r.IntN(100); {
			case x < 3: // restart at 0 after a long run
				g.seq = 0
				g.step(1)
				g.emit(0, true, g.at)
			case x < 6:
				g.emit(0, true, g.at)
			default:
				g.next(1)
			}
		}
		return g.out
	}},
	{name: "arrival-going-backwards", gen: func(g *gen) []detector.Heartbeat {
		for len(g.out) < g.n {
			if g.r.IntN(100) < 15 {
				g.seq++
				back := detector.AddSat(g.at, -time.Duration(g.r.Int64N(int64(3*g.delta)+1)))
				g.emit(g.seq, g.r.IntN(3) > 0, back)
				continue
			}
			g.next(1)
		}
		return g.out
	}},
	{name: "gaps-of-hours", clean: true, gen: func(g *gen) []detector.Heartbeat {
		for len(g.out) < g.n {
			if g.r.IntN(100) < 4 {
				g.seq++
				g.at = detector.AddSat(g.at, time.Duration(1+g.r.IntN(5))*time.Hour)
				g.emit(g.seq, true, g.at)
				continue
			}
			g.next(1)
		}
		return g.out
	}},
	{name: "without-sequence-numbers", unnumbered: true, gen: func(g *gen) []detector.Heartbeat {
		for len(g.out) < g.n {
			switch x := g.r.IntN(100); {
			case x < 5: // backwards
				g.emit(0, false, detector.AddSat(g.at, -time.Duration(g.r.Int64N(int64(g.delta)+1))))
			case x < 8: // loss
				g.step(2)
				g.emit(0, false, g.at)
			default:
				g.step(1)
				g.emit(0, false, g.at)
			}
		}
		return g.out
	}},
	{name: "near-max-duration", gen: func(g *gen) []detector.Heartbeat {
		g.at = math.MaxInt64 - time.Duration(g.n)*g.delta*11/10
		for len(g.out) < g.n {
			if !g.awkward(10, true) {
				g.next(1)
			}
		}
		g.emit(g.seq+1, true, math.MaxInt64)
		g.emit(g.seq+2, true, math.MaxInt64)
		return g.out
	}},
	{name: "near-min-duration-and-wide-jumps", gen: func(g *gen) []detector.Heartbeat {
		g.at = math.MinInt64 + 1
		for len(g.out) < g.n {
			switch x := g.r.IntN(100); {
			case x < 2: // a jump across the range
				g.seq++
				g.at = detector.AddSat(g.at, math.MaxInt64/2+time.Duration(g.r.Int64N(math.MaxInt64/4)))
				g.emit(g.seq, true, g.at)
			default:
				if !g.awkward(5, true) {
					g.next(1)
				}
			}
		}
		return g.out
	}},
	{name: "mixed", gen: func(g *gen) []detector.Heartbeat {
		for len(g.out) < g.n {
			switch x := g.r.IntN(100); {
			case x < 2:
				g.seq++
				g.at = detector.AddSat(g.at, time.Duration(1+g.r.IntN(3))*time.Hour)
				g.emit(g.seq, true, g.at)
			case x < 5:
				g.next(2 + g.r.IntN(20))
			default:
				if !g.awkward(20, true) {
					g.next(1)
				}
			}
		}
		return g.out
	}},
}

// stream generates scenario sc with the given seed.
func stream(sc scenario, seed uint64, o Config) []detector.Heartbeat {
	g := &gen{
		r:     rand.New(rand.NewPCG(seed, uint64(len(sc.name)))),
		delta: o.Interval,
		n:     o.Heartbeats,
	}
	g.seq = uint64(g.r.IntN(4))
	g.at = time.Duration(g.r.Int64N(int64(time.Second)))
	out := sc.gen(g)
	if o.RequiresSeq {
		for i := range out {
			out[i].HasSeq = true
		}
	}
	return out
}
