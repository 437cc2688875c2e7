package qos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/require"
)

// elapsedKappa is κ-FD whose freshness point is T_last + ElapsedFor(K),
// recomputed from the level at every call: no Tracker, no bands, no
// search from the previous crossing. It is the reference of the κ sweep.
type elapsedKappa struct{ *kappa.Detector }

func (d elapsedKappa) FreshnessPoint() (time.Duration, bool) {
	if _, seen := d.Detector.FreshnessPoint(); !seen {
		return 0, false
	}
	e, _ := d.ElapsedFor(d.Threshold()) // math.MaxInt64 when never reached
	return detector.AddSat(d.Estimator().LastArrival(), e), true
}

func (d elapsedKappa) Suspected(now time.Duration) bool {
	tau, seen := d.FreshnessPoint()
	return seen && now > tau
}

// κ-FD's sweep (one estimator, a Tracker per threshold, the bands) equals,
// in every field, one replay per threshold of the reference above, on
// random streams: Δ from 1 ms to 1 s, spreads from none to above Δ/4 with
// σ_min at, just above and just below Δ/4, losses, pauses, and thresholds
// near 0, integers, half-integers and others.
func TestKappaSweepEqualsElapsedForReplays(t *testing.T) {
	streams, n := 16, 1500
	if testing.Short() {
		streams, n = 6, 400
	}
	rng := rand.New(rand.NewPCG(17, 29))
	for i := range streams {
		delta := []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second}[rng.IntN(4)]
		g := trace.GenConfig{
			Interval: delta, Duration: time.Duration(n) * delta,
			Jitter: time.Duration(rng.Float64() * 0.3 * float64(delta)),
			Delay:  trace.Delay{Dist: trace.DelayLogNormal, Mean: delta / 5, SD: time.Duration(rng.Float64() * 0.3 * float64(delta))},
		}
		if rng.IntN(2) == 0 {
			g.Loss = trace.Loss{Model: trace.LossBernoulli, P: rng.Float64() * 0.2}
		}
		if rng.IntN(2) == 0 {
			g.Pauses = []trace.Period{{At: g.Duration / 3, Length: time.Duration(1+rng.IntN(20)) * delta}}
		}
		recs, err := trace.Generate(g, trace.NewRand(uint64(100+i)))
		require.NoError(t, err)
		cfg := kappa.Config{Estimator: chen.EstimatorConfig{Interval: delta, WindowSize: 2 + rng.IntN(200)}, MinSamples: new(0)}
		switch rng.IntN(4) {
		case 0:
			cfg.MinStdDev = new(delta / 4)
		case 1:
			cfg.MinStdDev = new(delta/4 + 1)
		case 2:
			cfg.MinStdDev = new(delta/4 - 1)
		}
		ks := []float64{1e-9, 0.5, 1, 2, 2.5, 3, 7.5, 16, 4.9999, 2 + 1e-7}
		for range 4 {
			ks = append(ks, math.Exp(rng.Float64()*math.Log(2000))/100)
		}
		ref := Family{Name: "kappa", Param: "threshold", Values: ks, New: func(v float64) (detector.Detector, error) {
			c := cfg
			c.Threshold = v
			d, err := kappa.New(c)
			return elapsedKappa{d}, err
		}}
		streams := []Stream{{Name: "s", Heartbeats: heartbeats(recs)}}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			fast, err := Sweep(streams, []Family{KappaFamily(cfg, ks)}, SweepConfig{})
			require.NoError(t, err)
			slow, err := Sweep(streams, []Family{ref}, SweepConfig{PerPointOnly: true})
			require.NoError(t, err)
			require.Empty(t, fast[0].Err)
			require.Empty(t, slow[0].Err)
			require.Equal(t, SharedState, fast[0].Method)
			for j, k := range ks {
				require.Equal(t, slow[0].Points[j], fast[0].Points[j], "Δ %v, %+v, K = %v", delta, cfg, k)
			}
		})
	}
}
