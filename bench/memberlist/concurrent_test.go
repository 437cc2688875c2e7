package main

import (
	"errors"
	"flag"
	"os/exec"
	"strings"
	"testing"
)

// childOutput runs sh -c script as a concurrent run's child and reads its
// output as runChildren does.
func childOutput(t *testing.T, script string) (*childProc, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh here: %v", err)
	}
	k := &childProc{lib: "x", cmd: cmd, ready: make(chan struct{}, 1), res: make(chan Result, 1)}
	return k, k.read(stdout)
}

// The parent reads a child's ready line and its result, and tells a child
// that could not start its members (exit 3: the run is started again) from
// one that failed, printed something else, or exited without a result.
func TestChildProtocol(t *testing.T) {
	k, err := childOutput(t, `echo ready; echo 'result {"Lib":"fdkit","Scenario":"kill-silent","FP":2,"CPU":0.5}'`)
	if err != nil {
		t.Fatalf("good child: %v", err)
	}
	select {
	case <-k.ready:
	default:
		t.Error("good child: ready not seen")
	}
	if r := <-k.res; r.Lib != "fdkit" || r.Scenario != "kill-silent" || r.FP != 2 || r.CPU != 0.5 {
		t.Errorf("good child: result %+v", r)
	}

	if _, err := childOutput(t, `exit 3`); !errors.As(err, new(startError)) {
		t.Errorf("exit 3: %v, want a startError (the run is started again)", err)
	}
	// A child whose output cannot be read is stopped and reaped at once,
	// not left running until the run ends.
	k, err = childOutput(t, `echo hello; sleep 30`)
	if err == nil || !strings.Contains(err.Error(), "unexpected output") {
		t.Errorf("echo hello: %v, want unexpected output", err)
	}
	if k.cmd.ProcessState == nil {
		t.Error("echo hello: the child was not reaped")
	}

	for script, want := range map[string]string{
		`echo ready; exit 1`:          "exit status 1",
		`echo ready`:                  "without a result",
		`echo hello`:                  `unexpected output "hello"`,
		`echo ready; echo 'result {'`: "its result",
	} {
		_, err := childOutput(t, script)
		if err == nil || !strings.Contains(err.Error(), want) || errors.As(err, new(startError)) {
			t.Errorf("%s: %v, want an error with %q", script, err, want)
		}
	}
}

// A child's -child comes before the parent's arguments, so that it is
// parsed even after a stray argument that stops flag parsing.
func TestChildArgs(t *testing.T) {
	args := childArgs("fdkit", "kill", 4, []string{"-n", "4", "stray", "-window", "3s"})
	fs := flag.NewFlagSet("child", flag.ContinueOnError)
	child := fs.String("child", "", "")
	fs.Int("n", 0, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if *child != "fdkit/kill/4" {
		t.Errorf("-child %q in %q, want fdkit/kill/4", *child, args)
	}
}

// A dial to a silently killed member's stream address is not refused (its
// host accepts it), and the inbound stream it makes is held open until
// the member is stopped.
func TestKillSilentHoldsStreams(t *testing.T) {
	imp := NewImpair(1)
	registerStream("127.0.0.1:9", imp)
	t.Cleanup(func() { unregisterStream("127.0.0.1:9") })
	imp.KillSilent()
	if !imp.Killed() {
		t.Error("not killed")
	}
	if err := dialRefused("127.0.0.1:9"); err != nil {
		t.Errorf("silently killed member: %v, want the dial to connect", err)
	}
	c := &closeCount{}
	imp.hold(c)
	if c.n != 0 {
		t.Error("a held stream was closed before the member stopped")
	}
	imp.Close()
	imp.Close()
	if c.n != 1 {
		t.Errorf("held stream closed %d times by Close, want 1", c.n)
	}
	late := &closeCount{}
	imp.hold(late)
	if late.n != 1 {
		t.Error("a stream held after Close was not closed")
	}
}

type closeCount struct{ n int }

func (c *closeCount) Close() error { c.n++; return nil }

// A dial to a killed member's stream address is refused, as a dial to a
// dead process is; to a live or unknown one it is not.
func TestDialRefusedOnceKilled(t *testing.T) {
	imp := NewImpair(1)
	registerStream("127.0.0.1:7", imp)
	t.Cleanup(func() { unregisterStream("127.0.0.1:7") })
	if err := dialRefused("127.0.0.1:7"); err != nil {
		t.Errorf("live member: %v", err)
	}
	imp.Kill()
	if err := dialRefused("127.0.0.1:7"); !errors.Is(err, errRefused) {
		t.Errorf("killed member: %v, want errRefused", err)
	}
	if err := dialRefused("127.0.0.1:8"); err != nil {
		t.Errorf("unknown address: %v", err)
	}
}
