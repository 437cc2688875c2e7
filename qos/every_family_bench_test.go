package qos

import (
	"testing"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/kappa"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/satzger"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/twowfd"
)

// everyBenchFamilies are the ten swept families of fdreplay's default run
// (Bertier has a single point), at 40 points over fdreplay's default ranges
// and settings for Δ = 100 ms and n = 1000 (cmd/fdreplay, defaultSpans),
// with every detector at its package defaults otherwise: φ normal with
// skip-suspected on.
func everyBenchFamilies() []Family {
	const d = 100 // Δ in ms
	est := chen.EstimatorConfig{Interval: ms(d), WindowSize: 1000}
	return []Family{
		FixedFamily(durs(benchRange(d, 30*d, true))),
		JacobsonFamily(jacobson.Config{}, benchRange(0.5, 64, true)),
		PhiNormalFamily(phi.NormalConfig{WindowSize: 1000}, benchRange(0.5, 16, false)),
		PhiAkkaFamily(phiAkkaBenchConfig, benchRange(0.5, 16, false)),
		PhiCassandraFamily(phi.CassandraConfig{WindowSize: 1000, BootstrapInterval: new(ms(2 * d)), MaxInterval: new(ms(2 * d))}, benchRange(0.25, 16, true)),
		ChenFamily(chen.Config{Estimator: est}, durs(benchRange(d/100., 20*d, true))),
		SFDFamily(sfd.Config{Estimator: est, InitialMargin: new(ms(d)), Step: ms(d / 10),
			Targets:     sfd.Targets{MaxTD: ms(10 * d), MaxMistakesPerSecond: 1.0 / 60, MinQAP: 0.999},
			UseSendTime: true}, durs(benchRange(d/100., 20*d, true))),
		TwoWFDFamily(twowfd.Config{Interval: ms(d), LongWindowSize: 1000}, durs(benchRange(d/100., 20*d, true))),
		SatzgerFamily(satzger.Config{WindowSize: 1000, BootstrapInterval: new(ms(d))}, benchRange(0.5, 1, false)),
		KappaFamily(kappa.Config{Estimator: est}, benchRange(0.5, 16, true)),
	}
}

// BenchmarkSweepEveryFamily times each family's sweep ("sweep": the
// method Sweep picks) against one replay per point ("per-point"), side by
// side on one goroutine, at 40 points over the first 200,000 heartbeats of
// benchTrace, with fdreplay's replay settings (confidence intervals on,
// warm-up n = 1000). Besides the wall time per op it reports the process's
// CPU time per op (user + system, the garbage collector's included), which
// a busy machine inflates less (docs/experiments.md).
//
//	go test -run '^$' -bench 'SweepEveryFamily' -benchmem -count 5 ./qos/
func BenchmarkSweepEveryFamily(b *testing.B) {
	full := benchTrace()[0]
	streams := []Stream{{Name: full.Name, Heartbeats: full.Heartbeats[:200_000]}}
	cfg := Config{Intervals: true, WarmUp: 1000}
	for _, f := range everyBenchFamilies() {
		for _, perPoint := range []bool{false, true} {
			name := f.Name + "/sweep"
			if perPoint {
				name = f.Name + "/per-point"
			}
			b.Run(name, func(b *testing.B) {
				var method Method
				cpu0 := cpuTime(b)
				for b.Loop() {
					curves, err := Sweep(streams, []Family{f}, SweepConfig{Config: cfg, PerPointOnly: perPoint, Workers: 1})
					if err != nil {
						b.Fatal(err)
					}
					if curves[0].Err != nil {
						b.Fatal(curves[0].Err)
					}
					method = curves[0].Method
				}
				if !perPoint && method == PerPoint {
					b.Logf("%s: the sweep fell back to one replay per point", f.Name)
				}
				b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(len(f.Values)), "points")
			})
		}
	}
}

// BenchmarkSweepLinearApart is BenchmarkSweepEveryFamily's sweep of each
// linear family with one value apart (Family.Apart), as fdreplay's table
// row of the family's default setting joins its curve: the middle value
// of the family's range, not among the points. "together" sweeps all of
// them in one Sweep on one worker, one curve after the other, as
// fdreplay's workers do on a stream in memory.
//
//	go test -run '^$' -bench 'SweepLinearApart' -benchmem ./qos/
func BenchmarkSweepLinearApart(b *testing.B) {
	full := benchTrace()[0]
	streams := []Stream{{Name: full.Name, Heartbeats: full.Heartbeats[:200_000]}}
	cfg := Config{Intervals: true, WarmUp: 1000}
	var all []Family
	for _, f := range everyBenchFamilies() {
		if f.Linear == nil {
			continue
		}
		vs := f.Values
		f.Apart = []float64{(vs[len(vs)/2-1] + vs[len(vs)/2]) / 2}
		all = append(all, f)
	}
	run := func(b *testing.B, fams []Family) {
		cpu0 := cpuTime(b)
		for b.Loop() {
			curves, err := Sweep(streams, fams, SweepConfig{Config: cfg, Workers: 1})
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range curves {
				if c.Err != nil || c.Method != OnePass || c.Apart[0] == nil {
					b.Fatalf("%s: %v, %s, %v", c.Family, c.Err, c.Method, c.Apart)
				}
			}
		}
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	}
	for _, f := range all {
		b.Run(f.Name, func(b *testing.B) { run(b, []Family{f}) })
	}
	b.Run("together", func(b *testing.B) { run(b, all) })
}
