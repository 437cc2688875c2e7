package kappa

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
)

// The differential test of the crossings: on random histories, at every
// state and for thresholds chosen to be awkward for the bands, the
// freshness point of Observe and of a Tracker (alone and among Trackers)
// is T_last + ElapsedFor(K), and wherever the bands decide (which says
// that Level's predicate is false before the crossing and true after it
// at every instant), the crossing is also the one a plain bisection of the
// predicate over the whole range [0, emax] finds, with no guess, band or
// local search.

// diffHistory describes one random stream of heartbeats and its detector.
type diffHistory struct {
	seed   uint64
	delta  time.Duration  // Δ, ≥ 1 ns
	minStd *time.Duration // nil: the default Δ/100
	window int
	jitter float64 // the spread of the arrivals, in units of Δ
	heavy  bool    // lognormal delays (a skewed spread) instead of normal
	loss   float64 // the probability that a heartbeat is lost
	pause  float64 // the probability of a sender pause before a heartbeat
	start  time.Duration
	n      int     // heartbeats sent
	k      float64 // the detector's own threshold
}

// diffThresholds are thresholds awkward for the bands: half-integers (the
// crossing on EA_{ℓ+1} + k·Δ), integers (the symmetric test, or κ's
// plateau), K near 0, K just inside and outside the reach of each tail cut
// (r within E + B of 0 or 1), and K about 2^20, where the bands stop.
func diffThresholds() []float64 {
	ks := []float64{0.5, 1, 2, 2.5, 3, 4, 7.5, 16, 0.3, 11.3, 4.9999, 1e-300, 1e-12, 2.2e-8,
		0x1p20 - 0.5, 0x1p20, 0x1p20 + 0.5, 0x1p20 - 1, 1e6 + 0.5}
	for _, z := range bandZ {
		for _, k := range []float64{0, 2, 9} {
			r := sumErr(5, k+1) + 2.01*0.5*math.Erfc(z/math.Sqrt2) + 0x1p-48
			ks = append(ks, k+r*(1-1e-6), k+r*(1+1e-6), k+1-r*(1-1e-6), k+1-r*(1+1e-6))
		}
	}
	return ks
}

// diffStats counts what a differential run checked.
type diffStats struct {
	states, crossings   int // states, (state, threshold) pairs with κ(T_last) < K
	banded, bandInteger int // crossings the bands decided (the symmetric test among them)
	plain               int // crossings where the plain bisection differs from ElapsedFor (never banded)
	plainCase           string
}

// plainElapsed returns the crossing of level by a plain bisection of
// Level's predicate over [0, emax] (ElapsedFor's range), with no guess:
// reached(0) false (κ(T_last) < level), reached(emax) true, the second
// instant of the adjacent pair it ends with.
func plainElapsed(d *Detector, level float64) (time.Duration, bool) {
	if level <= 0 || d.kappaLast() >= level {
		return 0, true
	}
	emax := time.Duration(math.MaxInt64)
	if d.last > 0 {
		emax -= d.last
	}
	reached := func(e time.Duration) bool { return d.kappa(d.last+e) >= level }
	if !reached(emax) {
		return math.MaxInt64, false
	}
	lo, hi := time.Duration(0), emax
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if reached(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// runDiff replays h, checking every state for the detector's threshold and
// ks (see above), and returns what it checked.
func runDiff(t *testing.T, h diffHistory, ks []float64) diffStats {
	t.Helper()
	d, err := New(Config{Estimator: chen.EstimatorConfig{Interval: h.delta, WindowSize: h.window}, Threshold: h.k, MinStdDev: h.minStd, MinSamples: new(0)})
	if err != nil {
		t.Fatalf("%+v: %v", h, err)
	}
	all, ok := d.TrackAll(ks)
	if !ok {
		t.Fatalf("%v: not thresholds", ks)
	}
	trs := make([]*Tracker, len(ks))
	own := make([]bands, len(ks)) // bandCrossing's own, as a Tracker keeps them
	for i, k := range ks {
		var ok bool
		if trs[i], ok = d.Track(k); !ok {
			t.Fatalf("K = %v: not a threshold", k)
		}
	}
	var st diffStats
	rng := rand.New(rand.NewPCG(h.seed, h.seed^0x9e3779b97f4a7c15))
	delta := float64(h.delta)
	var shift float64 // the pauses so far, ns
	seq := uint64(0)
	gen := d.gen
	for n := 0; n < h.n; n++ {
		seq++
		if rng.Float64() < h.pause {
			shift += float64(1+rng.IntN(20)) * delta * rng.Float64() * 3
		}
		if rng.Float64() < h.loss {
			continue
		}
		if rng.IntN(500) == 0 {
			seq = 1 // a restart
		}
		spread := h.jitter * delta * rng.NormFloat64()
		if h.heavy {
			spread = h.jitter * delta * math.Exp(rng.NormFloat64())
		}
		a := float64(h.start) + float64(n)*delta + shift + spread
		if !(a > -math.MaxInt64+1e4 && a < math.MaxInt64-1e4) {
			break // the stream leaves the time.Duration range
		}
		at := h.start + time.Duration(n)*h.delta + time.Duration(shift+spread)
		if float64(at)-a > 1e6 || a-float64(at) > 1e6 {
			break // the products overflowed
		}
		d.Observe(detector.Heartbeat{Seq: seq, HasSeq: true, Arrival: at})
		if d.gen == gen {
			continue // not a new state
		}
		gen = d.gen
		st.states++
		checkDiffState(t, h, d, ks, trs, all, own, &st)
	}
	return st
}

// checkDiffState checks one state (see runDiff).
func checkDiffState(t *testing.T, h diffHistory, d *Detector, ks []float64, trs []*Tracker, all *Trackers, own []bands, st *diffStats) {
	t.Helper()
	fail := func(k float64, format string, args ...any) {
		t.Helper()
		t.Fatalf("%+v\nstate %d: T_last %d, EA %d, s = %v (σ/Δ), K = %v: "+format,
			append([]any{h, d.gen, int64(d.last), int64(d.ea), d.s, k}, args...)...)
	}
	emax := time.Duration(math.MaxInt64)
	if d.last > 0 {
		emax -= d.last
	}
	if e, _ := d.ElapsedFor(d.threshold); d.ownTau() != detector.AddSat(d.last, e) {
		fail(d.threshold, "Observe's τ %d, ElapsedFor's %d", int64(d.ownTau()), int64(detector.AddSat(d.last, e)))
	}
	taus := make([]time.Duration, len(ks))
	all.FreshnessPoints(taus)
	for i, k := range ks {
		want, _ := d.FreshnessPointAt(k)
		got, _ := trs[i].FreshnessPoint()
		if got != want || taus[i] != want {
			fail(k, "Tracker's τ %d, Trackers' %d, FreshnessPointAt's %d", int64(got), int64(taus[i]), int64(want))
		}
		if d.kappaLast() >= k {
			continue
		}
		st.crossings++
		e, _ := d.ElapsedFor(k)
		p, _ := plainElapsed(d, k)
		b, banded := d.bandCrossing(&own[i], k)
		if banded {
			st.banded++
			if own[i].integer {
				st.bandInteger++
			}
			if b != e || b != p {
				fail(k, "bands %d, ElapsedFor %d, plain bisection %d", b, e, p)
			}
			// The predicate around the crossing, instant by instant.
			for x := max(b-4, 0); x <= min(b+4, emax); x++ {
				if got := d.kappa(d.last+x) >= k; got != (x >= b) {
					fail(k, "bands %d, but κ(T_last + %d) = %v", b, x, d.kappa(d.last+x))
				}
			}
		} else if p != e {
			st.plain++ // κ's plateau at an integer K: the predicate is not monotone there
			if st.plainCase == "" {
				st.plainCase = fmt.Sprintf("Δ %d ns, s = %v, K = %v: ElapsedFor %d, plain bisection %d, κ there %v and %v",
					int64(h.delta), d.s, k, e, p, d.kappa(d.last+e), d.kappa(d.last+p))
			}
		}
	}
}

// minStdOf returns σ_min by mode: the default (nil), Δ/4 exactly, 1 ns
// above or below it, 0 (the 1 ns guard), or other.
func minStdOf(mode int, delta, other time.Duration) *time.Duration {
	switch mode {
	case 1:
		return new(delta / 4)
	case 2:
		return new(delta/4 + 1)
	case 3:
		return new(max(delta/4-1, 0))
	case 4:
		return new(time.Duration(0))
	case 5:
		return new(other)
	}
	return nil
}

// randomHistory draws a history across scales: Δ from 1 ns to 2^52 ns, σ
// from the 1 ns guard to several Δ (exactly Δ/4 and just above it among
// them), streams near both ends of the time.Duration range.
func randomHistory(rng *rand.Rand, n int) diffHistory {
	h := diffHistory{seed: rng.Uint64(), window: 2 + rng.IntN(60), n: n}
	switch rng.IntN(6) {
	case 0:
		h.delta = time.Duration(1 + rng.IntN(64)) // a few ns: the band's reach spans periods
	case 1:
		h.delta = time.Duration(1) << (40 + rng.IntN(13)) // huge Δ, up to 2^52 ns
		h.delta += time.Duration(rng.IntN(3) - 1)
	default:
		h.delta = time.Duration(math.Exp(rng.Float64()*math.Log(1e12))) + 1
	}
	h.minStd = minStdOf(rng.IntN(8), h.delta, time.Duration(float64(h.delta)*math.Exp(-rng.Float64()*15)))
	switch rng.IntN(4) {
	case 0:
		h.jitter = 0
	case 1:
		h.jitter = math.Exp(-rng.Float64() * 20) // tiny
	default:
		h.jitter = rng.Float64() * 0.4 // around Δ/4
	}
	h.heavy = rng.IntN(3) == 0
	if rng.IntN(2) == 0 {
		h.loss = rng.Float64() * 0.5
	}
	if rng.IntN(2) == 0 {
		h.pause = rng.Float64() * 0.05
	}
	span := float64(n+100) * float64(h.delta) * 4
	switch rng.IntN(5) {
	case 0:
		h.start = time.Duration(max(math.MaxInt64-span, 0))
	case 1:
		h.start = time.Duration(min(-math.MaxInt64+span, 0)) + time.Duration(rng.IntN(1000))
	case 2:
		h.start = time.Duration(rng.Int64N(1 << 55))
	}
	ks := diffThresholds()
	h.k = ks[rng.IntN(len(ks))]
	if rng.IntN(3) == 0 {
		h.k = math.Exp(rng.Float64()*math.Log(1e4)) / 100
		if rng.IntN(2) == 0 {
			h.k = math.Round(h.k*2) / 2
		}
	}
	if !(h.k > 0) {
		h.k = DefaultThreshold
	}
	return h
}

// Random histories; with -short a handful, for CI.
func TestCrossingsDifferential(t *testing.T) {
	histories, n := 400, 300
	if testing.Short() {
		histories, n = 6, 120
	}
	rng := rand.New(rand.NewPCG(0xbad, 0xc0ffee))
	ks := diffThresholds()
	var total diffStats
	for range histories {
		st := runDiff(t, randomHistory(rng, n), ks)
		total.states += st.states
		total.crossings += st.crossings
		total.banded += st.banded
		total.bandInteger += st.bandInteger
		total.plain += st.plain
		total.plainCase = cmp.Or(total.plainCase, st.plainCase)
	}
	t.Logf("%d histories, %d states, %d crossings, %d decided by the bands (%d by the symmetric test), %d on a plateau",
		histories, total.states, total.crossings, total.banded, total.bandInteger, total.plain)
	if total.plainCase != "" {
		t.Logf("the first on a plateau: %s", total.plainCase)
	}
	if total.banded < total.crossings/10 {
		t.Errorf("the bands decided %d of %d crossings: the test hardly exercises them", total.banded, total.crossings)
	}
}

// FuzzCrossings runs the differential check on a history shaped by the
// fuzzer: its seed, Δ, σ_min (by mode), spread, start, threshold and
// stream shape (window size; lognormal delays, losses and pauses by bit).
// Its corpus in testdata holds the edges: Δ of a few ns and about 2^51 ns,
// σ_min at Δ/4 and 1 ns either side, streams near both ends of the
// time.Duration range, K at a tail cut's limit and near 2^20.
func FuzzCrossings(f *testing.F) {
	f.Add(uint64(1), int64(100e6), uint8(0), int64(0), 0.05, int64(0), 2.5, uint8(0))
	f.Add(uint64(2), int64(10e6), uint8(1), int64(0), 0.0, int64(0), 1.5, uint8(3)) // σ = Δ/4 exactly
	f.Add(uint64(3), int64(10e6), uint8(2), int64(0), 0.0, int64(0), 0.5, uint8(3)) // σ = Δ/4 + 1 ns
	f.Add(uint64(4), int64(4), uint8(1), int64(0), 0.0, int64(0), 3.0, uint8(0))    // Δ = 4 ns
	f.Add(uint64(5), int64(1)<<50, uint8(0), int64(0), 0.2, int64(-1)<<62, 2.0, uint8(1))
	f.Add(uint64(6), int64(1e6), uint8(5), int64(1), 0.001, int64(math.MaxInt64-1e12), 16.0, uint8(2))
	f.Add(uint64(7), int64(1e9), uint8(0), int64(0), 0.1, int64(0), 1e-12, uint8(4))
	f.Add(uint64(8), int64(1e8), uint8(6), int64(0), 0.3, int64(0), 0x1p20+0.5, uint8(5))
	f.Fuzz(func(t *testing.T, seed uint64, delta int64, mode uint8, minStd int64, jitter float64, start int64, k float64, shape uint8) {
		h := diffHistory{seed: seed, window: 2 + int(shape%32), k: k, start: time.Duration(start), n: 120}
		if testing.Short() {
			h.n = 60
		}
		if delta == math.MinInt64 {
			delta = 0
		}
		h.delta = time.Duration(1 + min(max(delta, -delta), 1<<52))
		h.minStd = minStdOf(int(mode%8), h.delta, time.Duration(min(max(minStd, 0), 1<<52)))
		if !(jitter >= 0 && jitter <= 8) {
			jitter = 0
		}
		h.jitter, h.heavy = jitter, shape&32 != 0
		if shape&64 != 0 {
			h.loss = 0.3
		}
		if shape&128 != 0 {
			h.pause = 0.03
		}
		if !(h.k > 0) || math.IsInf(h.k, 1) {
			h.k = DefaultThreshold
		}
		ks := diffThresholds()
		for _, k := range []float64{h.k, math.Floor(h.k), math.Floor(h.k) + 0.5, math.Nextafter(h.k, 0), math.Nextafter(h.k, math.Inf(1))} {
			if k > 0 && !math.IsInf(k, 1) {
				ks = append(ks, k)
			}
		}
		runDiff(t, h, ks)
	})
}
