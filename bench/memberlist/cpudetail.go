package main

import (
	"fmt"
	"runtime/metrics"
	"time"
)

// cpuTime returns the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	user, sys := cpuSplit()
	return user + sys
}

// cpuDetail is one run's CPU split, per member per second of the window
// (milliseconds), to tell a library's own work from the Go runtime's and
// the kernel's: User and Sys from getrusage, GC the runtime's estimate of
// its collector's CPU (runtime/metrics), GCs the cycles completed in the
// window, Goroutines the count at its end.
type cpuDetail struct {
	User, Sys, GC float64
	GCs           uint64
	Goroutines    uint64
}

func (d cpuDetail) String() string {
	return fmt.Sprintf("user %.2f sys %.2f gc %.2f ms/member/s, %d GC cycles, %d goroutines", d.User, d.Sys, d.GC, d.GCs, d.Goroutines)
}

// cpuSample is the raw counters behind a cpuDetail.
type cpuSample struct {
	user, sys  time.Duration
	gc         float64 // seconds
	gcs, gorts uint64
}

var detailMetrics = []string{"/cpu/classes/gc/total:cpu-seconds", "/gc/cycles/total:gc-cycles", "/sched/goroutines:goroutines"}

func readCPUDetail() cpuSample {
	user, sys := cpuSplit()
	s := make([]metrics.Sample, len(detailMetrics))
	for i, n := range detailMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	c := cpuSample{user: user, sys: sys}
	if s[0].Value.Kind() == metrics.KindFloat64 {
		c.gc = s[0].Value.Float64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		c.gcs = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindUint64 {
		c.gorts = s[2].Value.Uint64()
	}
	return c
}

func (c cpuSample) since(c0 cpuSample, n int, elapsed time.Duration) cpuDetail {
	per := func(d time.Duration) float64 {
		return float64(d) / float64(time.Millisecond) / float64(n) / elapsed.Seconds()
	}
	return cpuDetail{
		User: per(c.user - c0.user), Sys: per(c.sys - c0.sys),
		GC:  (c.gc - c0.gc) * 1000 / float64(n) / elapsed.Seconds(),
		GCs: c.gcs - c0.gcs, Goroutines: c.gorts,
	}
}
