package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A local pause of the receiver (found by the monitors' guard) is logged
// once: recv gives the monitors its logger, so a pause is never silent.
func TestRecvLogsLocalPause(t *testing.T) {
	clk := &monitor.ManualClock{}
	m, err := monitor.New(monitor.Config{Clock: clk})
	require.NoError(t, err)
	var logs syncBuffer
	r := &receiver{log: slog.New(slog.NewTextHandler(&logs, nil)), mons: []namedMon{{"timeout-1s", m}}}
	m.Sweep()
	r.notePauses()
	clk.Set(7 * time.Second)
	m.Sweep()
	r.notePauses()
	r.notePauses()
	assert.Equal(t, 1, strings.Count(logs.String(), "the receiver itself was paused"), logs.String())
}

// A restarted sender's trace stream never takes the id of another sender:
// "a" restarting became "a#2", the name a real sender "a#2" already had.
func TestRecvStreamIDsUnique(t *testing.T) {
	r := &receiver{log: slog.New(slog.DiscardHandler), streams: map[string]*streamID{}}
	assert.Equal(t, "a", r.stream("a", 1))
	assert.Equal(t, "a#2", r.stream("a#2", 1))
	got := r.stream("a", 2)
	assert.NotEqual(t, "a#2", got)
	assert.Equal(t, "a#2#2", got)
	assert.Equal(t, "a#2#2", r.stream("a", 2), "same incarnation, same stream")
	assert.Equal(t, "a#2#2#2", r.stream("a#2#2", 5), "a later sender with a taken name")
	assert.Equal(t, "a#2", r.stream("a#2", 1))
}

// Heartbeats of an older incarnation are ignored, and said so once.
func TestRecvWarnsStaleIncarnationOnce(t *testing.T) {
	m, err := monitor.New(monitor.Config{})
	require.NoError(t, err)
	var logs syncBuffer
	r := &receiver{log: slog.New(slog.NewTextHandler(&logs, nil)), mons: []namedMon{{"timeout-1s", m}},
		streams: map[string]*streamID{}}
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	pkt := func(inc, seq uint64) []byte {
		b, err := appendPacket(nil, packet{Name: "s", Incarnation: inc, Seq: seq})
		require.NoError(t, err)
		return b
	}
	r.handle(pkt(10, 0), from, time.Millisecond)
	for i := range 3 {
		r.handle(pkt(5, uint64(i)), from, time.Duration(i+2)*time.Millisecond)
	}
	assert.Equal(t, uint64(3), r.stats.Stale)
	assert.Equal(t, 1, strings.Count(logs.String(), "older incarnation"), logs.String())
}

// A trace write error (disk full) stops recv with that error instead of
// logging one error per heartbeat while losing them all.
func TestRecvStopsWhenTraceUnwritable(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	rc := recvConfig{MaxSeqJump: defaultMaxSeqJump, MaxIncarnationJump: defaultMaxIncarnationJump, MaxIncarnationAhead: defaultMaxIncarnationAhead, TableSenders: defaultTableSenders,
		Out: "/dev/full", Listen: "127.0.0.1:0", Interval: time.Millisecond, Sweep: 5 * time.Millisecond,
		Timeouts: []time.Duration{time.Second}}
	ready := make(chan string, 1)
	rc.ready = func(a net.Addr, _ time.Duration) { ready <- a.String() }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := runRecv(ctx, rc, slog.New(slog.DiscardHandler))
		done <- err
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done: // the header is flushed at once: /dev/full fails at the start
		require.Error(t, err)
		assert.Equal(t, 1, strings.Count(err.Error(), "no space left"), err.Error())
		return
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	go func() {
		_, _ = runSend(sctx, sendConfig{Targets: []string{addr}, Name: "full", Interval: 200 * time.Microsecond,
			DelayDist: "constant"}, slog.New(slog.DiscardHandler))
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no space left on device")
		assert.Equal(t, 1, strings.Count(err.Error(), "no space left"), err.Error())
	case <-ctx.Done():
		t.Fatal("recv went on although its trace could not be written")
	}
}

// On a terminal the table shows the last transitions under it, in view
// while the log scrolls above; headers keep their case ("to τ", not "TO Τ").
func TestRecvTableShowsRecentTransitions(t *testing.T) {
	m, err := monitor.New(monitor.Config{})
	require.NoError(t, err)
	var table syncBuffer
	r := &receiver{log: slog.New(slog.DiscardHandler), clock: monitor.NewMonotonic(), mons: []namedMon{{"timeout-1s", m}},
		cfg: recvConfig{Table: &table, Terminal: true, TableSenders: defaultTableSenders}, stats: recvStats{Transitions: map[string]int{}}}
	require.NoError(t, m.Heartbeat("s", monitor.Beat{}))
	for i := range recentMax + 2 {
		r.transition("timeout-1s", monitor.Transition{Peer: "s", Old: monitor.Trusted, New: monitor.Suspected,
			Cause: monitor.CauseFreshness, At: time.Duration(i+1) * time.Second})
	}
	r.printTable()
	out := table.String()
	assert.Contains(t, out, "to τ")
	assert.Contains(t, out, "last transitions")
	assert.Contains(t, out, "10s  s  timeout-1s: trusted → suspected (freshness-point)")
	assert.NotContains(t, out, " 2s  s ", "only the last recentMax")
	assert.Equal(t, recentMax, strings.Count(out, "→"))
}
