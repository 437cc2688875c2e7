package report

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos/internal/qostest"
)

// BenchmarkStreamViewSpooled is a stream's page section without a table
// (its facts, inter-arrival histogram and loss bursts) for a spooled
// stream of one million heartbeats, Δ = 10 ms with jitter, 1 % lost and
// a few reordered.
func BenchmarkStreamViewSpooled(b *testing.B) {
	s, _ := benchSpooledStream(b)
	benchStreamView(b, s)
}

// BenchmarkStreamViewSpooledSummary is BenchmarkStreamViewSpooled with
// the stream's Summary given (as fdreplay takes it while loading): one
// read of the spool instead of two.
func BenchmarkStreamViewSpooledSummary(b *testing.B) {
	s, hbs := benchSpooledStream(b)
	var z Summarizer
	for _, hb := range hbs {
		z.Add(hb)
	}
	sum := z.Summary()
	s.Summary = &sum
	benchStreamView(b, s)
}

// benchSpooledStream returns the benchmarks' spooled stream and its
// heartbeats.
func benchSpooledStream(b *testing.B) (Stream, []detector.Heartbeat) {
	r := rand.New(rand.NewPCG(1, 2))
	var hbs []detector.Heartbeat
	for s := uint64(1); s <= 1_000_000; s++ {
		if r.Float64() < 0.01 {
			continue
		}
		at := time.Duration(s)*10*time.Millisecond + time.Duration(r.IntN(int(2*time.Millisecond)))
		hbs = append(hbs, detector.Heartbeat{Seq: s, HasSeq: true, Arrival: at})
	}
	for i := 100; i+1 < len(hbs); i += 10_000 {
		hbs[i].Seq, hbs[i+1].Seq = hbs[i+1].Seq, hbs[i].Seq
	}
	return Stream{Title: "bench", Source: qostest.Spooled(b, hbs), Interval: 10 * time.Millisecond}, hbs
}

// benchStreamView builds s's section, checking that it has a histogram
// and loss bursts.
func benchStreamView(b *testing.B, s Stream) {
	b.ReportAllocs()
	for b.Loop() {
		if v := buildStreamView(0, s); v.Hist == "" || v.Bursts == nil {
			b.Fatal("no histogram or bursts")
		}
	}
}

// BenchmarkSummarizer is a Summarizer over the benchmarks' stream in
// memory: the work that BenchmarkStreamViewSpooledSummary leaves to the
// caller's read.
func BenchmarkSummarizer(b *testing.B) {
	_, hbs := benchSpooledStream(b)
	b.ReportAllocs()
	for b.Loop() {
		var z Summarizer
		for _, hb := range hbs {
			z.Add(hb)
		}
		if s := z.Summary(); s.bursts == nil {
			b.Fatal("no bursts")
		}
	}
}
