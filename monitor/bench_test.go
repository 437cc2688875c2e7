package monitor_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
)

const benchPeers = 100_000

func benchMonitor(b *testing.B) (*monitor.Monitor, []string) {
	b.Helper()
	m, err := monitor.New(monitor.Config{Factory: fixedFactory(time.Second)})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, benchPeers)
	for i := range names {
		names[i] = fmt.Sprintf("10.0.%d.%d:7946", i/256, i%256)
		if err := m.Heartbeat(names[i], monitor.Beat{}); err != nil {
			b.Fatal(err)
		}
	}
	return m, names
}

// BenchmarkHeartbeat: heartbeats to 100,000 peers from all cores
// (fixed-timeout detectors, monotonic clock). Reports heartbeats/s.
func BenchmarkHeartbeat(b *testing.B) {
	m, names := benchMonitor(b)
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(g.Add(1)) * 7919
		var seq uint64
		for pb.Next() {
			i++
			seq++
			if err := m.Heartbeat(names[i%benchPeers], monitor.Beat{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}

// BenchmarkStatus: status queries on 100,000 peers from all cores.
func BenchmarkStatus(b *testing.B) {
	m, names := benchMonitor(b)
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(g.Add(1)) * 7919
		for pb.Next() {
			i++
			m.Status(names[i%benchPeers])
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}

// BenchmarkMixed: nine heartbeats for every State query (level, τ, status).
func BenchmarkMixed(b *testing.B) {
	m, names := benchMonitor(b)
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(g.Add(1)) * 7919
		for pb.Next() {
			i++
			n := names[i%benchPeers]
			if i%10 == 0 {
				m.State(n)
			} else {
				_ = m.Heartbeat(n, monitor.Beat{})
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkSweep: one Sweep over 100,000 peers.
func BenchmarkSweep(b *testing.B) {
	m, _ := benchMonitor(b)
	b.ReportAllocs()
	for b.Loop() {
		m.Sweep()
	}
}

// BenchmarkHandleHeartbeat: like BenchmarkHeartbeat through per-peer
// Handles (no map lookup).
func BenchmarkHandleHeartbeat(b *testing.B) {
	m, names := benchMonitor(b)
	hs := make([]*monitor.Handle, len(names))
	for i, n := range names {
		hs[i], _ = m.Handle(n, 0)
	}
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(g.Add(1)) * 7919
		for pb.Next() {
			i++
			if err := hs[i%benchPeers].Heartbeat(monitor.Beat{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}

// BenchmarkHeartbeatPhi: BenchmarkHeartbeat with normal-model φ detectors
// (window 100) instead of fixed timeouts.
func BenchmarkHeartbeatPhi(b *testing.B) {
	m, err := monitor.New(monitor.Config{Factory: func() (detector.Detector, error) {
		return phi.NewNormal(phi.NormalConfig{WindowSize: 100, BootstrapInterval: 100 * time.Millisecond})
	}})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, benchPeers)
	for i := range names {
		names[i] = fmt.Sprintf("10.0.%d.%d:7946", i/256, i%256)
		if err := m.Heartbeat(names[i], monitor.Beat{}); err != nil {
			b.Fatal(err)
		}
	}
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(g.Add(1)) * 7919
		for pb.Next() {
			i++
			if err := m.Heartbeat(names[i%benchPeers], monitor.Beat{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}

// BenchmarkHeartbeatRandom: BenchmarkHeartbeat with peers picked at random
// (per-goroutine PCG), as heartbeats from many peers arrive, instead of in
// order: more cache misses.
func BenchmarkHeartbeatRandom(b *testing.B) {
	m, names := benchMonitor(b)
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(g.Add(1), 7))
		for pb.Next() {
			if err := m.Heartbeat(names[rng.IntN(benchPeers)], monitor.Beat{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}

// BenchmarkHandleHeartbeatRandom: random peers through Handles.
func BenchmarkHandleHeartbeatRandom(b *testing.B) {
	m, names := benchMonitor(b)
	hs := make([]*monitor.Handle, len(names))
	for i, n := range names {
		hs[i], _ = m.Handle(n, 0)
	}
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(g.Add(1), 7))
		for pb.Next() {
			if err := hs[rng.IntN(benchPeers)].Heartbeat(monitor.Beat{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}
