package main

import (
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttacksLoopback reruns issue 26's two plain-mode attacks against real
// fdbeat processes over loopback sockets, each beside a genuine "fdbeat
// send" at 100 ms, and reports recv's counters and how long the genuine
// sender stayed blind or refused:
//
//   - forgery: 2 s into the run, two datagrams naming the genuine sender,
//     incarnation 2^64−1 with sequence numbers 0 and 1, back to back from
//     one socket;
//   - fill: 20,000 forged names, one heartbeat each, at 10,000 a second,
//     fill --max-senders (10,000 by default); a genuine sender starts after.
//
// Run it with
//
//	FDBEAT_ATTACK=1 go test -run TestAttacksLoopback -v ./cmd/fdbeat
//
// and with FDBEAT_BIN=path set to measure another build of fdbeat, for a
// side-by-side comparison (docs/experiments.md has one). About 25 s.
func TestAttacksLoopback(t *testing.T) {
	if os.Getenv("FDBEAT_ATTACK") == "" {
		t.Skip("a 25 s measurement over loopback; set FDBEAT_ATTACK=1 to run it")
	}
	const interval = 100 * time.Millisecond
	t.Run("forgery", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "forgery.fdk")
		recv, rlog := startMain(t, "receiving heartbeats", "recv", "--listen", "127.0.0.1:0", "--out", out, "--refresh", "0")
		addr := listenAddr(t, rlog)
		send, sout := startMain(t, "sending heartbeats", "send", "--name", "g", "--interval", interval.String(), addr)
		time.Sleep(2 * time.Second)
		forger, err := net.Dial("udp", addr)
		require.NoError(t, err)
		defer forger.Close()
		for seq := range uint64(2) {
			b, err := appendPacket(nil, packet{Name: "g", Incarnation: math.MaxUint64, Seq: seq, Sent: time.Duration(time.Now().UnixNano())})
			require.NoError(t, err)
			_, err = forger.Write(b)
			require.NoError(t, err)
		}
		endAttack(t, recv, rlog, send, sout, out, "g", time.Duration(time.Now().UnixNano()), interval)
	})
	t.Run("fill", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "fill.fdk")
		recv, rlog := startMain(t, "receiving heartbeats", "recv", "--listen", "127.0.0.1:0", "--out", out, "--refresh", "0")
		addr := listenAddr(t, rlog)
		flood, err := net.Dial("udp", addr)
		require.NoError(t, err)
		defer flood.Close()
		start := time.Now()
		var b []byte
		for i := range 20000 {
			if i%100 == 0 { // 100 names every 10 ms
				if d := time.Until(start.Add(time.Duration(i) * 100 * time.Microsecond)); d > 0 {
					time.Sleep(d)
				}
			}
			b, err = appendPacket(b[:0], packet{Name: "forged-" + strconv.Itoa(i), Incarnation: uint64(time.Now().UnixNano())})
			require.NoError(t, err)
			_, _ = flood.Write(b)
		}
		time.Sleep(200 * time.Millisecond)
		began := time.Duration(time.Now().UnixNano())
		send, sout := startMain(t, "sending heartbeats", "send", "--name", "n", "--interval", interval.String(), addr)
		endAttack(t, recv, rlog, send, sout, out, "n", began, interval)
	})
}

// stopSender stops "fdbeat send" with SIGINT and returns the heartbeats it
// says it sent.
func stopSender(t *testing.T, send *exec.Cmd, out fmt.Stringer) uint64 {
	t.Helper()
	require.NoError(t, send.Process.Signal(syscall.SIGINT))
	require.NoError(t, waitExit(t, send, 10*time.Second))
	m := regexp.MustCompile(`sent (\d+) heartbeats`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	n, err := strconv.ParseUint(m[1], 10, 64)
	require.NoError(t, err)
	return n
}

// endAttack lets the genuine sender name run for 5 s after the attack,
// stops recv and then the sender, then reads the trace at path and recv's output and
// logs the sender's heartbeats sent and recorded, those recorded after the
// attack, the time it stayed blind or refused after the attack (the
// heartbeats sent after it and not recorded before the first that was, in
// intervals, or to the end of the run if none was), and recv's summary
// counters.
func endAttack(t *testing.T, recv *exec.Cmd, rlog fmt.Stringer, send *exec.Cmd, sout fmt.Stringer, path, name string, attack, interval time.Duration) {
	t.Helper()
	time.Sleep(5 * time.Second)
	stopped := time.Duration(time.Now().UnixNano())
	// recv first: a sender stopped first would be suspected, rightly.
	require.NoError(t, recv.Process.Signal(syscall.SIGINT))
	require.NoError(t, waitExit(t, recv, 10*time.Second))
	sent := stopSender(t, send, sout)
	recvOut := rlog.String()
	recs, err := trace.ReadFile(path, trace.ReaderConfig{})
	require.NoError(t, err)
	// The first heartbeat sent after the attack has the sequence number
	// after the last one sent before it (0 for a newcomer); the sender is
	// blind or refused for as many intervals as separate it from the first
	// one recorded after the attack (or to the end of the run).
	var recorded, after, next, top uint64
	first := uint64(math.MaxUint64)
	for _, r := range recs {
		if r.Sender != name { // name#2 would be a forged incarnation's
			continue
		}
		recorded++
		top = max(top, r.Seq+1)
		if r.Sent <= attack {
			next = max(next, r.Seq+1)
		} else {
			after++
			first = min(first, r.Seq)
		}
	}
	blind := stopped - attack
	if after > 0 {
		blind = time.Duration(first-next) * interval
	}
	t.Logf("genuine sender %q: %d heartbeats sent (the last after recv stopped), %d recorded, %d of them after the attack, %d missing below the last recorded; blind or refused for %v after it (run ended %v after it)",
		name, sent, recorded, after, top-recorded, blind.Round(time.Millisecond), (stopped - attack).Round(time.Millisecond))
	if m := regexp.MustCompile(`(?m)^refused: .*$`).FindString(recvOut); m != "" {
		t.Logf("recv: %s", m)
	}
	if m := regexp.MustCompile(`(?m)^received .*$`).FindString(recvOut); m != "" {
		t.Logf("recv: %s", m)
	}
	by := map[string]int{}
	for _, m := range regexp.MustCompile(`msg=transition detector=(\S+) peer=`+regexp.QuoteMeta(name)+` old=trusted new=suspected`).FindAllStringSubmatch(recvOut, -1) {
		by[m[1]]++
	}
	t.Logf("recv: suspicions of %q logged, by detector: %v", name, by)
	assert.Equal(t, top, recorded, "every genuine heartbeat recorded until recv stopped")
	assert.Positive(t, after)
	assert.Zero(t, blind, "never blind nor refused")
}
