// Package qostest holds the streams and helpers that the tests of qos's
// drawing packages (qos/figure, qos/report) share: a generated stream with
// jitter and loss, a stream spooled to disk, durations in milliseconds.
package qostest

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/trace"
)

// Ms returns x milliseconds.
func Ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// Durations returns the durations of ms milliseconds.
func Durations(ms ...float64) []time.Duration {
	d := make([]time.Duration, len(ms))
	for i, v := range ms {
		d[i] = Ms(v)
	}
	return d
}

// JitterLoss generates 150 s of sender's heartbeats (Δ = 100 ms, normal
// one-way delay of mean 40 ms and s.d. 15 ms, 5 % Bernoulli loss, seed 1)
// and returns the records and the heartbeats they carry.
func JitterLoss(tb testing.TB, sender string) ([]trace.Record, []detector.Heartbeat) {
	tb.Helper()
	recs, err := trace.Generate(trace.GenConfig{Sender: sender, Duration: 150 * time.Second,
		Delay: trace.Delay{Dist: trace.DelayNormal, Mean: Ms(40), SD: Ms(15)},
		Loss:  trace.Loss{Model: trace.LossBernoulli, P: 0.05}}, trace.NewRand(1))
	if err != nil {
		tb.Fatal(err)
	}
	hbs := make([]detector.Heartbeat, len(recs))
	for i, r := range recs {
		hbs[i] = r.Heartbeat()
	}
	return recs, hbs
}

// Spooled returns hbs written to a trace.Spool in a temporary directory (a
// Source read from disk), closed when the test ends.
func Spooled(tb testing.TB, hbs []detector.Heartbeat) qos.Source {
	tb.Helper()
	sp, err := trace.NewSpool(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sp.Close() })
	for _, hb := range hbs {
		if err := sp.Add(hb); err != nil {
			tb.Fatal(err)
		}
	}
	if err := sp.Finish(); err != nil {
		tb.Fatal(err)
	}
	return sp
}
