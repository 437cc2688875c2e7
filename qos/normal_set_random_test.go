package qos

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/require"
)

// randomNormalStream returns n heartbeats of a sender whose interval
// changes (10 ms to 6 s: the relearn rule learns the slower rates, and
// some intervals pass 2^32 ns), with jitter, losses (sequence gaps),
// heartbeats without sequence numbers, reordered and duplicated sequence
// numbers, outages of up to 20 s and, with backwards, arrivals going
// backwards (a replay's pass stops at them; the set drops them).
func randomNormalStream(rng *rand.Rand, n int, backwards bool) []detector.Heartbeat {
	base := ms(100)
	var hbs []detector.Heartbeat
	at, seq := time.Duration(0), uint64(0)
	for len(hbs) < n {
		switch r := rng.Float64(); {
		case r < 0.01:
			base = []time.Duration{ms(10), ms(100), ms(400), ms(3000), ms(6000)}[rng.IntN(5)]
		case r < 0.02:
			at += time.Duration(rng.Int64N(int64(20 * time.Second))) // an outage
		case r < 0.06:
			seq += 1 + uint64(rng.IntN(4)) // losses
		}
		seq++
		at += base + time.Duration(rng.NormFloat64()*float64(base)/8)
		h := detector.Heartbeat{Seq: seq, HasSeq: rng.IntN(20) != 0, Arrival: at}
		switch r := rng.Float64(); {
		case r < 0.02 && seq > 2: // reordered or duplicated: stale
			hbs = append(hbs, detector.Heartbeat{Seq: seq - uint64(rng.IntN(2)), HasSeq: true, Arrival: at})
		case r < 0.03 && backwards:
			hbs = append(hbs, detector.Heartbeat{Seq: seq + 100, Arrival: at - ms(50)})
		}
		hbs = append(hbs, h)
	}
	return hbs[:n]
}

// The normal φ's set gives every threshold, after every heartbeat, the
// freshness point and warm-up of a phi.Normal replayed with that threshold
// alone, and its sweep (SharedState) every field of a replay per
// threshold, over randomNormalStream's streams (with arrivals going
// backwards for the set; without for the sweep, whose pass stops at
// them), for windows of 1, 2, 3 and 1000 and settings that change which
// intervals a threshold records; thresholds unsorted and one repeated
// (seeds 123500541 onwards).
func TestNormalSetIsReplaysRandom(t *testing.T) {
	cfgs := []struct {
		name string
		cfg  phi.NormalConfig
	}{
		{"default", phi.NormalConfig{}},
		{"cap-divide", phi.NormalConfig{MaxInterval: new(ms(150)), DivideBySeqGap: true}},
		{"no-relearn", phi.NormalConfig{RelearnAfter: new(0), MinStdDev: new(time.Duration(0))}},
	}
	vals := []float64{8, 0.31, 16, 1, 2, 3, 0.5, 5, 12, 2, 1.5, 0.7}
	seed := uint64(123500541)
	for _, c := range cfgs {
		for _, w := range []int{1, 2, 3, 1000} {
			cfg := c.cfg
			cfg.WindowSize = w
			n := 2000
			if w == 1000 {
				n = 5000
			}
			t.Run(fmt.Sprintf("%s/n=%d", c.name, w), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 2))
				setIsReplays(t, cfg, vals, randomNormalStream(rng, n, true))
				checkNormalGroupsAt(t, cfg, vals, randomNormalStream(rng, n, false), Config{})
			})
			seed++
		}
	}
}

func setIsReplays(t *testing.T, cfg phi.NormalConfig, vals []float64, hbs []detector.Heartbeat) {
	var failed bool
	s, err := newNormalSet(cfg, vals[0], &failed)
	require.NoError(t, err)
	fill := s.track(vals)
	ds := newNormals(t, cfg, vals)
	taus := make([]time.Duration, len(vals))
	for k, hb := range hbs {
		s.Observe(hb)
		fill(taus)
		for j, d := range ds {
			d.Observe(hb)
			want, ok := d.FreshnessPoint()
			if !ok {
				continue
			}
			if taus[j] != want {
				t.Fatalf("heartbeat %d, Θ = %g: τ %v, want %v", k, vals[j], taus[j], want)
			}
		}
		if s.WarmingUp() != ds[0].WarmingUp() {
			t.Fatalf("heartbeat %d: warming up %v", k, s.WarmingUp())
		}
	}
	require.False(t, failed)
}
