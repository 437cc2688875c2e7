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

// A one-stream page: fixed timeouts swept over a generated minute and the
// tuner's choice for TD ≤ 500 ms with at most one mistake a minute.
func ExampleWrite() {
	recs, err := trace.Generate(trace.GenConfig{Loss: trace.Loss{Model: trace.LossBernoulli, P: 0.05}}, trace.NewRand(1))
	if err != nil {
		panic(err)
	}
	hbs := make([]detector.Heartbeat, len(recs))
	for i, r := range recs {
		hbs[i] = r.Heartbeat()
	}
	timeouts := []time.Duration{150 * time.Millisecond, 250 * time.Millisecond, 450 * time.Millisecond}
	curves, err := qos.Sweep([]qos.Stream{{Name: "p", Heartbeats: hbs}}, []qos.Family{qos.FixedFamily(timeouts)}, qos.SweepOptions{})
	if err != nil {
		panic(err)
	}
	targets := qos.Targets{MaxTD: 500 * time.Millisecond, MaxMRPerSecond: 1.0 / 60}
	choices, err := qos.Tune(curves, targets)
	if err != nil {
		panic(err)
	}
	var page strings.Builder
	err = report.Write(&page, report.Page{Title: "generated", Streams: []report.Stream{{
		Name: "p", Title: "generated, sender p", Heartbeats: hbs, Stats: trace.Summarize(recs),
		Interval: 100 * time.Millisecond, Curves: curves, Targets: targets, Choices: choices,
	}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(page.String(), "<!DOCTYPE html>"), strings.Contains(page.String(), "Best for these targets: fixed"))
	// Output: true true
}
