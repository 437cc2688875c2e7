package qos_test

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/fdkit/fdkit/chen"
	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/trace"
)

// The worked example of docs/algorithms.md, “Replaying a trace”: Chen's NFD-E
// (n = 3, α = 30 ms) on ten heartbeats sent every 100 ms, heartbeat 7 lost.
func ExampleReplaySlice() {
	arrivals := map[uint64]time.Duration{1: 120, 2: 225, 3: 318, 4: 440, 5: 522, 6: 630, 8: 835, 9: 990, 10: 1021}
	var hbs []detector.Heartbeat
	for s := uint64(1); s <= 10; s++ {
		if a, ok := arrivals[s]; ok {
			hbs = append(hbs, detector.Heartbeat{Seq: s, HasSeq: true,
				Sent: time.Duration(s) * 100 * time.Millisecond, HasSent: true, Arrival: a * time.Millisecond})
		}
	}
	d, err := chen.New(chen.Config{
		Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 3},
		Margin:    new(30 * time.Millisecond),
	})
	if err != nil {
		panic(err)
	}
	res, err := qos.ReplaySlice(d, hbs, qos.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("evaluated %d heartbeats over %v (%d in warm-up)\n", res.Evaluated, res.Span, res.WarmUp)
	fmt.Printf("mistakes %d, suspected %v\n", res.Mistakes, res.Suspected.Round(time.Microsecond))
	fmt.Printf("MR %.6f per second, QAP %.6f\n", res.MRPerSecond, res.QAP)
	fmt.Printf("E[TM] %v, E[TMR] %v\n", res.MeanTM.Round(time.Microsecond), res.MeanTMR)
	fmt.Printf("TD mean %v, max %v (%s-based)\n", res.TD.Mean.Round(time.Microsecond), res.TD.Max.Round(time.Microsecond), res.TDBasis)
	// Output:
	// evaluated 7 heartbeats over 703ms (2 in warm-up)
	// mistakes 2, suspected 105.333ms
	// MR 2.844950 per second, QAP 0.850166
	// E[TM] 52.667ms, E[TMR] 351.5ms
	// TD mean 163.619ms, max 181.667ms (send-based)
}

// A sweep of Chen's α on the same trace, computed in one pass. Without send
// times TD is arrival-based (τ − A_k, d̄ = 0): 36.6 ms, the mean delay, less
// than the send-based TD of ExampleReplaySlice.
func ExampleSweep() {
	arrivals := []time.Duration{120, 225, 318, 440, 522, 630, 835, 990, 1021}
	seqs := []uint64{1, 2, 3, 4, 5, 6, 8, 9, 10}
	var hbs []detector.Heartbeat
	for i, a := range arrivals {
		hbs = append(hbs, detector.Heartbeat{Seq: seqs[i], HasSeq: true, Arrival: a * time.Millisecond})
	}
	fam := qos.ChenFamily(chen.Config{Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 3}},
		[]time.Duration{0, 30 * time.Millisecond, 100 * time.Millisecond})
	curves, err := qos.Sweep([]qos.Stream{{Name: "p", Heartbeats: hbs}}, []qos.Family{fam}, qos.SweepConfig{})
	if err != nil {
		panic(err)
	}
	for _, pt := range curves[0].Points {
		fmt.Printf("α=%3gms: %d mistakes, QAP %.3f, TD %v (%s-based)\n", pt.Value, pt.Mistakes, pt.QAP,
			pt.TD.Mean.Round(time.Millisecond), pt.TDBasis)
	}
	// Output:
	// α=  0ms: 4 mistakes, QAP 0.733, TD 97ms (arrival-based)
	// α= 30ms: 2 mistakes, QAP 0.850, TD 127ms (arrival-based)
	// α=100ms: 1 mistakes, QAP 0.994, TD 197ms (arrival-based)
}

// The same replay from a trace.Spool: the heartbeats live in a temporary
// file and are read once per pass, so a stream of any length replays in
// bounded memory, with the same result as ReplaySlice.
func ExampleReplaySource() {
	arrivals := map[uint64]time.Duration{1: 120, 2: 225, 3: 318, 4: 440, 5: 522, 6: 630, 8: 835, 9: 990, 10: 1021}
	sp, err := trace.NewSpool("")
	if err != nil {
		panic(err)
	}
	defer sp.Close()
	for s := uint64(1); s <= 10; s++ {
		if a, ok := arrivals[s]; ok {
			if err := sp.Add(detector.Heartbeat{Seq: s, HasSeq: true,
				Sent: time.Duration(s) * 100 * time.Millisecond, HasSent: true, Arrival: a * time.Millisecond}); err != nil {
				panic(err)
			}
		}
	}
	if err := sp.Finish(); err != nil {
		panic(err)
	}
	d, err := chen.New(chen.Config{
		Estimator: chen.EstimatorConfig{Interval: 100 * time.Millisecond, WindowSize: 3},
		Margin:    new(30 * time.Millisecond),
	})
	if err != nil {
		panic(err)
	}
	res, err := qos.ReplaySource(d, sp, qos.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d heartbeats, mistakes %d, TD mean %v, p99 %v\n", sp.Len(), res.Mistakes,
		res.TD.Mean.Round(time.Microsecond), res.TD.P99.Round(time.Microsecond))
	// Output:
	// 9 heartbeats, mistakes 2, TD mean 163.619ms, p99 181.667ms
}

// Decide compares two fixed timeouts at the setting where each makes at
// most one mistake a minute, not at the points of their sweep grids.
func ExampleDecide() {
	var hbs []detector.Heartbeat
	for i := range 6000 { // 10 min, Δ = 100 ms, a heartbeat 30-210 ms late every 7 s (those past 100 ms overtaken: 200 ms gaps)
		sent := time.Duration(i+1) * 100 * time.Millisecond
		d := 20 * time.Millisecond
		if i%70 == 0 {
			d += time.Duration(i/70%7+1) * 30 * time.Millisecond
		}
		hbs = append(hbs, detector.Heartbeat{Seq: uint64(i), HasSeq: true, Sent: sent, HasSent: true, Arrival: sent + d})
	}
	slices.SortStableFunc(hbs, func(x, y detector.Heartbeat) int { return cmp.Compare(x.Arrival, y.Arrival) })
	coarse, _ := qos.DurationRange(100*time.Millisecond, 1000*time.Millisecond, 10, true)
	fine, _ := qos.DurationRange(200*time.Millisecond, 400*time.Millisecond, 41, false)
	a, b := qos.FixedFamily(coarse), qos.FixedFamily(fine)
	b.Name = "fixed-fine"
	v, err := qos.Decide(qos.Stream{Name: "p", Heartbeats: hbs}, []qos.Family{a, b}, nil,
		qos.Targets{MaxMRPerSecond: 1.0 / 60}, qos.DecideConfig{Holdout: -1})
	if err != nil {
		panic(err)
	}
	for _, op := range v.Ops {
		fmt.Println(op.Family, op.Setting(op.Point.Value), op.Point.Mistakes, "mistakes")
	}
	fmt.Println("equivalent:", v.Rivals[0].Equivalent)
	// Output:
	// fixed timeout=200ms 0 mistakes
	// fixed-fine timeout=200ms 0 mistakes
	// equivalent: true
}
