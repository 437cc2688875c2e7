package qos

import (
	"slices"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
)

// BenchmarkNormalSetObserve times the normal φ's set alone (the groups'
// detectors, their splits and joins, no pass): every heartbeat of the
// first 200,000 of benchTrace, the 40 thresholds of
// BenchmarkSweepEveryFamily's phi-normal, then the freshness points of all
// of them after each heartbeat.
//
//	go test -run '^$' -bench 'NormalSetObserve' -benchmem ./qos/
func BenchmarkNormalSetObserve(b *testing.B) {
	hbs := benchTrace()[0].Heartbeats[:200_000]
	ths := benchRange(0.5, 16, false)
	taus := make([]time.Duration, len(ths))
	cpu0 := cpuTime(b)
	for b.Loop() {
		var failed bool
		s, err := newNormalSet(phi.NormalConfig{WindowSize: 1000}, ths[0], &failed)
		if err != nil {
			b.Fatal(err)
		}
		setObserveAll(s, s.track(ths), hbs, taus)
		if failed {
			b.Fatal("a fork failed")
		}
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// setObserveAll gives s every heartbeat of hbs, filling taus after each
// (a function of its own, so that valgrind --tool=callgrind
// --toggle-collect='*setObserveAll*' counts the set's instructions alone).
//
//go:noinline
func setObserveAll(s *normalSet, fill func([]time.Duration), hbs []detector.Heartbeat, taus []time.Duration) {
	for _, hb := range hbs {
		s.Observe(hb)
		fill(taus)
	}
}

// BenchmarkNormalSetFill times the set's fill alone in fdreplay's order of
// thresholds (BenchmarkNormalSetObserve's 40, then Θ = 8, the table's),
// after the first 200,000 heartbeats of benchTrace (sub-benchmark
// "table"), and in increasing z(Θ) ("sorted"); it reports the groups.
//
//	go test -run '^$' -bench 'NormalSetFill' -benchmem ./qos/
func BenchmarkNormalSetFill(b *testing.B) {
	hbs := benchTrace()[0].Heartbeats[:200_000]
	sweep := benchRange(0.5, 16, false)
	for _, c := range []struct {
		name string
		ths  []float64
	}{{"table", append(slices.Clone(sweep), 8)}, {"sorted", sweep}} {
		b.Run(c.name, func(b *testing.B) {
			var failed bool
			s, err := newNormalSet(phi.NormalConfig{WindowSize: 1000}, c.ths[0], &failed)
			if err != nil {
				b.Fatal(err)
			}
			fill := s.track(c.ths)
			for _, hb := range hbs {
				s.Observe(hb)
			}
			if failed {
				b.Fatal("a fork failed")
			}
			taus := make([]time.Duration, len(c.ths))
			for b.Loop() {
				fill(taus)
			}
			b.ReportMetric(float64(len(s.grps)), "groups")
		})
	}
}
