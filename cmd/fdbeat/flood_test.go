package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/monitor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A flood of forged sender names (one heartbeat each) next to one genuine
// sender keeps everything bounded: senders tracked (--max-senders), warning
// and transition lines (rate-limited), table rows (--table-senders); forged
// names on probation displace one another, so none is ever refused and the
// genuine sender keeps its place; once the flood stops, the forged names
// are evicted (--evict-after) and the table is back to the genuine sender.
func TestFloodBounded(t *testing.T) {
	const maxSenders, flood = 1000, 20000
	clk := &monitor.ManualClock{}
	var logs, table syncBuffer
	cfg := recvConfig{MaxSenders: maxSenders, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead,
		EvictAfter: 5 * time.Second, TableSenders: 20, Table: &table}
	r := &receiver{cfg: cfg, log: slog.New(slog.NewTextHandler(&logs, nil)), clock: clk,
		streams: map[string]*streamID{}, stats: recvStats{Transitions: map[string]int{}}}
	for _, timeout := range []time.Duration{200 * time.Millisecond, 300 * time.Millisecond} {
		name := "timeout-" + timeout.String()
		m, err := monitor.New(monitor.Config{Clock: clk, MaxPeers: maxSenders, Factory: func() (detector.Detector, error) {
			return detector.NewFixed(detector.FixedConfig{Timeout: &timeout})
		}, OnTransition: func(tr monitor.Transition) { r.transition(name, tr) }})
		require.NoError(t, err)
		r.mons = append(r.mons, namedMon{name, m})
	}
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	deliver := func(name string, seq uint64) {
		b, err := appendPacket(nil, packet{Name: name, Incarnation: 1, Seq: seq, Sent: time.Duration(seq) * 100 * time.Millisecond})
		require.NoError(t, err)
		r.eval.Lock()
		r.handle(b, from, clk.Now())
		r.eval.Unlock()
	}
	// 20,000 forged names over 10 s (2,000/s), the genuine sender every 100 ms.
	seq := uint64(0)
	for i := range flood {
		clk.Set(time.Duration(i) * 500 * time.Microsecond)
		deliver(fmt.Sprintf("forged-%d", i), 0)
		if i%200 == 0 {
			deliver("genuine", seq)
			seq++
		}
		if i%100 == 0 {
			for _, nm := range r.mons {
				nm.m.Sweep() // forged names are suspected: transitions
			}
		}
		if i%2000 == 0 {
			r.evict()
			r.warner().Flush(clk.Now())
		}
	}
	tracked := r.mons[0].m.Len()
	assert.Equal(t, maxSenders, tracked, "full: the flood fills every slot but the genuine sender's")
	assert.Zero(t, r.stats.Refused)
	assert.Equal(t, uint64(flood-(maxSenders-1)), r.stats.Displaced)
	r.printTable()
	lines := strings.Count(table.String(), "\n")
	assert.Equal(t, 20*len(r.mons)+1, lines, "20 senders of 2 detectors, and the count of the rest:\n%s", table.String())
	assert.Contains(t, table.String(), "sender=genuine ", "the genuine sender has the most heartbeats")
	assert.Contains(t, table.String(), fmt.Sprintf("more_senders=%d", tracked-20))

	// The flood is over; the genuine sender goes on; 6 s later the forged
	// names are gone.
	for range 60 {
		clk.Set(clk.Now() + 100*time.Millisecond)
		deliver("genuine", seq)
		seq++
	}
	r.evict()
	r.warner().Flush(clk.Now() + warnWindow)
	r.transLimiter().Flush(clk.Now() + warnWindow)
	for _, nm := range r.mons {
		assert.Equal(t, 1, nm.m.Len(), nm.name)
	}
	assert.Len(t, r.streams, 1)
	assert.Len(t, r.used, 1)
	assert.Zero(t, r.probation.Len())
	assert.Equal(t, uint64(maxSenders-1), r.stats.Evicted, "every forged name still tracked was evicted")
	table.mu.Lock()
	table.b = nil
	table.mu.Unlock()
	r.printTable()
	assert.Equal(t, len(r.mons), strings.Count(table.String(), "\n"), table.String())
	st, ok := r.mons[0].m.State("genuine")
	require.True(t, ok)
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Equal(t, seq, st.Heartbeats, "no genuine heartbeat lost")
	assert.Zero(t, st.Suspicions)

	// At most 5 lines per kind of warning and 200 transition lines per
	// 10 s, each with one summary; 16 s of the manual clock are two
	// windows.
	warns := strings.Count(logs.String(), "msg=\"table full")
	assert.LessOrEqual(t, warns, 2*warnBurst)
	assert.LessOrEqual(t, strings.Count(logs.String(), "msg=transition"), 2*transitionBurst)
	assert.Contains(t, logs.String(), "msg=\"similar log lines suppressed\" msg=\"table full")
	assert.Contains(t, logs.String(), "msg=\"similar log lines suppressed\" msg=transition")
	assert.Less(t, strings.Count(logs.String(), "\n"), 500)
	t.Logf("%d forged names: %d displaced, %d refused, %d evicted, %d transitions, %d log lines", flood, r.stats.Displaced, r.stats.Refused, r.stats.Evicted,
		r.stats.Transitions["timeout-200ms"]+r.stats.Transitions["timeout-300ms"], strings.Count(logs.String(), "\n"))
}

// The 20,000-name fill of issue 26 at the default cap: 20,000 forged names
// with one heartbeat each fill --max-senders (10,000). A genuine sender
// starting afterwards is not refused until the forged names are evicted
// (--evict-after, 10 minutes): its first heartbeat displaces the forged
// name heard from least recently, and the sender is followed from its
// first heartbeat. Senders past probation are never displaced: when every
// tracked sender has sent probationBeats heartbeats, a new one is refused.
func TestFullTableAdmitsGenuineSender(t *testing.T) {
	const inc = 1764420000123456789
	g := newForgeRig(t, recvConfig{MaxSenders: defaultMaxSenders, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump,
		MaxIncarnationAhead: defaultMaxIncarnationAhead})
	for i := range 20000 {
		g.send(packet{Name: "forged-" + strconv.Itoa(i), Incarnation: inc}, nil, g.from, 50*time.Microsecond)
	}
	assert.Len(t, g.r.streams, defaultMaxSenders)
	assert.Equal(t, uint64(20000-defaultMaxSenders), g.r.stats.Displaced)
	for seq := range uint64(20) {
		g.beat(inc, seq, nil)
	}
	st := g.state()
	assert.Equal(t, uint64(20), st.Heartbeats, "followed from its first heartbeat")
	assert.Equal(t, monitor.Trusted, st.Status)
	assert.Zero(t, g.r.stats.Refused)
	assert.Nil(t, g.r.streams["s"].probation, "past probation")

	// A table of senders past probation refuses a newcomer.
	h := newForgeRig(t, recvConfig{MaxSenders: 3, MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump,
		MaxIncarnationAhead: defaultMaxIncarnationAhead})
	for seq := range uint64(probationBeats) {
		for _, n := range []string{"a", "b", "c"} {
			h.deliver(packet{Name: n, Incarnation: inc, Seq: seq, Sent: time.Duration(seq) * 100 * time.Millisecond}, nil, h.from, 33*time.Millisecond)
		}
	}
	h.deliver(packet{Name: "d", Incarnation: inc}, nil, h.from, time.Millisecond)
	assert.Equal(t, uint64(1), h.r.stats.Refused)
	assert.Zero(t, h.r.stats.Displaced)
	assert.Len(t, h.r.streams, 3)
	assert.Contains(t, h.logs.String(), "every tracked sender is past probation")
}

// TestFlood500k measures a real "fdbeat recv" process under the flood of
// issue 11: 500,000 forged names at 50,000 per second for 10 s beside one
// genuine sender, then 20 s of the genuine sender alone. It reports the peak
// RSS (VmHWM), the log lines, the table bytes per second during and after
// the flood, and the kernel's receive drops. Run it with
//
//	FDBEAT_FLOOD=1 go test -run TestFlood500k -v ./cmd/fdbeat
//
// (about 35 s; docs/experiments.md has the numbers).
func TestFlood500k(t *testing.T) {
	if os.Getenv("FDBEAT_FLOOD") == "" {
		t.Skip("a 35 s measurement; set FDBEAT_FLOOD=1 to run it")
	}
	addr := freeUDPPort(t)
	cmd := exec.Command(os.Args[0], "recv", "--listen", addr, "--plain", "--refresh", "1s", "--evict-after", "5s")
	cmd.Env = append(os.Environ(), "FDBEAT_TEST_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }()
	var tableBytes, logLines, logBytes atomic.Int64
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			logLines.Add(1)
			logBytes.Add(int64(len(sc.Bytes()) + 1))
			if !once && strings.Contains(sc.Text(), "receiving heartbeats") {
				once = true
				close(ready)
			}
		}
	}()
	var summary atomic.Value
	summary.Store("")
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			tableBytes.Add(int64(len(sc.Bytes()) + 1))
			if strings.HasPrefix(sc.Text(), "refused:") {
				summary.Store(sc.Text())
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("recv did not start")
	}
	conn, err := net.Dial("udp", addr)
	require.NoError(t, err)
	defer conn.Close()
	stopGenuine := make(chan struct{})
	genuineDone := make(chan struct{})
	go func() {
		defer close(genuineDone)
		for seq := uint64(0); ; seq++ {
			b, _ := appendPacket(nil, packet{Name: "genuine", Incarnation: 1, Seq: seq, Sent: time.Duration(time.Now().UnixNano())})
			_, _ = conn.Write(b)
			select {
			case <-stopGenuine:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	const names, rate = 500000, 50000
	var buf []byte
	for i := range names {
		if i%1000 == 0 { // pace: 1,000 names per 20 ms
			if d := time.Until(start.Add(time.Duration(i) * time.Second / rate)); d > 0 {
				time.Sleep(d)
			}
		}
		buf, _ = appendPacket(buf[:0], packet{Name: "forged-" + strconv.Itoa(i), Incarnation: 1, Seq: 0})
		_, _ = conn.Write(buf)
	}
	floodTime := time.Since(start)
	duringTable, duringLog := tableBytes.Load(), logLines.Load()
	time.Sleep(10 * time.Second) // eviction after 5 s of silence
	midTable := tableBytes.Load()
	time.Sleep(10 * time.Second)
	afterTable := tableBytes.Load() - midTable
	close(stopGenuine)
	<-genuineDone
	hwm := procStatus(t, cmd.Process.Pid, "VmHWM")
	rss := procStatus(t, cmd.Process.Pid, "VmRSS")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	_ = cmd.Wait()
	t.Logf("flood: %d names in %v (%.0f/s)", names, floodTime.Round(time.Millisecond), names/floodTime.Seconds())
	t.Logf("peak RSS (VmHWM) %s, RSS at the end %s", hwm, rss)
	t.Logf("log: %d lines during the flood, %d lines (%d bytes) in all", duringLog, logLines.Load(), logBytes.Load())
	t.Logf("table: %d bytes during the flood, %d bytes in the 10 s from 10 s after it (%.0f B/s)", duringTable, afterTable, float64(afterTable)/10)
	t.Logf("summary: %s", summary.Load())
}

// procStatus returns a field of /proc/PID/status, such as "VmHWM".
func procStatus(t *testing.T, pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
