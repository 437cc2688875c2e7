package monitor_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
)

const benchPeers = 100_000

// benchMonitor returns a monitor whose 100,000 peers have each had one
// heartbeat, with detectors from factory (fixed 1 s timeouts when nil).
func benchMonitor(b *testing.B, factory monitor.Factory) (*monitor.Monitor, []string) {
	b.Helper()
	return benchMonitorConfig(b, monitor.Config{Factory: factory})
}

// benchMonitorConfig is benchMonitor with the whole configuration given.
func benchMonitorConfig(b *testing.B, cfg monitor.Config) (*monitor.Monitor, []string) {
	b.Helper()
	if cfg.Factory == nil {
		cfg.Factory = fixedFactory(time.Second)
	}
	m, err := monitor.New(cfg)
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

// appendBenchName appends the name benchMonitor gives peer i.
func appendBenchName(buf []byte, i int) []byte {
	buf = append(buf, "10.0."...)
	buf = strconv.AppendInt(buf, int64(i/256), 10)
	buf = append(buf, '.')
	buf = strconv.AppendInt(buf, int64(i%256), 10)
	return append(buf, ":7946"...)
}

// benchHandles returns a Handle for each of names.
func benchHandles(b *testing.B, m *monitor.Monitor, names []string) []*monitor.Handle {
	b.Helper()
	hs := make([]*monitor.Handle, len(names))
	for i, n := range names {
		h, err := m.Handle(n, 0)
		if err != nil {
			b.Fatal(err)
		}
		hs[i] = h
	}
	return hs
}

// benchParallel runs op from all cores on peer indices in [0, benchPeers):
// each goroutine walks the peers in order from its own start, or, when
// random is set, picks them with its own PCG (more cache misses). It reports
// allocations and the rate in unit (per second). The first error from op
// fails the benchmark.
func benchParallel(b *testing.B, unit string, random bool, op func(peer int) error) {
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := g.Add(1)
		i := int(id) * 7919
		var rng *rand.Rand
		if random {
			rng = rand.New(rand.NewPCG(id, 7))
		}
		for pb.Next() {
			var p int
			if random {
				p = rng.IntN(benchPeers)
			} else {
				i++
				p = i % benchPeers
			}
			if err := op(p); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

// BenchmarkHeartbeat: heartbeats to 100,000 peers from all cores
// (fixed-timeout detectors, monotonic clock). Reports heartbeats/s.
func BenchmarkHeartbeat(b *testing.B) {
	m, names := benchMonitor(b, nil)
	benchParallel(b, "heartbeats/s", false, func(p int) error {
		return m.Heartbeat(names[p], monitor.Beat{})
	})
}

// BenchmarkStatus: status queries on 100,000 peers from all cores.
func BenchmarkStatus(b *testing.B) {
	m, names := benchMonitor(b, nil)
	benchParallel(b, "queries/s", false, func(p int) error {
		m.Status(names[p])
		return nil
	})
}

// BenchmarkMixed: nine heartbeats for every State query (level, τ, status).
func BenchmarkMixed(b *testing.B) {
	m, names := benchMonitor(b, nil)
	benchParallel(b, "ops/s", false, func(p int) error {
		if p%10 == 0 {
			m.State(names[p])
			return nil
		}
		_ = m.Heartbeat(names[p], monitor.Beat{})
		return nil
	})
}

// BenchmarkSweep: one Sweep over 100,000 peers.
func BenchmarkSweep(b *testing.B) {
	m, _ := benchMonitor(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		m.Sweep()
	}
}

// BenchmarkHandleHeartbeat: like BenchmarkHeartbeat through per-peer
// Handles (no map lookup).
func BenchmarkHandleHeartbeat(b *testing.B) {
	m, names := benchMonitor(b, nil)
	hs := benchHandles(b, m, names)
	benchParallel(b, "heartbeats/s", false, func(p int) error {
		return hs[p].Heartbeat(monitor.Beat{})
	})
}

// BenchmarkHeartbeatPhi: BenchmarkHeartbeat with normal-model φ detectors
// (window 100) instead of fixed timeouts.
func BenchmarkHeartbeatPhi(b *testing.B) {
	m, names := benchMonitor(b, func() (detector.Detector, error) {
		return phi.NewNormal(phi.NormalConfig{WindowSize: 100, BootstrapInterval: new(100 * time.Millisecond)})
	})
	benchParallel(b, "heartbeats/s", false, func(p int) error {
		return m.Heartbeat(names[p], monitor.Beat{})
	})
}

// BenchmarkHeartbeatRandom: BenchmarkHeartbeat with peers picked at random
// (per-goroutine PCG), as heartbeats from many peers arrive, instead of in
// order: more cache misses.
func BenchmarkHeartbeatRandom(b *testing.B) {
	m, names := benchMonitor(b, nil)
	benchParallel(b, "heartbeats/s", true, func(p int) error {
		return m.Heartbeat(names[p], monitor.Beat{})
	})
}

// BenchmarkHandleHeartbeatRandom: random peers through Handles.
func BenchmarkHandleHeartbeatRandom(b *testing.B) {
	m, names := benchMonitor(b, nil)
	hs := benchHandles(b, m, names)
	benchParallel(b, "heartbeats/s", true, func(p int) error {
		return hs[p].Heartbeat(monitor.Beat{})
	})
}

// BenchmarkHeartbeatRandomDecoded: BenchmarkHeartbeatRandom with each name
// written into the goroutine's own buffer, as a receiver decodes it from a
// packet, instead of read from a slice of 100,000 strings: the benchmark
// touches no memory of its own per heartbeat, and the monitor compares the
// name's bytes with the stored name's (BenchmarkHeartbeatRandom passes the
// stored strings themselves, which compare equal by pointer). The name is
// passed without a copy (the monitor copies a new peer's name; no peer is
// created during the run, checked at its end).
func BenchmarkHeartbeatRandomDecoded(b *testing.B) {
	m, names := benchMonitor(b, nil)
	for _, i := range []int{0, 255, 256, benchPeers - 1} {
		if got := string(appendBenchName(nil, i)); got != names[i] {
			b.Fatalf("appendBenchName(%d) = %q, want %q", i, got, names[i])
		}
	}
	benchDecoded(b, m, func() func(string) error {
		return func(name string) error { return m.Heartbeat(name, monitor.Beat{}) }
	})
}

// BenchmarkHeartbeatAtBatched: BenchmarkHeartbeatRandomDecoded as a
// receive loop that reads the clock once per batch of 32 datagrams (as one
// recvmmsg call returns them) and passes that arrival to HeartbeatAt. The
// by-name Heartbeat reads the clock under each peer's lock; that read
// orders the processor's memory accesses and keeps it from overlapping one
// heartbeat's cache misses with the next one's.
func BenchmarkHeartbeatAtBatched(b *testing.B) {
	clock := monitor.NewMonotonic()
	m, _ := benchMonitorConfig(b, monitor.Config{Clock: clock})
	const batch = 32
	benchDecoded(b, m, func() func(string) error {
		var now time.Duration
		i := 0
		return func(name string) error {
			if i%batch == 0 {
				now = clock.Now()
			}
			i++
			return m.HeartbeatAt(name, monitor.Beat{}, now)
		}
	})
}

// benchDecoded runs, from all cores, heartbeats for random peers whose
// names each goroutine writes into its own buffer, as a receiver decodes
// them from packets, and passes to the goroutine's own beat (made by
// newBeat) without a copy. It reports heartbeats/s and allocations, and
// fails if a peer was created: a decoded name differed from the stored ones.
func benchDecoded(b *testing.B, m *monitor.Monitor, newBeat func() func(name string) error) {
	var g atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(g.Add(1), 7))
		buf := make([]byte, 0, 32)
		beat := newBeat()
		for pb.Next() {
			buf = appendBenchName(buf[:0], rng.IntN(benchPeers))
			if err := beat(unsafe.String(&buf[0], len(buf))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
	if m.Len() != benchPeers {
		b.Fatalf("%d peers after the run, want %d: a decoded name differed from the stored ones", m.Len(), benchPeers)
	}
}

// BenchmarkSweepHostLateness: one Sweep over 100,000 peers (fixed 1 s
// timeouts, heartbeats at 0), side by side: "ignore" (IgnoreHostLateness)
// and "default" (the margin on, nothing measured) at 0.5 s, where no peer is
// overdue; "excusing" at 2 s with a lateness of 5 s measured, where every
// peer is overdue and held back by the margin at every sweep, the most the
// margin costs (one atomic load of the meter's Bound per overdue peer).
func BenchmarkSweepHostLateness(b *testing.B) {
	for _, c := range []struct {
		name   string
		ignore bool
		late   time.Duration
		at     time.Duration
	}{
		{"ignore", true, 0, 500 * time.Millisecond},
		{"default", false, 0, 500 * time.Millisecond},
		{"excusing", false, 5 * time.Second, 2 * time.Second},
	} {
		b.Run(c.name, func(b *testing.B) {
			clk := &monitor.ManualClock{}
			meter, err := lateness.New(lateness.Config{})
			if err != nil {
				b.Fatal(err)
			}
			meter.Observe(0, c.late, lateness.Timer)
			m, names := benchMonitorConfig(b, monitor.Config{Clock: clk, Lateness: meter, IgnoreHostLateness: c.ignore})
			clk.Set(c.at)
			b.ReportAllocs()
			for b.Loop() {
				m.Sweep()
			}
			if st, _ := m.Status(names[0]); st != monitor.Trusted {
				b.Fatalf("%s: a peer is %v", c.name, st)
			}
		})
	}
}
