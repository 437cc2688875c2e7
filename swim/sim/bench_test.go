package sim

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// BenchmarkSim1000Members1000Periods runs 1,000 members of SWIM + Lifeguard
// + detectors (defaults) for 1,000 protocol periods, failure-free, in the
// simulator. Target: under 30 s per iteration on the project machine.
func BenchmarkSim1000Members1000Periods(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		s, err := New(Config{N: 1000, Seed: 1, StartSpread: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		s.RunUntil(1000 * time.Second)
		var sent int64
		for i := 0; i < s.N(); i++ {
			sent += s.Stats(i).SentMsgs
		}
		b.ReportMetric(float64(sent)/1000/1000, "msgs/member/period")
	}
}

var _ = swim.Config{}
