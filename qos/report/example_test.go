package report_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/report"
	"github.com/fdkit/fdkit/trace"
)

// A one-stream page: fixed timeouts swept over a minute of heartbeats
// (Δ = 100 ms, every 37th lost, two in a row from heartbeat 300) and the
// tuner's choice and the verdict for TD ≤ 500 ms with at most one mistake a
// minute.
func ExampleWrite() {
	var recs []trace.Record
	var hbs []detector.Heartbeat
	for k := 1; k <= 600; k++ {
		if k%37 == 0 || k == 301 {
			continue
		}
		r := trace.Record{Sender: "p", Seq: uint64(k), HasSeq: true, Sent: time.Duration(k) * 100 * time.Millisecond, HasSent: true, HasArrival: true}
		r.Arrival = r.Sent + 20*time.Millisecond
		recs, hbs = append(recs, r), append(hbs, r.Heartbeat())
	}
	timeouts := []time.Duration{150 * time.Millisecond, 250 * time.Millisecond, 350 * time.Millisecond}
	curves, err := qos.Sweep([]qos.Stream{{Name: "p", Heartbeats: hbs}}, []qos.Family{qos.FixedFamily(timeouts)}, qos.SweepConfig{})
	if err != nil {
		panic(err)
	}
	targets := qos.Targets{MaxTD: 500 * time.Millisecond, MaxMRPerSecond: 1.0 / 60}
	choices, err := qos.Tune(curves, targets)
	if err != nil {
		panic(err)
	}
	verdict, err := qos.Decide(qos.Stream{Name: "p", Heartbeats: hbs}, []qos.Family{qos.FixedFamily(timeouts)}, curves, targets, qos.DecideConfig{})
	if err != nil {
		panic(err)
	}
	var page strings.Builder
	err = report.Write(&page, report.Page{Title: "generated", Streams: []report.Stream{{
		Name: "p", Title: "generated, sender p", Heartbeats: hbs, Stats: trace.Summarize(recs),
		Interval: 100 * time.Millisecond, Curves: curves, Targets: targets, Choices: choices, Verdict: &verdict,
	}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(page.String(), "<!DOCTYPE html>"), strings.Contains(page.String(), "sender p: best fixed"))
	// Output: true true
}
