package qos

import (
	"testing"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/twowfd"
)

// thresholdBenchFamilies are 2W-FD (one pass), Satzger and κ-FD (shared
// state) at 40 points with the package defaults (n = 1000).
func thresholdBenchFamilies() []Family {
	return []Family{
		TwoWFDFamily(twowfd.Config{}, durs(benchRange(1, 2000, true))),
		SatzgerFamily(satzger.Config{}, benchRange(0.5, 1, false)),
		KappaFamily(kappa.Config{Estimator: chen.EstimatorConfig{WindowSize: 1000}}, benchRange(0.5, 16, true)),
	}
}

// BenchmarkSweepThreshold times each of the three sweeps against one replay
// per point, side by side on one goroutine, over the first 200,000
// heartbeats of benchTrace.
//
//	go test -run '^$' -bench 'SweepThreshold' -benchtime 1x ./qos/
func BenchmarkSweepThreshold(b *testing.B) {
	full := benchTrace()[0]
	streams := []Stream{{Name: full.Name, Heartbeats: full.Heartbeats[:200_000]}}
	for _, f := range thresholdBenchFamilies() {
		for _, perPoint := range []bool{false, true} {
			name := f.Name + "/fast"
			if perPoint {
				name = f.Name + "/naive"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					curves, err := Sweep(streams, []Family{f}, SweepConfig{PerPointOnly: perPoint, Workers: 1})
					if err != nil {
						b.Fatal(err)
					}
					if curves[0].Err != nil {
						b.Fatal(curves[0].Err)
					}
				}
				b.ReportMetric(float64(len(f.Values)), "points")
			})
		}
	}
}
