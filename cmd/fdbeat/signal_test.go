package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With FDBEAT_TEST_MAIN set, the test binary runs fdbeat's main instead of
// the tests, so that the tests below can send it real signals.
func TestMain(m *testing.M) {
	if os.Getenv("FDBEAT_TEST_MAIN") == "1" {
		os.Args = append([]string{"fdbeat"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// fdbeatCommand runs fdbeat with args: this test binary, or the binary
// named by $FDBEAT_BIN (to measure another build, such as the one before a
// fix, with the same test).
func fdbeatCommand(args ...string) *exec.Cmd {
	if bin := os.Getenv("FDBEAT_BIN"); bin != "" {
		return exec.Command(bin, args...)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FDBEAT_TEST_MAIN=1")
	return cmd
}

// startMain starts fdbeat (fdbeatCommand) with args and waits until its
// log (stderr) contains ready.
func startMain(t *testing.T, ready string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := fdbeatCommand(args...)
	var out syncBuffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		done := false
		for sc.Scan() {
			out.Write([]byte(sc.Text() + "\n"))
			if !done && strings.Contains(sc.Text(), ready) {
				done = true
				close(seen)
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatalf("fdbeat %v did not log %q: %s", args, ready, out.String())
	}
	return cmd, &out
}

// listenAddr is the address a recv started with --listen 127.0.0.1:0 got,
// from its "receiving heartbeats" line (binding port 0 and reading it back
// leaves no window for another socket to take a port picked in advance).
func listenAddr(t *testing.T, log fmt.Stringer) string {
	t.Helper()
	m := regexp.MustCompile(`receiving heartbeats.* listen="?([0-9.:\[\]a-f]+)`).FindStringSubmatch(log.String())
	require.NotNil(t, m, "no listen address in %q", log.String())
	return m[1]
}

func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("fdbeat did not exit within %v", within)
		return nil
	}
}

// SIGINT stops recv and flushes its trace (a real signal, through main).
func TestRecvSIGINTFlushesTrace(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sig.fdk.gz")
	recv, rlog := startMain(t, "receiving heartbeats", "recv", "--listen", "127.0.0.1:0", "--out", out, "--refresh", "0")
	addr := listenAddr(t, rlog)
	send, _ := startMain(t, "sending heartbeats", "send", "--name", "s", "--interval", "20ms", "--count", "10", addr)
	require.NoError(t, waitExit(t, send, 5*time.Second))
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, recv.Process.Signal(syscall.SIGINT))
	require.NoError(t, waitExit(t, recv, 5*time.Second))
	recs, err := trace.ReadFile(out, trace.ReaderConfig{})
	require.NoError(t, err)
	assert.Len(t, recs, 10)
}

// A second SIGINT ends send at once even while delayed heartbeats are still
// in flight, rather than waiting for them (an hour here).
func TestSendSecondSignalAborts(t *testing.T) {
	addr := freeUDPPort(t)
	send, out := startMain(t, "sending heartbeats", "send", "--delay", "1h", "--delay-dist", "constant",
		"--interval", "10ms", addr)
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, send.Process.Signal(syscall.SIGINT))
	deadline := time.Now().Add(5 * time.Second)
	for !bytes.Contains([]byte(out.String()), []byte("in flight")) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, send.Process.Signal(syscall.SIGINT))
	err := waitExit(t, send, 5*time.Second)
	assert.Error(t, err, "killed by the second signal")
	assert.Contains(t, out.String(), "interrupt again to abort")
}
