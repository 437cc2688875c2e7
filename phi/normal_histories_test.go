package phi_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/require"
)

// historiesStream returns n heartbeats of a sender whose interval changes
// (10 ms to 6 s, so that some intervals pass 2^32 ns and the relearn rule
// learns slower rates), with jitter, losses (sequence gaps), heartbeats
// without sequence numbers, reordered and duplicated sequence numbers,
// arrivals going backwards, outages of up to 10 s and a few gaps of over
// 2^57 ns (whose sums pass 2^64 in a window of 1000), from an arrival of
// −2^62 ns.
func historiesStream(rng *rand.Rand, n int) []detector.Heartbeat {
	base := ms(100)
	var hbs []detector.Heartbeat
	at, seq := time.Duration(-1<<62), uint64(0)
	for len(hbs) < n {
		switch r := rng.Float64(); {
		case r < 0.002:
			at += 1<<57 + time.Duration(rng.Int64N(1<<57))
		case r < 0.01:
			base = []time.Duration{ms(10), ms(100), ms(400), ms(3000), ms(6000)}[rng.IntN(5)]
		case r < 0.02:
			at += time.Duration(rng.Int64N(int64(10 * time.Second))) // an outage
		case r < 0.06:
			seq += 1 + uint64(rng.IntN(4)) // losses
		}
		seq++
		at += base + time.Duration(rng.NormFloat64()*float64(base)/8)
		h := detector.Heartbeat{Seq: seq, HasSeq: rng.IntN(20) != 0, Arrival: at}
		switch r := rng.Float64(); {
		case r < 0.02 && seq > 2: // reordered or duplicated: stale
			h.Seq = seq - uint64(rng.IntN(2))
			hbs = append(hbs, h)
			h.Seq = seq
		case r < 0.03: // backwards: dropped
			hbs = append(hbs, detector.Heartbeat{Seq: seq + 100, Arrival: at - ms(50)})
		}
		hbs = append(hbs, h)
	}
	return hbs[:n]
}

// NormalHistories keeps each history exactly as a Normal of its threshold
// that had recorded the same intervals: here every history has a Normal
// beside it (a Fork of the source's Normal when the history is forked),
// and after every heartbeat their T_last, μ, σ_eff, τ (of their own and
// another threshold), warm-up, suspicion and window samples are equal bit
// for bit, and Same agrees with SameHistory. Histories are forked from
// random ones and deleted at random, over historiesStream's streams, for
// windows of 1, 2, 3, 50 and 1000 and the settings that change a
// history's path (seeds 123500501 onwards).
func TestNormalHistoriesAreNormals(t *testing.T) {
	cfgs := map[string]phi.NormalConfig{
		"default":    {},
		"cap-divide": {MaxInterval: new(ms(150)), DivideBySeqGap: true},
		"no-relearn": {RelearnAfter: new(0), MinStdDev: new(time.Duration(0))},
		"no-skip":    {SkipIfSuspected: new(false), AcceptablePause: new(ms(20))},
		"warm-boot":  {BootstrapInterval: new(ms(10)), MinSamples: new(1), RelearnAfter: new(1)},
	}
	seed := uint64(123500501)
	for _, name := range []string{"default", "cap-divide", "no-relearn", "no-skip", "warm-boot"} {
		for _, w := range []int{1, 2, 3, 50, 1000} {
			cfg := cfgs[name]
			cfg.WindowSize = w
			if cfg.MinSamples != nil && *cfg.MinSamples > w {
				cfg.MinSamples = new(w)
			}
			n := 3000
			if w == 1000 {
				n = 6000
			}
			if testing.Short() {
				n /= 2
			}
			t.Run(fmt.Sprintf("%s/n=%d", name, w), func(t *testing.T) {
				historiesAreNormals(t, cfg, rand.New(rand.NewPCG(seed, 1)), n)
			})
			seed++
		}
	}
}

func historiesAreNormals(t *testing.T, cfg phi.NormalConfig, rng *rand.Rand, n int) {
	ths := []float64{0.31, 0.5, 1, 2, 3, 5, 8, 12, 16}
	cfg.Threshold = 2
	h, err := phi.NewNormalHistories(cfg)
	require.NoError(t, err)
	d, err := phi.NewNormal(cfg)
	require.NoError(t, err)
	ds := []*phi.Normal{d}
	forks := 0
	for k, hb := range historiesStream(rng, n) {
		switch r := rng.Float64(); {
		case r < 0.05 && h.Len() < 12:
			i, th := rng.IntN(h.Len()), ths[rng.IntN(len(ths))]
			j, err := h.Fork(i, th)
			require.NoError(t, err)
			require.Equal(t, len(ds), j)
			f, err := ds[i].Fork(th)
			require.NoError(t, err)
			ds = append(ds, f)
			forks++
		case r < 0.09 && h.Len() > 1:
			i := rng.IntN(h.Len())
			moved := h.Delete(i)
			require.Equal(t, len(ds)-1, moved)
			ds[i] = ds[moved]
			ds = ds[:moved]
		}
		h.Observe(hb)
		for _, d := range ds {
			d.Observe(hb)
		}
		require.Equal(t, len(ds), h.Len())
		z := phi.ZOfLevel(ths[rng.IntN(len(ths))])
		now := hb.Arrival + ms(150)
		taus := make([]time.Duration, 1)
		for i, d := range ds {
			l1, m1, s1, ok1 := d.Form()
			l2, m2, s2, ok2 := h.Form(i)
			t1, _ := d.FreshnessPoint()
			t2, _ := h.FreshnessPoint(i)
			z1, _ := d.FreshnessPointZ(z)
			z2, _ := h.FreshnessPointZ(i, z)
			h.FreshnessPointsZ(i, []float64{z}, taus)
			if l1 != l2 || m1 != m2 || s1 != s2 || ok1 != ok2 || t1 != t2 || z1 != z2 || z1 != taus[0] ||
				d.WarmingUp() != h.WarmingUp(i) || d.Suspected(now) != h.Suspected(i, now) ||
				d.Threshold() != h.Threshold(i) || d.Window().Len() != h.WindowLen(i) {
				t.Fatalf("history %d, heartbeat %d: T_last %v, μ %v, σ %v, τ %v, τ(z) %v %v; want %v, %v, %v, %v, %v",
					i, k, l2, m2, s2, t2, z2, taus[0], l1, m1, s1, t1, z1)
			}
			if k%10 == 0 || d.Window().Size() < 1000 {
				w, got := d.Window(), h.HistorySamples(i)
				for s := range w.Len() {
					if w.At(s) != got[s] {
						t.Fatalf("history %d, heartbeat %d, sample %d: %v, want %v", i, k, s, got[s], w.At(s))
					}
				}
			}
			if j := rng.IntN(len(ds)); j != i && d.SameHistory(ds[j]) != h.Same(i, j) {
				t.Fatalf("histories %d and %d, heartbeat %d: Same %v", i, j, k, h.Same(i, j))
			}
		}
	}
	require.Greater(t, forks, 20)
}
