//go:build experiment

package monitor_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/lateness"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/phi"
	"github.com/stretchr/testify/require"
)

// TestHostLatenessLoopback is the experiment of docs/experiments.md, “Host
// lateness on a loaded loopback host”: `fdbeat send` at Δ = 100 ms on
// loopback for FDKIT_EXPERIMENT_DURATION (default 5m), received by monitors
// that share one lateness meter fed by their own 10 ms sweep loop (as fdbeat
// recv's), each detector with and without the host-lateness margin; the
// sender then stops (a crash), and the last suspicion of each monitor is
// that crash. Run it with
//
//	go test -tags experiment -run TestHostLatenessLoopback -v -timeout 60m ./monitor
func TestHostLatenessLoopback(t *testing.T) {
	dur := 5 * time.Minute
	if v := os.Getenv("FDKIT_EXPERIMENT_DURATION"); v != "" {
		var err error
		dur, err = time.ParseDuration(v)
		require.NoError(t, err, "FDKIT_EXPERIMENT_DURATION")
	}
	bin := filepath.Join(t.TempDir(), "fdbeat")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/fdbeat").CombinedOutput()
	require.NoError(t, err, "%s", out)

	type mon struct {
		name      string
		m         *monitor.Monitor
		n         int
		lastFound time.Duration
	}
	type fac struct {
		name string
		f    monitor.Factory
	}
	var facs []fac
	for _, th := range []float64{8, 12} {
		for _, fl := range []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond} {
			cfg := phi.NormalConfig{WindowSize: 100, Threshold: th, BootstrapInterval: 100 * time.Millisecond}
			name := fmt.Sprintf("phi-%g, σ floor μ/100", th)
			if fl > 0 {
				cfg.MinStdDev = new(fl)
				name = fmt.Sprintf("phi-%g, σ floor %v", th, fl)
			}
			facs = append(facs, fac{name, func() (detector.Detector, error) { return phi.NewNormal(cfg) }})
		}
	}
	for _, to := range []time.Duration{300 * time.Millisecond, time.Second} {
		facs = append(facs, fac{"timeout-" + to.String(), func() (detector.Detector, error) {
			return detector.NewFixed(detector.FixedConfig{Timeout: new(to)})
		}})
	}
	clk := monitor.NewMonotonic()
	meter, err := lateness.New(lateness.Config{})
	require.NoError(t, err)
	var mu sync.Mutex
	var mons []*mon
	for _, f := range facs {
		for _, ignore := range []bool{true, false} {
			mm := &mon{name: f.name + map[bool]string{true: " | no margin", false: " | margin"}[ignore]}
			m, err := monitor.New(monitor.Config{Factory: f.f, Clock: clk, Lateness: meter, IgnoreHostLateness: ignore,
				OnTransition: func(tr monitor.Transition) {
					if tr.New == monitor.Suspected {
						mu.Lock()
						mm.n++
						mm.lastFound = tr.Found
						mu.Unlock()
					}
				}})
			require.NoError(t, err)
			mm.m = m
			mons = append(mons, mm)
		}
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	send := exec.Command(bin, "send", "--duration", dur.String(), "--log-level", "error", conn.LocalAddr().String())
	require.NoError(t, send.Start())
	ctx, cancel := context.WithTimeout(context.Background(), dur+4*time.Second)
	defer cancel()
	var eval sync.Mutex
	var boundMax, boundSum time.Duration
	var boundN int
	var wg sync.WaitGroup
	wg.Go(func() {
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		last := clk.Now()
		meter.ReadRuntime(last)
		for {
			select {
			case <-ctx.Done():
				return
			case due := <-tk.C:
				now := clk.Now()
				meter.TickSince(due, now)
				if now-last >= time.Second {
					meter.ReadRuntime(now)
					last = now
				}
				b := meter.Bound()
				boundMax, boundSum, boundN = max(boundMax, b), boundSum+b, boundN+1
				eval.Lock()
				for _, m := range mons {
					m.m.Sweep()
				}
				eval.Unlock()
			}
		}
	})
	wg.Go(func() { <-ctx.Done(); conn.Close() })
	buf := make([]byte, 2048)
	var lastArr time.Duration
	for {
		_, from, err := conn.ReadFrom(buf)
		if err != nil {
			break
		}
		now := clk.Now()
		lastArr = now
		eval.Lock()
		for _, m := range mons {
			_ = m.m.HeartbeatAt(from.String(), monitor.Beat{}, now)
		}
		eval.Unlock()
	}
	wg.Wait()
	_ = send.Wait()
	st := meter.Stats()
	tm := st.Sources[lateness.Timer]
	var b strings.Builder
	fmt.Fprintf(&b, "lateness: sweep timer n=%d mean=%v max=%v; gc pauses n=%d max=%v; other pauses max=%v; scheduling n=%d max=%v; bound mean=%v max=%v\n",
		tm.Count, tm.Total/time.Duration(max(1, tm.Count)), tm.Max, st.Sources[lateness.GCPause].Count, st.Sources[lateness.GCPause].Max,
		st.Sources[lateness.OtherPause].Max, st.Sources[lateness.Scheduling].Count, st.Sources[lateness.Scheduling].Max,
		boundSum/time.Duration(max(1, boundN)), boundMax)
	fmt.Fprintln(&b, "| detector | margin | false suspicions | crash found after the last heartbeat | excused |")
	fmt.Fprintln(&b, "|---|---|---|---|---|")
	for _, m := range mons {
		name, margin, _ := strings.Cut(m.name, " | ")
		falses, found := m.n, "not found"
		if m.n > 0 && m.lastFound > lastArr {
			falses, found = m.n-1, (m.lastFound - lastArr).Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %d |\n", name, margin, falses, found, m.m.Excused())
	}
	t.Log("\n" + b.String())
}
