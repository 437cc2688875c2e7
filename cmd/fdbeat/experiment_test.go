//go:build experiment

package main

// The [Field-vi] experiment (docs/algorithms.md, “Published field
// measurements”) rerun on loopback with fdbeat's user-space impairments: run it
// with scripts/field-vi-loopback.sh (about 4.5 minutes). It writes the recorded
// traces to traces/loopback-*.fdk.gz and prints false suspicions per minute and
// crash detection time per detector and scenario, beside the published figures.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/trace"
	"github.com/olekukonko/tablewriter"
	twopt "github.com/olekukonko/tablewriter/tw"
	"github.com/stretchr/testify/require"
)

type scenario struct {
	name  string
	send  sendConfig
	notes string
	// published figures of docs/algorithms.md, “Published field measurements”
	// per detector: false suspicions per minute and detection time ("" when the
	// source gives none).
	pubFS, pubTD map[string]string
}

func TestFieldViExperiment(t *testing.T) {
	runFor := time.Minute
	if s := os.Getenv("FDBEAT_EXPERIMENT_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err)
		runFor = d
	}
	dir := os.Getenv("FDBEAT_TRACES_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "traces")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// [Field-vi] paused the sender three times within 20-s runs; here the
	// pauses fall in the last 20 s of the run (at −15, −10 and −5 s), so
	// that the crash at the end meets a φ window (100 samples, 10 s) that
	// has learned pauses, as there.
	pauses := []pause{{runFor - 15*time.Second, 600 * time.Millisecond}, {runFor - 10*time.Second, 600 * time.Millisecond}, {runFor - 5*time.Second, 600 * time.Millisecond}}
	if runFor < 20*time.Second {
		pauses = []pause{{runFor / 4, 600 * time.Millisecond}, {runFor / 2, 600 * time.Millisecond}, {3 * runFor / 4, 600 * time.Millisecond}}
	}
	base := sendConfig{Interval: 100 * time.Millisecond, Duration: runFor, DelayDist: "normal", Name: "sender"}
	impaired := base
	impaired.Delay, impaired.Jitter, impaired.Loss = 80*time.Millisecond, 60*time.Millisecond, 0.15
	stable := base
	paused := base
	paused.Pauses = pauses
	pausedImp := impaired
	pausedImp.Pauses = pauses
	scs := []scenario{
		{name: "stable", send: stable,
			pubFS: map[string]string{"timeout-300ms": "0", "timeout-1s": "0", "timeout-3s": "0", "phi-8": "0", "phi-12": "0"},
			pubTD: map[string]string{"timeout-300ms": "T + a few ms", "timeout-1s": "T + a few ms", "timeout-3s": "T + a few ms", "phi-8": "157 ms"}},
		{name: "impaired", send: impaired,
			pubFS: map[string]string{"timeout-300ms": "9", "timeout-1s": "0", "timeout-3s": "0", "phi-12": "0"},
			pubTD: map[string]string{"phi-12": "635 ms"}},
		{name: "pauses", send: paused,
			pubFS: map[string]string{"phi-8": "3 (all 3 pauses)"},
			pubTD: map[string]string{"phi-8": "558 ms"}},
		{name: "pauses-impaired", send: pausedImp,
			pubFS: map[string]string{"phi-8": "0"},
			pubTD: map[string]string{"phi-8": "831 ms"}},
	}
	rc := recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead, TableSenders: defaultTableSenders,
		Interval: 100 * time.Millisecond, Sweep: 5 * time.Millisecond,
		Timeouts: []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second}, Phis: []float64{8, 12}, PhiWindow: 100}

	var b strings.Builder
	tw := tablewriter.NewTable(&b, tablewriter.WithHeaderAutoFormat(twopt.Off))
	tw.Header("scenario", "detector", "false susp./min", "published", "detection time", "published")
	var notes strings.Builder
	for i, sc := range scs {
		sc.send.Seed = uint64(1000 + i)
		c := rc
		c.Out = filepath.Join(dir, "loopback-"+sc.name+".fdk.gz")
		c.Meta = map[string]string{"scenario": "loopback-" + sc.name, "experiment": "field-vi"}
		run := loopback(t, sc.send, c, 3500*time.Millisecond)
		crash := run.send.LastSent
		minutes := runFor.Minutes()
		for _, spec := range run.specs {
			var falseS int
			var detect time.Duration = -1
			ts := run.trans[spec.Name]
			for _, tr := range ts {
				at := run.origin + tr.At
				if tr.New == monitor.Suspected && at <= crash && !tr.WarmingUp {
					falseS++
				}
			}
			if n := len(ts); n > 0 && ts[n-1].New == monitor.Suspected {
				detect = max(0, run.origin+ts[n-1].At-crash)
			}
			td := "not detected"
			if detect >= 0 {
				td = detect.Round(time.Millisecond).String()
			}
			tw.Append(sc.name, spec.Name, fmt.Sprintf("%.1f", float64(falseS)/minutes), orDash(sc.pubFS[spec.Name]),
				td, orDash(sc.pubTD[spec.Name]))
		}
		stalls, worst, p99, dmax := senderStalls(t, c.Out, sc.send, time.Duration(run.send.Incarnation))
		fmt.Fprintf(&notes, "%s: sent %d, dropped %d, received %d; sender stalls (send gap > 1.5Δ outside the configured pauses): %d, longest %v; one-way delay A−σ p99 %v, max %v; load average %s\n",
			sc.name, run.send.Sent, run.send.Dropped, run.recv.Packets, stalls, worst.Round(time.Millisecond),
			p99.Round(100*time.Microsecond), dmax.Round(100*time.Microsecond), loadAvg())
	}
	require.NoError(t, tw.Render())
	fmt.Printf("\n[Field-vi] on loopback, %v per scenario, Δ = 100 ms, φ window 100:\n%s%s", runFor, b.String(), notes.String())
}

// senderStalls counts consecutive heartbeats (s, s+1) both received whose
// send instants are more than 1.5Δ apart without a configured pause between
// them: the sender was starved by the host, not impaired on purpose. It also
// returns the p99 and maximum one-way delay A − σ (same host clock), which
// on the unimpaired scenarios is the receiver's scheduling delay.
func senderStalls(t *testing.T, path string, sc sendConfig, start time.Duration) (int, time.Duration, time.Duration, time.Duration) {
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	sent := map[uint64]time.Duration{}
	var delays []time.Duration
	for _, r := range recs {
		sent[r.Seq] = r.Sent
		delays = append(delays, r.Arrival-r.Sent)
	}
	slices.Sort(delays)
	var p99, dmax time.Duration
	if n := len(delays); n > 0 {
		p99, dmax = delays[(n*99+99)/100-1], delays[n-1]
	}
	n, worst := 0, time.Duration(0)
	for s, at := range sent {
		prev, ok := sent[s-1]
		if !ok || s == 0 {
			continue
		}
		gap := at - prev
		if gap <= 3*sc.Interval/2 {
			continue
		}
		paused := false
		for _, p := range sc.Pauses {
			if prev < start+p.At+p.Dur && at >= start+p.At {
				paused = true
			}
		}
		if !paused {
			n++
			worst = max(worst, gap)
		}
	}
	return n, worst, p99, dmax
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
