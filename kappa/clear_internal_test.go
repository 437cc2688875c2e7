package kappa

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/stretchr/testify/require"
)

// The clear test decides the crossings of a jittered stream with σ/Δ ≈
// 0.1 and 0.2 (Δ = 100 ms, as fdreplay's κ sweep), always ElapsedFor's
// instant, and declines the half-integer thresholds whose crossing falls
// exactly on an instant (K = k + 1/2 at EA_{ℓ+1} + k·Δ): there, without its
// margin, it would decide an instant next to the crossing where rounding
// leaves κ on the other side of K.
func TestClearMarginIsNeeded(t *testing.T) {
	ks := []float64{0.5, 0.7, 1.5, 2.2, 2.5, 3.9, 7.5, 11.3, 15.5}
	d, err := New(Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 200}, MinSamples: new(0)})
	require.NoError(t, err)
	ts, ok := d.TrackAll(ks)
	require.True(t, ok)
	rng := rand.New(rand.NewPCG(11, 12))
	var decided, wrongWithout, declined int
	for n := range 6000 {
		sd := 10e6 // σ/Δ ≈ 0.1, then 0.2: more terms of κ near an instant on the crossing
		if n >= 3000 {
			sd = 20e6
		}
		a := time.Duration(n)*100*time.Millisecond + time.Duration(30e6+sd*rng.NormFloat64())
		d.Observe(detector.Heartbeat{Seq: uint64(n + 1), HasSeq: true, Arrival: a})
		if !d.banded {
			continue
		}
		st := d.bandState()
		reach := d.k0max
		if d.k0ok {
			reach = d.k0
		}
		ts.regroup(st.invS)
		perWidth, fixed := clearMargin(&st, ts.kmax)
		for _, margin := range []float64{1, 0} {
			for _, r := range ts.grp.rows {
				k := ks[r.i]
				if !(k > reach) {
					continue
				}
				_, e, _, ok := ts.sb[r.i].clearTest(&st, margin*perWidth, margin*fixed)
				want, _ := d.FreshnessPointAt(k)
				switch {
				case !ok && margin > 0:
					declined++
				case !ok:
				case margin == 0:
					if d.last+time.Duration(e) != want {
						wrongWithout++
					}
				default:
					decided++
					require.Equal(t, want, d.last+time.Duration(e), "state %d, K = %v: the clear test's crossing", n, k)
				}
			}
		}
	}
	t.Logf("%d crossings decided, %d declined; without the margin %d wrong", decided, declined, wrongWithout)
	// Of the 12,000 crossings of the four thresholds off the half-integers
	// at σ/Δ ≈ 0.1 (at 0.2 the single-term bands do not apply).
	require.Greater(t, decided, 11000, "the clear test decides nearly every crossing off the instants")
	require.Positive(t, wrongWithout, "the margin matters: without it crossings on an instant come out wrong")
}

// phiLow is a lower bound on 0.999·φ(c_0) (what the symmetric test's
// proof needs), and not a loose one: above half of it, so that the band
// stays within about a factor two of the one e^{−c_0²/2} gives.
func TestPhiLowIsALowerBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cs := []float64{0, 1e-300, 0.5, 1, 2, 2.5, 5, 6.0225, 7, 10, 20, 37.5, 38, 1e3}
	for range 20000 {
		cs = append(cs, rng.Float64()*40)
	}
	for _, c0 := range cs {
		st := bandState{invS: 2 * c0}
		got := st.phiLow()
		want := 0.999 * math.Exp(-c0*c0/2) / math.Sqrt(2*math.Pi)
		require.LessOrEqual(t, got, want, "c_0 = %v", c0)
		if want > 0x1p-1000 {
			require.Greater(t, got, want/2.01, "c_0 = %v", c0)
		}
	}
}

// The crossing of an integer K = m falls on the instant EA_{ℓ+1} + (m −
// 1/2)·Δ when Δ is even, where κ is m in exact arithmetic and its float sum
// lands on either side of m: the crossing is that instant in some states
// and the next in others, so oneInstant's evaluation of κ there is needed.
// Trackers decide those crossings as FreshnessPointAt does, by the
// symmetric test in most states (not where σ/Δ dips to 0.08, which makes
// κ flat across 16 over a few hundred nanoseconds).
func TestOneInstantOnAnIntegerK(t *testing.T) {
	ks := []float64{0.5, 1, 2, 7.5, 16}
	d, err := New(Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 200}, MinSamples: new(0)})
	require.NoError(t, err)
	ts, ok := d.TrackAll(ks)
	require.True(t, ok)
	rng := rand.New(rand.NewPCG(21, 22))
	dst := make([]time.Duration, len(ks))
	var at, after, decided, states int
	for n := range 4000 {
		a := time.Duration(n)*100*time.Millisecond + time.Duration(30e6+10e6*rng.NormFloat64())
		d.Observe(detector.Heartbeat{Seq: uint64(n + 1), HasSeq: true, Arrival: a})
		if n < 200 || !d.banded {
			continue
		}
		states++
		require.True(t, ts.FreshnessPoints(dst))
		st := d.bandState()
		for i, k := range ks {
			want, _ := d.FreshnessPointAt(k)
			require.Equal(t, want, dst[i], "state %d, K = %v", n, k)
			if k != 16 {
				continue
			}
			j := int64((k-0.5)*d.delta) - d.off // the instant of v = 0
			switch e := int64(want - d.last); e {
			case j:
				at++
			case j + 1:
				after++
			}
			h, ok := st.symmetricBand(&ts.trs[i].c.bands, st.phiLow())
			if ok {
				if _, in := d.oneInstant(&st, float64(j), k-0.5, 1, -h, h, k); in {
					decided++
				}
			}
		}
	}
	t.Logf("K = 16: %d states, crossing on the instant %d times, the next %d, the symmetric test decided %d", states, at, after, decided)
	require.Positive(t, at)
	require.Positive(t, after)
	require.Greater(t, decided, states*8/10)
}

// The assumption pairReaches rests on, on this platform: the two terms
// 0.5·math.Erfc(∓w) of the symmetric pair sum to 1 within δ, for w across
// the range where both terms count. And pairReaches answers as the sum
// does, deciding without the second erfc in about half of the cases for
// m from 9 to 16.
func TestPairReaches(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var early, total int
	for n := range 200000 {
		z0 := 0.5 / (1.0/18 + rng.Float64()*(4-1.0/18)) // s from 1/18 to 4
		if n%4 == 0 {
			z0 = rng.Float64() * 9
		}
		a, b := 0.5*math.Erfc(-z0/math.Sqrt2), 0.5*math.Erfc(z0/math.Sqrt2)
		require.LessOrEqual(t, math.Abs(b-(1-a)), pairErr, "z0 = %v", z0)
		lo := float64(rng.IntN(16))
		if n%3 == 0 {
			lo = float64(rng.IntN(1 << 20))
		}
		g := lo
		g += a
		g += b
		require.Equal(t, g >= lo+1, pairReaches(lo, z0), "lo = %v, z0 = %v", lo, z0)
		if f, m := lo+a, lo+1; lo >= 8 && lo <= 15 {
			total++
			if f >= m || (1-a)-((m-f)-(m-math.Nextafter(m, 0))/2) >= pairErr {
				early++
			}
		}
	}
	t.Logf("m from 9 to 16: %d of %d decided with one erfc", early, total)
	require.Greater(t, early, total/3)
}

// reachedAt is Level's predicate, κ(T_last + e) ≥ K as kappa computes it,
// at the instants around each crossing and at K equal to κ there (the
// closest calls), from tight spreads to the integral (σ/Δ > 4).
func TestReachedAtIsKappasPredicate(t *testing.T) {
	ks := []float64{0.3, 0.5, 1, 1.5, 2, 2.5, 3.7, 7.5, 15.5, 16, 40}
	for _, sd := range []float64{3, 10, 14, 20, 40, 500} { // ms, Δ = 100 ms
		d, err := New(Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 100}, MinSamples: new(0)})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(51, uint64(sd)))
		var checks, pairs int
		for n := range 600 {
			a := time.Duration(n)*100*time.Millisecond + time.Duration((30+sd*rng.NormFloat64())*1e6)
			d.Observe(detector.Heartbeat{Seq: uint64(n + 1), HasSeq: true, Arrival: a})
			if n < 100 {
				continue
			}
			for _, k := range ks {
				tau, _ := d.FreshnessPointAt(k)
				for x := tau - d.last - 2; x <= tau-d.last+2; x++ {
					if x < 0 || x > d.emax {
						continue
					}
					g := d.kappa(d.last + x)
					for _, level := range []float64{k, g, math.Nextafter(g, 0), math.Nextafter(g, math.Inf(1))} {
						if !(level > 0) {
							continue
						}
						checks++
						require.Equal(t, g >= level, d.reachedAt(x, level), "σ %g ms, state %d, e %d, K %v, level %v", sd, n, x, k, level)
					}
					if u := diff(d.last+x, d.ea) / d.delta; u-math.Floor(u) == 0.5 {
						pairs++
					}
				}
			}
		}
		t.Logf("σ %g ms: %d checks, %d at u = ℓ₀ + 1/2", sd, checks, pairs)
	}
}
