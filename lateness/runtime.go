package lateness

import (
	"context"
	"fmt"
	"math"
	"runtime/metrics"
	"time"
)

// runtimeMetrics are the Go runtime histograms ReadRuntime reads, by Source.
var runtimeMetrics = map[Source]string{
	GCPause:    "/sched/pauses/total/gc:seconds",
	OtherPause: "/sched/pauses/total/other:seconds",
	Scheduling: "/sched/latencies:seconds",
}

// runtimeReader keeps the bucket counts of the previous read.
type runtimeReader struct {
	samples []metrics.Sample
	srcs    []Source
	prev    [][]uint64
}

func newRuntimeReader() *runtimeReader {
	r := &runtimeReader{}
	for _, src := range []Source{GCPause, OtherPause, Scheduling} {
		r.samples = append(r.samples, metrics.Sample{Name: runtimeMetrics[src]})
		r.srcs = append(r.srcs, src)
	}
	r.prev = make([][]uint64, len(r.samples))
	return r
}

// ReadRuntime reads the Go runtime's histograms of stop-the-world pauses
// (GCPause, OtherPause) and of goroutine scheduling latency (Scheduling) and
// records, for each that has new samples since the previous call, the upper
// edge of the highest bucket that gained one: the longest such delay since
// then, rounded up to the histogram's resolution (a few per cent). The first
// call only takes the counts as they are, so that delays from before it (the
// process's start) do not count. It costs a few microseconds; Probe calls it
// once a second.
func (m *Meter) ReadRuntime(now time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rt == nil {
		m.rt = newRuntimeReader()
	}
	r := m.rt
	metrics.Read(r.samples)
	for i, s := range r.samples {
		if s.Value.Kind() != metrics.KindFloat64Histogram {
			continue // not in this Go version
		}
		h := s.Value.Float64Histogram()
		prev := r.prev[i]
		if m.started && len(prev) == len(h.Counts) {
			for b := len(h.Counts) - 1; b >= 0; b-- {
				if h.Counts[b] > prev[b] {
					m.observe(now, edge(h.Buckets, b), r.srcs[i])
					break
				}
			}
		}
		r.prev[i] = append(prev[:0], h.Counts...)
	}
	m.started = true
}

// edge returns the upper edge of bucket b in seconds as a Duration, or its
// lower edge when the upper one is infinite.
func edge(buckets []float64, b int) time.Duration {
	e := buckets[b+1]
	if math.IsInf(e, 1) {
		e = buckets[b]
	}
	if !(e > 0) {
		return 0
	}
	if e >= float64(math.MaxInt64)/1e9 {
		return math.MaxInt64
	}
	return time.Duration(math.Ceil(e * 1e9))
}

// Probe feeds m until ctx is done, then returns nil: a ticker every `every`
// records how late each tick ran (Source Timer, measured on the real clock
// from the instant the tick was due), and ReadRuntime runs about once a
// second. now gives the instants of the window (a monitor's Clock.Now; nil
// means the time since Probe started). It returns an error at once for a
// non-positive every. Run it in a goroutine of its own: go m.Probe(ctx,
// 10*time.Millisecond, nil).
func (m *Meter) Probe(ctx context.Context, every time.Duration, now func() time.Duration) error {
	if every <= 0 {
		return fmt.Errorf("lateness: probe interval %v must be positive", every)
	}
	if now == nil {
		start := time.Now()
		now = func() time.Duration { return time.Since(start) }
	}
	t := time.NewTicker(every)
	defer t.Stop()
	m.ReadRuntime(now())
	lastRead := now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case due := <-t.C:
			m.TickSince(due, now())
			if n := now(); n-lastRead >= time.Second {
				m.ReadRuntime(n)
				lastRead = n
			}
		}
	}
}

// TickSince records a tick of a time.Ticker or time.Timer that was due at
// the wall-clock instant due (the value its channel delivered) and is
// handled now, at the window instant now: a lateness of time.Since(due)
// (Source Timer). It is Tick for a caller whose ticks come from the time
// package, as Probe's and monitor.Monitor.Run's do.
func (m *Meter) TickSince(due time.Time, now time.Duration) {
	m.Observe(now, time.Since(due), Timer)
}
