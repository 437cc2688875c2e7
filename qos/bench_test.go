package qos

import (
	"sync"
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/trace"
)

// benchTrace is a generated stream of 1,000,000 heartbeats: Δ = 100 ms,
// delay 30 ms ± 10 ms (normal), 1 % Bernoulli loss, sender jitter 0.5 ms.
var benchTrace = sync.OnceValue(func() []Stream {
	const n = 1_000_000
	recs, err := trace.Generate(trace.GenConfig{
		Interval: ms(100),
		Duration: (n + n/50) * ms(100), // 2 % spare for the 1 % loss
		Jitter:   ms(0.5),
		Delay:    trace.Delay{Dist: trace.DelayNormal, Mean: ms(30), SD: ms(10)},
		Loss:     trace.Loss{Model: trace.LossBernoulli, P: 0.01},
	}, trace.NewRand(2026))
	if err != nil {
		panic(err)
	}
	return []Stream{{Name: "bench", Heartbeats: heartbeats(recs[:min(len(recs), n)])}}
})

func benchRange(lo, hi float64, log bool) []float64 {
	v, err := Range(lo, hi, 40, log)
	if err != nil {
		panic(err)
	}
	return v
}

// linearBenchFamilies are the families whose sweep is one pass
// (docs/algorithms.md, “Sweeping a parameter in one pass”).
func linearBenchFamilies() []Family {
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 1000}
	return []Family{
		FixedFamily(durs(benchRange(100, 3000, true))),
		JacobsonFamily(jacobson.Config{}, benchRange(0.5, 16, false)),
		PhiNormalFamily(phi.NormalConfig{WindowSize: 1000, SkipIfSuspected: new(false)}, benchRange(0.5, 16, false)),
		PhiCassandraFamily(phi.CassandraConfig{WindowSize: 1000, BootstrapInterval: new(2 * ms(100)), MaxInterval: new(2 * ms(100))}, benchRange(0.5, 16, false)),
		ChenFamily(chen.Config{Estimator: est}, durs(benchRange(1, 2000, true))),
	}
}

var phiAkkaBenchConfig = phi.AkkaConfig{MinStdDev: new(ms(10)), AcceptablePause: new(ms(300)), BootstrapInterval: new(ms(100))}

// otherBenchFamilies are not linear: Akka (one grouped pass), Bertier (one
// point) and SFD (one shared estimator pass).
func otherBenchFamilies() []Family {
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 1000}
	return []Family{
		PhiAkkaFamily(phiAkkaBenchConfig, benchRange(0.5, 16, false)),
		BertierFamily(bertier.Config{Estimator: est}),
		SFDFamily(sfd.Config{Estimator: est, Targets: sfd.Targets{MaxTD: time.Second, MaxMistakesPerSecond: 1.0 / 60, MinQAP: 0.999}, UseSendTime: true},
			durs(benchRange(1, 2000, true))),
	}
}

// benchSweep times Sweep of fams over benchTrace on workers goroutines
// (0: GOMAXPROCS). The trace is generated before the timer starts.
func benchSweep(b *testing.B, fams []Family, perPoint bool, workers int) {
	streams := benchTrace()
	points := 0
	for _, f := range fams {
		points += len(f.Values)
	}
	b.ResetTimer()
	for b.Loop() {
		curves, err := Sweep(streams, fams, SweepConfig{PerPointOnly: perPoint, Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range curves {
			if c.Err != nil {
				b.Fatal(c.Family, c.Err)
			}
		}
	}
	b.ReportMetric(float64(len(streams[0].Heartbeats)), "heartbeats")
	b.ReportMetric(float64(points), "points")
}

// BenchmarkSweep sweeps every family at 40 points (Bertier: 1) over one
// million heartbeats, with the one-pass method where it applies ("fast")
// and with a fresh replay per point ("naive"), side by side. Linear: the
// five one-pass families only; All: all eight families. "naive" and "fast"
// run on one goroutine, so their ratio is the algorithmic gain alone;
// "fast-par" is the default Sweep, families in parallel on all cores.
//
//	go test -run '^$' -bench 'Sweep' -benchtime 1x -count 1 ./qos/
func BenchmarkSweep(b *testing.B) {
	b.Run("Linear/fast", func(b *testing.B) { benchSweep(b, linearBenchFamilies(), false, 1) })
	b.Run("Linear/fast-par", func(b *testing.B) { benchSweep(b, linearBenchFamilies(), false, 0) })
	b.Run("Linear/naive", func(b *testing.B) { benchSweep(b, linearBenchFamilies(), true, 1) })
	all := append(linearBenchFamilies(), otherBenchFamilies()...)
	b.Run("All/fast", func(b *testing.B) { benchSweep(b, all, false, 1) })
	b.Run("All/fast-par", func(b *testing.B) { benchSweep(b, all, false, 0) })
	b.Run("All/naive", func(b *testing.B) { benchSweep(b, all, true, 1) })
}

// BenchmarkReplay is one replay of one million heartbeats through Chen's
// detector (n = 1000).
func BenchmarkReplay(b *testing.B) {
	streams := benchTrace()
	b.ResetTimer()
	for b.Loop() {
		d, err := chen.New(chen.Config{Estimator: chen.EstimatorConfig{WindowSize: 1000}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ReplaySlice(d, streams[0].Heartbeats, Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweepFamily is BenchmarkSweep per family with a method faster
// than a replay per point (the linear ones, Akka and SFD), for the ratio of each one-pass curve to its 40 replays,
// both on one goroutine.
//
//	go test -run '^$' -bench 'SweepFamily' -benchtime 1x ./qos/
func BenchmarkSweepFamily(b *testing.B) {
	others := otherBenchFamilies()
	for _, f := range append(linearBenchFamilies(), others[0], others[2]) {
		b.Run(f.Name+"/fast", func(b *testing.B) { benchSweep(b, []Family{f}, false, 1) })
		b.Run(f.Name+"/naive", func(b *testing.B) { benchSweep(b, []Family{f}, true, 1) })
	}
}
