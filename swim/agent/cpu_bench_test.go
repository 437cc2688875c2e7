//go:build unix

package agent

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
)

// processCPU is the CPU time (user and system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGroupPeriod runs a steady group of 8 agents on loopback with
// the default protocol timing (1 s periods, plain packets, as
// bench/memberlist runs them) and measures one protocol period per
// iteration: the process's CPU time per member per second of wall time
// (cpu-ms/member/s, the CPU column of bench/memberlist) and the
// allocations of all 8 members in one period (allocs/op, B/op). The
// iteration's ns/op is the period itself. Sub-benchmarks set the agent's
// TickInterval: 50ms, the former default, against the default; and
// probes=sync puts every member on one probe grid (swim.Config.SyncProbes,
// the behaviour before the staggered first probe), so that the ratios come
// from one run:
//
//	go test ./swim/agent -run '^$' -bench GroupPeriod -benchtime 10x -benchmem
func BenchmarkGroupPeriod(b *testing.B) {
	const n = 8
	type variant struct {
		tick time.Duration
		sync bool // swim.Config.SyncProbes: every member probes on one grid
	}
	for _, v := range []variant{{50 * time.Millisecond, false}, {0, false}, {0, true}} {
		name := "tick=" + v.tick.String()
		if v.tick == 0 {
			name = "tick=default"
		}
		if v.sync {
			name += "/probes=sync"
		}
		b.Run(name, func(b *testing.B) {
			as := group(b, n, Config{Plain: true, TickInterval: v.tick,
				Protocol: swim.Config{ProbeInterval: time.Second, ProbeTimeout: 500 * time.Millisecond, SyncProbes: v.sync}})
			// As bench/memberlist does: let the join announcements of the
			// group that just formed drain first.
			time.Sleep(2 * time.Second)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, t0 := processCPU(b), time.Now()
			for b.Loop() {
				time.Sleep(time.Second)
			}
			cpu, wall := processCPU(b)-cpu0, time.Since(t0)
			b.ReportMetric(float64(cpu)/1e6/n/wall.Seconds(), "cpu-ms/member/s")
			b.StopTimer()
			for _, a := range as {
				if s := a.Stats(); s.DecodeErrors+s.Rejected+s.SendErrors > 0 {
					b.Fatalf("%s: %s", a.Self().ID, fmt.Sprint(s))
				}
			}
		})
	}
}
