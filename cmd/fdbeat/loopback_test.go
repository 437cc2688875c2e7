package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveRun is the outcome of one loopback run of fdbeat send → fdbeat recv.
type liveRun struct {
	origin time.Duration // Unix ns of the receiver's monitor clock 0
	trans  map[string][]monitor.Transition
	recv   recvStats
	send   sendStats
	specs  []detSpec
}

// loopback runs a receiver on 127.0.0.1 and one sender until the sender
// stops, waits until the receiver has counted every heartbeat the sender's
// path delivered (at most 10 s), then linger, then stops the receiver
// (flushing its trace).
func loopback(t testing.TB, sc sendConfig, rc recvConfig, linger time.Duration) liveRun {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	specs, err := fieldDetectors(rc.Timeouts, rc.Phis, rc.PhiWindow, rc.PhiMinStd, rc.Interval)
	require.NoError(t, err)
	run := liveRun{trans: map[string][]monitor.Transition{}, specs: specs}
	var mu sync.Mutex
	rc.Listen = "127.0.0.1:0"
	ready := make(chan string, 1)
	rc.ready = func(a net.Addr, origin time.Duration) {
		run.origin = origin
		ready <- a.String()
	}
	rc.onTransition = func(det string, tr monitor.Transition) {
		mu.Lock()
		run.trans[det] = append(run.trans[det], tr)
		mu.Unlock()
	}
	var packets atomic.Uint64
	rc.onPacket = func() { packets.Add(1) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		st, err := runRecv(ctx, rc, log)
		run.recv = st
		done <- err
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("receiver failed: %v", err)
	}
	sc.Targets = []string{addr}
	run.send, err = runSend(context.Background(), sc, log)
	require.NoError(t, err)
	// Every heartbeat the path delivered is counted before the linger
	// starts: on a loaded machine the last can be read long after the
	// sender returns.
	want := run.send.Sent - run.send.Dropped - run.send.Errors
	deadline := time.Now().Add(10 * time.Second)
	for packets.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(linger)
	cancel()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	return run
}

// With --host-lateness=false, the transitions fdbeat recv reports live are
// the mistakes qos replay finds on the trace it recorded: same count, same
// instants (within 2 ms; they are in fact equal, since live and replay see
// the same arrivals).
func TestLoopbackLiveAgreesWithReplay(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.fdk.gz")
	sc := sendConfig{Name: "a", Interval: 20 * time.Millisecond, Duration: 3 * time.Second,
		DelayDist: "normal", Delay: 10 * time.Millisecond, Jitter: 8 * time.Millisecond,
		Loss: 0.15, Seed: 42, Pauses: []pause{{time.Second, 150 * time.Millisecond}}}
	rc := recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead, TableSenders: defaultTableSenders,
		Out: out, Interval: 20 * time.Millisecond, Sweep: 5 * time.Millisecond, IgnoreHostLateness: true,
		Timeouts: []time.Duration{45 * time.Millisecond, 100 * time.Millisecond}, Phis: []float64{3, 8}, PhiWindow: 50}
	run := loopback(t, sc, rc, 300*time.Millisecond)
	require.Positive(t, run.recv.Recorded)
	assert.Equal(t, run.recv.Packets, run.recv.Recorded)

	recs, err := trace.ReadFile(out, trace.ReaderConfig{})
	require.NoError(t, err)
	streams := trace.Split(recs)
	require.Len(t, streams, 1)
	hbs := make([]detector.Heartbeat, len(streams[0].Records))
	for i, r := range streams[0].Records {
		hbs[i] = r.Heartbeat()
	}
	total := 0
	for _, spec := range run.specs {
		det, err := spec.Factory()
		require.NoError(t, err)
		res, err := qos.ReplaySlice(det, hbs, qos.Config{RecordMistakes: true})
		require.NoError(t, err, spec.Name)
		// Live suspicions inside the replay's evaluated span [Start, End],
		// and the trusts that ended them.
		all := run.trans[spec.Name]
		slices.SortFunc(all, func(a, b monitor.Transition) int { return int(a.Number) - int(b.Number) })
		var live, ends []monitor.Transition
		for i, tr := range all {
			at := run.origin + tr.At
			if tr.New == monitor.Suspected && at >= res.Start && at <= res.End {
				live = append(live, tr)
				if i+1 < len(all) {
					ends = append(ends, all[i+1])
				}
			}
		}
		require.Equal(t, res.Mistakes, len(live), "%s: live suspicions vs replay mistakes", spec.Name)
		require.Len(t, res.MistakeIntervals, res.Mistakes)
		for i, iv := range res.MistakeIntervals {
			assert.InDelta(t, float64(iv.Start), float64(run.origin+live[i].At), float64(2*time.Millisecond),
				"%s mistake %d start", spec.Name, i)
			if i < len(ends) && iv.End < res.End {
				assert.InDelta(t, float64(iv.End), float64(run.origin+ends[i].At), float64(2*time.Millisecond),
					"%s mistake %d end", spec.Name, i)
			}
		}
		total += res.Mistakes
		t.Logf("%s: %d mistakes live and in replay", spec.Name, res.Mistakes)
	}
	assert.Positive(t, total, "the impairments must cause some mistakes")
}

// SIGINT/SIGTERM cancel the context: both commands stop and recv flushes the
// trace (the file is complete and readable).
func TestCommandsStopOnCancel(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cancel.fdk")
	ctx, cancel := context.WithCancel(context.Background())
	var recvOut, recvErr syncBuffer
	rc := make(chan int, 1)
	go func() {
		rc <- run(ctx, []string{"recv", "--listen", "127.0.0.1:0", "--out", out, "--refresh", "100ms", "--plain"}, &recvOut, &recvErr)
	}()
	// Send once recv listens (a fixed sleep lost heartbeats on a loaded
	// machine), to the port it got.
	require.Eventually(t, func() bool { return strings.Contains(recvErr.String(), "receiving heartbeats") }, 20*time.Second, 10*time.Millisecond)
	addr := listenAddr(t, &recvErr)
	// A fixed number of heartbeats, and cancel once recv has counted them
	// all: a send bounded in time sent fewer on a loaded machine.
	var sendOut, sendErr syncBuffer
	code := run(context.Background(), []string{"send", "--name", "n1", "--interval", "50ms", "--count", "12", addr}, &sendOut, &sendErr)
	assert.Equal(t, 0, code, sendErr.String())
	assert.Contains(t, sendOut.String(), "sent 12 heartbeats")
	require.Eventually(t, func() bool { return strings.Contains(recvOut.String(), "heartbeats=12 ") }, 20*time.Second, 10*time.Millisecond, recvOut.String())
	cancel()
	assert.Equal(t, 0, <-rc, recvErr.String())
	assert.Contains(t, recvOut.String(), "sender=n1 detector=timeout-300ms")
	recs, err := trace.ReadFile(out, trace.ReaderConfig{})
	require.NoError(t, err)
	assert.Len(t, recs, 12)
	assert.Equal(t, "n1", recs[0].Sender)
}

func TestCommandLineErrors(t *testing.T) {
	ctx := context.Background()
	var o, e syncBuffer
	assert.Equal(t, 2, run(ctx, nil, &o, &e))
	assert.Equal(t, 2, run(ctx, []string{"bogus"}, &o, &e))
	assert.Equal(t, 0, run(ctx, []string{"help"}, &o, &e))
	assert.Equal(t, 0, run(ctx, []string{"send", "--help"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"send"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"send", "--pause", "1s", "127.0.0.1:1"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"send", "--loss", "1.5", "127.0.0.1:1"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"send", "--name", "a b", "127.0.0.1:1"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"send", "--delay-dist", "zipf", "127.0.0.1:1"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"recv", "--interval", "0s"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"recv", "--timeouts", "-1s"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"recv", "--log-level", "loud"}, &o, &e))
	assert.Equal(t, 1, run(ctx, []string{"recv", "extra"}, &o, &e))
	assert.Contains(t, e.String(), "unknown delay distribution")

	earlier := filepath.Join(t.TempDir(), "earlier.fdk")
	require.NoError(t, os.WriteFile(earlier, []byte("#fdkit-trace version=1\np 0 0 1\n"), 0o644))
	// One clear line, nothing else, for each of these.
	for _, args := range [][]string{
		{"recv", "--phi", "0"}, // not φ 8 run under the name phi-0
		{"recv", "--phi", "8,-1"},
		{"recv", "--max-senders", "-1"},
		{"recv", "--sweep", "5s"}, // every sweep a local pause: nobody ever convicted
		{"recv", "--listen", "127.0.0.1"},
		{"recv", "--listen", "127.0.0.1:0", "--out", filepath.Join(t.TempDir(), "no", "such", "dir.fdk")},
		{"send", "--name", "#x", "127.0.0.1:1"},
		// An earlier recording was truncated by os.Create, without a word.
		{"recv", "--listen", "127.0.0.1:0", "--out", earlier},
	} {
		var o, e syncBuffer
		assert.Equal(t, 1, run(ctx, args, &o, &e), "%v", args)
		assert.Empty(t, o.String(), "%v: no statistics after a setup error", args)
		assert.Equal(t, 1, strings.Count(e.String(), "\n"), "%v: %s", args, e.String())
		assert.NotContains(t, e.String(), "fdbeat: fdbeat:", "%v", args)
	}
	got, err := os.ReadFile(earlier)
	require.NoError(t, err)
	assert.Equal(t, "#fdkit-trace version=1\np 0 0 1\n", string(got), "the earlier recording is untouched")
	var e2 syncBuffer
	run(ctx, []string{"recv", "--max-senders", "-1"}, &o, &e2)
	assert.Contains(t, e2.String(), "--max-senders")
}

func freeUDPPort(t *testing.T) string {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	a := c.LocalAddr().String()
	require.NoError(t, c.Close())
	return a
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a command
// and its logger.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// On a terminal the table is redrawn in place: up over the last one, erase
// to the end of the screen (never the whole screen, which held the log),
// then one row per sender and detector.
func TestRecvTableOnTerminal(t *testing.T) {
	var table syncBuffer
	sc := sendConfig{Name: "tty", Interval: 20 * time.Millisecond, Count: 20, Seed: 1} // Count, not Duration: a stalled sender skips ticks
	rc := recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead, TableSenders: defaultTableSenders,
		Interval: 20 * time.Millisecond, Sweep: 5 * time.Millisecond, Refresh: 100 * time.Millisecond,
		Table: &table, Terminal: true, Timeouts: []time.Duration{300 * time.Millisecond}, Phis: []float64{8}, PhiWindow: 100}
	run := loopback(t, sc, rc, 50*time.Millisecond)
	assert.Equal(t, uint64(20), run.recv.Packets)
	out := table.String()
	// Each redraw goes up exactly the lines of the frame before it: 7
	// for a table of two rows, more when the transitions a loaded host
	// can cause are listed under it.
	redraw := regexp.MustCompile(`\r\x1b\[(\d+)A\x1b\[J`)
	marks := redraw.FindAllStringSubmatchIndex(out, -1)
	require.NotEmpty(t, marks, "no redraw in place")
	prev := 0
	for _, m := range marks {
		up, err := strconv.Atoi(out[m[2]:m[3]])
		require.NoError(t, err)
		assert.Equal(t, strings.Count(out[prev:m[0]], "\n"), up, "a redraw goes up over the frame before it")
		assert.GreaterOrEqual(t, up, 7, "a table of two rows has 7 lines")
		prev = m[1]
	}
	assert.NotContains(t, out, "\x1b[2J")
	assert.Contains(t, out, "fdbeat recv:")
	assert.Regexp(t, `(?i)tty\s*│\s*timeout-300ms\s*│\s*trusted`, out)
	assert.Regexp(t, `(?i)tty\s*│\s*phi-8\s*│\s*trusted`, out)
}
