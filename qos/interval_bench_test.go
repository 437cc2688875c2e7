package qos

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/bertier"
	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/jacobson"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/sfd"
	"github.com/fdkit/fdkit/trace"
)

// intervalBenchStream is a 5-minute stream like fdreplay's default trace
// (3000 heartbeats, Δ = 100 ms, delay 30 ± 10 ms, 5 % loss), or a longer
// one of n heartbeats.
func intervalBenchStream(n int) []Stream {
	recs, err := trace.Generate(trace.GenConfig{
		Interval: ms(100), Duration: time.Duration(n) * ms(100), Jitter: ms(0.5),
		Delay: trace.Delay{Dist: trace.DelayNormal, Mean: ms(30), SD: ms(10)},
		Loss:  trace.Loss{Model: trace.LossBernoulli, P: 0.05},
	}, trace.NewRand(14))
	if err != nil {
		panic(err)
	}
	return []Stream{{Name: "bench", Heartbeats: heartbeats(recs)}}
}

// tableBenchFamilies are fdreplay's default table: every family at one
// setting, window 1000.
func tableBenchFamilies() []Family {
	est := chen.EstimatorConfig{Interval: ms(100), WindowSize: 1000}
	return []Family{
		FixedFamily([]time.Duration{time.Second}),
		JacobsonFamily(jacobson.Config{}, []float64{4}),
		PhiNormalFamily(phi.NormalConfig{WindowSize: 1000}, []float64{8}),
		PhiAkkaFamily(phiAkkaBenchConfig, []float64{8}),
		PhiCassandraFamily(phi.CassandraConfig{WindowSize: 1000, BootstrapInterval: new(ms(200)), MaxInterval: new(ms(200))}, []float64{8}),
		ChenFamily(chen.Config{Estimator: est}, []time.Duration{ms(100)}),
		BertierFamily(bertier.Config{Estimator: est}),
		SFDFamily(sfd.Config{Estimator: est, Targets: sfd.Targets{MaxTD: time.Second, MaxMistakesPerSecond: 1.0 / 60, MinQAP: 0.999}, UseSendTime: true},
			[]time.Duration{ms(100)}),
	}
}

// BenchmarkIntervals times fdreplay's default table (every family at one
// setting on a 3000-heartbeat stream) and a full sweep (all families at 40
// points on 100,000 heartbeats) without and with the confidence intervals
// (Config.Intervals), side by side, on one goroutine.
//
//	go test -run '^$' -bench 'Intervals' -count 5 ./qos/
func BenchmarkIntervals(b *testing.B) {
	table := intervalBenchStream(3000)
	long := intervalBenchStream(100_000)
	all := append(linearBenchFamilies(), otherBenchFamilies()...)
	for _, c := range []struct {
		name    string
		streams []Stream
		fams    []Family
	}{{"Table", table, tableBenchFamilies()}, {"Sweep", long, all}} {
		for _, ci := range []bool{false, true} {
			name := c.name + "/plain"
			if ci {
				name = c.name + "/intervals"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					curves, err := Sweep(c.streams, c.fams, SweepConfig{Config: Config{Intervals: ci, WarmUp: 1000}, Workers: 1})
					if err != nil {
						b.Fatal(err)
					}
					for _, cv := range curves {
						if cv.Err != nil {
							b.Fatal(cv.Family, cv.Err)
						}
					}
				}
			})
		}
	}
}

// BenchmarkSetCI is the confidence intervals of a curve's 40 settings on
// 128 cells, as the sweeps compute them one after the other: the observed
// time and the evaluated heartbeats per cell are the same for every
// setting, the mistakes, suspected time and TD sums are not.
//
//	go test -run '^$' -bench 'SetCI' -count 5 ./qos/
func BenchmarkSetCI(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 5))
	g := cellGrid{n: 128, width: time.Second}
	base := newCellSeries(g)
	for c := range g.n {
		base.span[c] = float64(time.Second)
		base.tdN[c] = float64(90 + rng.IntN(20))
	}
	series := make([]*cellSeries, 40)
	for i := range series {
		s := base.clone()
		for c := range g.n {
			s.mist[c] = float64(rng.IntN(3 + i))
			s.susp[c] = s.mist[c] * float64(rng.IntN(50_000_000))
			s.tdSum[c] = s.tdN[c] * float64(200_000_000+rng.IntN(40_000_000)+5_000_000*i)
		}
		series[i] = s
	}
	res := Result{Span: 128 * time.Second, Mistakes: 100, Evaluated: 12000}
	for b.Loop() {
		for _, s := range series {
			res.setCI(s)
		}
	}
}
