package kappa_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
)

// BenchmarkFreshnessPointAt solves for τ at 40 thresholds from 0.5 to 16
// (log-spaced, as fdreplay's default κ sweep) on the standard benchmark
// stream's state: the per-heartbeat cost of a κ sweep.
func BenchmarkFreshnessPointAt(b *testing.B) {
	d, err := kappa.New(kappa.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		a := time.Duration(i)*100*time.Millisecond + time.Duration((i*7919)%11-5)*time.Millisecond
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
	}
	ks := make([]float64, 40)
	for i := range ks {
		ks[i] = 0.5 * math.Pow(32, float64(i)/39)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range ks {
			tau, _ := d.FreshnessPointAt(k)
			sink += tau
		}
	}
}

var sink time.Duration

// BenchmarkStateSolve observes one heartbeat of a jittered stream (Δ =
// 10 ms, normal delays of 3 ± 1 ms, σ/Δ ≈ 0.1) and then finds τ at the
// 40 thresholds of BenchmarkFreshnessPointAt: from scratch
// (FreshnessPointAt), from the previous state's crossing (Tracker), or all
// at once (Trackers), side by side.
//
//	go test -run '^$' -bench StateSolve -benchmem ./kappa/
func BenchmarkStateSolve(b *testing.B) {
	ks := make([]float64, 40)
	for i := range ks {
		ks[i] = 0.5 * math.Pow(32, float64(i)/39)
	}
	const n = 1 << 14
	hbs := make([]detector.Heartbeat, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range hbs {
		jit := time.Duration(3e6 + 1e6*rng.NormFloat64())
		hbs[i] = detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: time.Duration(i)*10*time.Millisecond + jit}
	}
	for _, name := range []string{"FreshnessPointAt", "Tracker", "Trackers"} {
		b.Run(name, func(b *testing.B) {
			d, err := kappa.New(kappa.Config{Estimator: chen.EstimatorConfig{Interval: 10 * time.Millisecond}})
			if err != nil {
				b.Fatal(err)
			}
			trs := make([]*kappa.Tracker, len(ks))
			for i, k := range ks {
				trs[i], _ = d.Track(k)
			}
			all, _ := d.TrackAll(ks)
			taus := make([]time.Duration, len(ks))
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				d.Observe(hbs[i%n])
				i++
				switch name {
				case "FreshnessPointAt":
					for _, k := range ks {
						tau, _ := d.FreshnessPointAt(k)
						sink += tau
					}
				case "Tracker":
					for _, tr := range trs {
						tau, _ := tr.FreshnessPoint()
						sink += tau
					}
				default:
					all.FreshnessPoints(taus)
					sink += taus[len(taus)-1]
				}
			}
		})
	}
}
