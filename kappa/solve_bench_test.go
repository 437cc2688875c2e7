package kappa_test

import (
	"math"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/kappa"
)

// BenchmarkFreshnessPointAt solves for τ at 40 thresholds from 0.5 to 16
// (log-spaced, as fdreplay's default κ sweep) on the standard benchmark
// stream's state: the per-heartbeat cost of a κ sweep.
func BenchmarkFreshnessPointAt(b *testing.B) {
	d, err := kappa.New(kappa.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		a := time.Duration(i)*100*time.Millisecond + time.Duration((i*7919)%11-5)*time.Millisecond
		d.Observe(detector.Heartbeat{Seq: uint64(i), HasSeq: true, Arrival: a})
	}
	ks := make([]float64, 40)
	for i := range ks {
		ks[i] = 0.5 * math.Pow(32, float64(i)/39)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range ks {
			tau, _ := d.FreshnessPointAt(k)
			sink += tau
		}
	}
}

var sink time.Duration
