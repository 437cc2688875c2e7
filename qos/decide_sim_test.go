package qos

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
)

// noisyTimeout is a test detector with a known TD–MR curve: τ_{k+1} =
// σ_k + Δ + c + ε_k, σ_k the send time of the newest heartbeat, c the
// swept margin and ε_k = ±s with equal probability, drawn from a hash of
// (key, k) so that two detectors with different keys have independent
// noise of the same law. On a stream with delays c₀ + Exp(m) and no loss,
// a heartbeat is late with probability p(c) = e^{−(c−c₀)/m}·cosh(s/m)
// (when c − s ≥ c₀), and the mean TD is Δ + c; so at a mistake
// probability p the mean TD is Δ + c₀ + m·ln(cosh(s/m)/p), and two
// detectors with noise s_A and s_B differ at equal MR by exactly
// m·(ln cosh(s_B/m) − ln cosh(s_A/m)).
type noisyTimeout struct {
	interval, c, s time.Duration
	key            uint64
	seq            uint64
	sent           time.Duration
	seen           bool
}

func (d *noisyTimeout) Observe(hb detector.Heartbeat) {
	if d.seen && hb.Seq <= d.seq {
		return
	}
	d.seq, d.sent, d.seen = hb.Seq, hb.Sent, true
}

func (d *noisyTimeout) noise() time.Duration {
	x := d.key ^ (d.seq * 0x9e3779b97f4a7c15)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	if x&1 == 0 {
		return -d.s
	}
	return d.s
}

func (d *noisyTimeout) LinearForm() (time.Duration, float64, bool) {
	return d.sent + d.interval + d.noise(), 1, d.seen
}

func (d *noisyTimeout) FreshnessPoint() (time.Duration, bool) {
	off, _, ok := d.LinearForm()
	return off + d.c, ok
}

func (d *noisyTimeout) WarmingUp() bool { return !d.seen }

func (d *noisyTimeout) Suspected(now time.Duration) bool {
	tau, ok := d.FreshnessPoint()
	return ok && now > tau
}

// noisyFamily sweeps noisyTimeout's margin c (ms) over [lo, hi].
func noisyFamily(name string, interval, s time.Duration, key uint64, lo, hi float64, n int) Family {
	vals, _ := Range(lo, hi, n, false)
	return Family{Name: name, Param: "c", Unit: "ms", Values: vals,
		New: func(v float64) (detector.Detector, error) {
			return &noisyTimeout{interval: interval, c: durMS(v), s: s, key: key}, nil
		},
		Linear: func(v float64) float64 { return float64(durMS(v)) },
	}
}

// simStream is a periodic stream of n heartbeats Δ apart with one-way
// delays c₀ + Exp(m), from seed.
func simStream(n int, interval, c0, m time.Duration, seed uint64) []detector.Heartbeat {
	rng := rand.New(rand.NewPCG(seed, 0x5111))
	hbs := make([]detector.Heartbeat, n)
	for i := range hbs {
		sent := time.Duration(i+1) * interval
		d := c0 + time.Duration(rng.ExpFloat64()*float64(m))
		hbs[i] = detector.Heartbeat{Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + d}
	}
	slices.SortStableFunc(hbs, func(a, b detector.Heartbeat) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return hbs
}

// simulation settings: Δ = 100 ms, delays 20 ms + Exp(10 ms), MR target
// 0.01/s (p = 0.001 per heartbeat, 36 expected mistakes an hour). The
// noise s_A = 5 ms gives a mean TD of 190.3 ms at the target; s_B =
// 17.26 ms one 5 % longer (9.5 ms).
const (
	simInterval = 100 * time.Millisecond
	simC0       = 20 * time.Millisecond
	simM        = 10 * time.Millisecond
	simMR       = 0.01
	simSA       = 5 * time.Millisecond
	simSB       = 17260 * time.Microsecond
)

// simTD is the true mean TD at mistake probability p of noise s.
func simTD(p float64, s time.Duration) float64 {
	m := float64(simM)
	return float64(simInterval+simC0) + m*math.Log(math.Cosh(float64(s)/m)/p)
}

// simRates runs seeds simulations of n heartbeats comparing noise sA with
// noise sB (independent keys) and returns the share of seeds in which the
// verdict called the difference significant, with equivalence eq.
func simRates(t *testing.T, seeds, n int, sA, sB time.Duration, eq float64) float64 {
	t.Helper()
	hits := 0
	for seed := range seeds {
		hbs := simStream(n, simInterval, simC0, simM, uint64(1000+seed))
		fams := []Family{
			noisyFamily("a", simInterval, sA, uint64(2*seed+1), 20, 200, 40),
			noisyFamily("b", simInterval, sB, uint64(2*seed+2), 20, 200, 40),
		}
		v, err := Decide(Stream{Name: "sim", Heartbeats: hbs}, fams, nil, Targets{MaxMRPerSecond: simMR}, DecideConfig{Equivalence: eq, Holdout: -1, Sweep: SweepConfig{Workers: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if v.Best < 0 || len(v.Rivals) != 1 {
			t.Fatalf("seed %d: %v", seed, v)
		}
		if v.Rivals[0].Significant {
			hits++
		}
		if testing.Verbose() && seed < 3 {
			fmt.Println(v.String())
		}
	}
	return float64(hits) / float64(seeds)
}

// TestDecideSimulation measures the verdict's error rates on simulated
// streams of one hour whose truth is known (noisyTimeout): two detectors
// of equal truth (the same noise law, independent noise) must be called
// different in at most 5 % of 200 seeds, even with the practical
// threshold off; a 5 % longer TD at equal MR must be found in at least
// 80 %. The rates and the command are in docs/experiments.md. It takes
// minutes and is skipped with -short (TestDecideEquivalence checks one
// seed of each case).
func TestDecideSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("200 seeds of two one-hour streams: run without -short")
	}
	seeds := 200
	n := int(time.Hour / simInterval)
	p := simMR * simInterval.Seconds()
	t.Logf("true mean TD at MR %g/s: A %.2f ms, B %.2f ms (+%.2f %%)", simMR, simTD(p, simSA)/1e6, simTD(p, simSB)/1e6, 100*(simTD(p, simSB)/simTD(p, simSA)-1))
	null := simRates(t, seeds, n, simSA, simSA, -1)
	power := simRates(t, seeds, n, simSA, simSB, 0)
	t.Logf("%d seeds: equal pair called different in %.1f %%, 5 %% difference found in %.1f %%", seeds, 100*null, 100*power)
	if null > 0.05 {
		t.Errorf("equal pair called different in %.1f %% of seeds, want ≤ 5 %%", 100*null)
	}
	if power < 0.80 {
		t.Errorf("5 %% TD difference found in %.1f %% of seeds, want ≥ 80 %%", 100*power)
	}
}
