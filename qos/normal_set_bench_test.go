package qos

import (
	"fmt"
	"reflect"
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
// "table"), and in increasing z(Θ) ("sorted"); it reports the groups and
// the process's CPU time per op.
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
			cpu0 := cpuTime(b)
			for b.Loop() {
				fill(taus)
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(s.grps)), "groups")
		})
	}
}

// BenchmarkNormalSetStats times what no exact layout of the set avoids
// per heartbeat: μ and σ of every group's window from its exact sums
// (Window.MeanStdDev: a division, the spread's rounding, a division and
// a square root per group, the groups independent of each other), after
// the first 200,000 heartbeats of benchTrace with the 40 thresholds of
// BenchmarkNormalSetObserve. It reports the groups and the process's CPU
// time per group (as BenchmarkSweepEveryFamily's cpu-ns/op);
// BenchmarkNormalSetFill times the freshness points.
//
//	go test -run '^$' -bench 'NormalSetStats' -benchmem ./qos/
func BenchmarkNormalSetStats(b *testing.B) {
	hbs := benchTrace()[0].Heartbeats[:200_000]
	ths := benchRange(0.5, 16, false)
	var failed bool
	s, err := newNormalSet(phi.NormalConfig{WindowSize: 1000}, ths[0], &failed)
	if err != nil {
		b.Fatal(err)
	}
	s.track(ths)
	for _, hb := range hbs {
		s.Observe(hb)
	}
	if failed {
		b.Fatal("a fork failed")
	}
	// Each group's window is that of a replay of its lowest threshold.
	ws := make([]*detector.Window, len(s.grps))
	for i, g := range s.grps {
		d, err := phi.NewNormal(phi.NormalConfig{WindowSize: 1000, Threshold: s.ths[g.lo]})
		if err != nil {
			b.Fatal(err)
		}
		for _, hb := range hbs {
			d.Observe(hb)
		}
		ws[i] = d.Window()
	}
	var sum float64
	cpu0 := cpuTime(b)
	for b.Loop() {
		for _, w := range ws {
			mu, sd := w.MeanStdDev()
			sum += mu + sd
		}
	}
	if sum == 0 {
		b.Fatal("no statistics")
	}
	b.ReportMetric(float64(len(ws)), "groups")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N*len(ws)), "cpu-ns/group")
}

// BenchmarkNormalSweepPassAlone times the normal φ's sweep of
// BenchmarkSweepEveryFamily ("sweep": sweepNormalShared on the first
// 200,000 heartbeats of benchTrace, its 40 thresholds and replay
// settings) against the same passes with the set replaced by what it
// reported, recorded beforehand ("recorded": ok, ready and every
// threshold's freshness point after each heartbeat, read from memory):
// the sweep's floor were the set to cost nothing but reading τ), and
// against one replay per threshold ("per-point", BenchmarkSweepEveryFamily's
// baseline), side by side in one run. The sweep and "recorded" must give
// the same points, checked once before timing. "recorded" bounds what any
// set can reach: the ratio per-point/recorded is the most a sweep on
// these passes can gain. Each sub-benchmark also reports the set's mean
// number of groups (distinct histories) per heartbeat.
//
//	go test -run '^$' -bench 'NormalSweepPassAlone' -benchmem ./qos/
func BenchmarkNormalSweepPassAlone(b *testing.B) {
	hbs := benchTrace()[0].Heartbeats[:200_000]
	ths := benchRange(0.5, 16, false)
	ncfg := phi.NormalConfig{WindowSize: 1000}
	cfg := Config{Intervals: true, WarmUp: 1000}
	rec := recordSet(b, ncfg, ths, hbs)
	col := make(map[float64]int, len(ths))
	for j, v := range ths {
		col[v] = j
	}
	class := classes(len(ths), func(i, j int) bool { return ths[i] == ths[j] })
	newDet := func(float64) (thresholdDetector, error) { return &recordedSetPlayer{rec: rec}, nil }
	trackAll := func(d thresholdDetector, vs []float64) func([]time.Duration) {
		p := d.(*recordedSetPlayer)
		for _, v := range vs {
			p.cols = append(p.cols, col[v])
		}
		return p.fill
	}
	recorded := func() ([]*Point, error) {
		return sweepSharedPasses(newDet, nil, trackAll, ths, class, sliceSource(hbs), cfg, normalLeanPasses, true)
	}
	swept := func() ([]*Point, error) { return sweepNormalShared(ncfg, ths, sliceSource(hbs), cfg) }
	want, err := swept()
	if err != nil {
		b.Fatal(err)
	}
	got, err := recorded()
	if err != nil {
		b.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		b.Fatal("the passes on the recorded freshness points differ from the sweep")
	}
	perPoint := func() ([]*Point, error) {
		curves, err := Sweep([]Stream{{Name: "bench", Heartbeats: hbs}}, []Family{PhiNormalFamily(ncfg, ths)},
			SweepConfig{Config: cfg, PerPointOnly: true, Workers: 1})
		if err != nil {
			return nil, err
		}
		if curves[0].Err != nil {
			return nil, curves[0].Err
		}
		if len(curves[0].Points) != len(ths) {
			return nil, fmt.Errorf("%d points of %d", len(curves[0].Points), len(ths))
		}
		return nil, nil
	}
	groups := meanGroups(b, ncfg, ths, hbs)
	for _, c := range []struct {
		name string
		run  func() ([]*Point, error)
	}{{"sweep", swept}, {"recorded", recorded}, {"per-point", perPoint}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime(b)
			for b.Loop() {
				if _, err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(groups, "groups")
		})
	}
}

// meanGroups returns the mean number of groups of the set of ths
// (settings ncfg) after each heartbeat of hbs.
func meanGroups(b *testing.B, ncfg phi.NormalConfig, ths []float64, hbs []detector.Heartbeat) float64 {
	var failed bool
	s, err := newNormalSet(ncfg, ths[0], &failed)
	if err != nil {
		b.Fatal(err)
	}
	s.track(ths)
	total := 0
	for _, hb := range hbs {
		s.Observe(hb)
		total += len(s.grps)
	}
	if failed {
		b.Fatal("a fork failed")
	}
	return float64(total) / float64(len(hbs))
}

// recordedSet is what a normalSet of some thresholds reported after each
// heartbeat of a stream: whether its freshness point was ok, whether it
// was ready, and (when ready) the freshness point of each threshold,
// len(ths) of them a row.
type recordedSet struct {
	ok, ready []bool
	taus      []time.Duration
	n         int // thresholds
}

// recordSet runs the set of ths (settings ncfg) over hbs and records it.
func recordSet(b *testing.B, ncfg phi.NormalConfig, ths []float64, hbs []detector.Heartbeat) *recordedSet {
	var failed bool
	s, err := newNormalSet(ncfg, ths[0], &failed)
	if err != nil {
		b.Fatal(err)
	}
	fill := s.track(ths)
	rec := &recordedSet{n: len(ths), taus: make([]time.Duration, len(hbs)*len(ths))}
	for k, hb := range hbs {
		s.Observe(hb)
		ok := started(s)
		ready := ok && !s.WarmingUp()
		if ready {
			fill(rec.taus[k*len(ths) : (k+1)*len(ths)])
		}
		rec.ok, rec.ready = append(rec.ok, ok), append(rec.ready, ready)
	}
	if failed {
		b.Fatal("a fork failed")
	}
	return rec
}

// recordedSetPlayer is a recordedSet replayed as a pass's detector: each
// Observe moves to the next heartbeat's record, and fill sets the
// freshness points of the thresholds in columns cols.
type recordedSetPlayer struct {
	rec  *recordedSet
	k    int // heartbeats observed
	cols []int
}

func (p *recordedSetPlayer) Observe(detector.Heartbeat) { p.k++ }

func (p *recordedSetPlayer) Started() bool { return p.k > 0 && p.rec.ok[p.k-1] }

func (p *recordedSetPlayer) WarmingUp() bool { return p.k == 0 || !p.rec.ready[p.k-1] }

func (p *recordedSetPlayer) FreshnessPoint() (time.Duration, bool) { return 0, p.Started() }

func (p *recordedSetPlayer) Suspected(time.Duration) bool { return false }

func (p *recordedSetPlayer) FreshnessPointAt(float64) (time.Duration, bool) { return 0, false }

func (p *recordedSetPlayer) fill(taus []time.Duration) {
	row := p.rec.taus[(p.k-1)*p.rec.n : p.k*p.rec.n]
	for j, c := range p.cols {
		taus[j] = row[c]
	}
}
