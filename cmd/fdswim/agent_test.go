package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run fdswim agents as separate processes on loopback and read
// their views over HTTP (/members). Timing: 100 ms protocol periods, so with n
// = 6 the suspicion timeout is between α·max(1, log10 6)·100 ms = 0.4 s and β
// times that, 2.4 s (docs/algorithms.md, “Lifeguard suspicion timeout” with
// memberlist's defaults α = 4, β = 6), after a detection that takes e/(e−1) ≈
// 1.6 periods on average. They run with -short too, so CI runs them: about 10 s
// in all.

const (
	period      = "100ms"
	probeTO     = "50ms"
	nAgents     = 6
	killBound   = 8 * time.Second // detection + longest suspicion + dissemination, with margin for a loaded machine
	convergeMax = 15 * time.Second
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// fdswimBinary builds the command once per test binary run.
func fdswimBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fdswim-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "fdswim")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

type proc struct {
	id, addr, http string
	cmd            *exec.Cmd
	mu             sync.Mutex
	lines          []string
	partial        []byte
	exited, ready  chan struct{}
}

// Write collects the agent's output lines, noting its UDP and HTTP
// addresses; ready closes when the HTTP address is printed.
func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		line := string(p.partial[:i])
		p.partial = p.partial[i+1:]
		p.lines = append(p.lines, line)
		if strings.Contains(line, " msg=agent ") {
			p.addr = field(line, "addr")
		}
		if strings.Contains(line, " msg=http ") && p.http == "" {
			p.http = field(line, "addr")
			close(p.ready)
		}
	}
	return len(b), nil
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// startAgent starts `fdswim agent` with the given extra flags and waits for
// it to print its addresses (and, with join, to have joined).
func startAgent(t *testing.T, id, bind string, extra ...string) *proc {
	t.Helper()
	return startAgentVia(t, nil, id, bind, extra...)
}

// startAgentVia is startAgent with the command run through prefix (for
// example "ip netns exec NS"); a later --http in extra overrides the
// loopback one. An agent that exits because its address is in use is
// started again, up to five times over about 3 s: a port another test's
// short-lived stream held (a member restarted on its old port) comes free.
// Tests that need no fixed port bind 127.0.0.1:0 and read proc.addr.
func startAgentVia(t *testing.T, prefix []string, id, bind string, extra ...string) *proc {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p, inUse := tryStartAgent(t, prefix, id, bind, extra...)
		if p != nil {
			return p
		}
		if !inUse || attempt == 5 {
			t.Fatalf("agent %s exited early (attempt %d; its output is above)", id, attempt)
		}
		time.Sleep(time.Duration(attempt) * 300 * time.Millisecond)
	}
}

// tryStartAgent starts the agent; nil and whether its bind was in use when
// it exits before it is ready (its output is logged).
func tryStartAgent(t *testing.T, prefix []string, id, bind string, extra ...string) (*proc, bool) {
	t.Helper()
	args := append([]string{"agent", "--id", id, "--bind", bind, "--http", "127.0.0.1:0",
		"--probe-interval", period, "--probe-timeout", probeTO, "--leave-timeout", "300ms"}, extra...)
	argv := append(append(append([]string(nil), prefix...), fdswimBinary(t)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	p := &proc{id: id, cmd: cmd, exited: make(chan struct{}), ready: make(chan struct{})}
	// Through a Writer (not StdoutPipe) so that Wait returns only after
	// the last line is read: an early exit's message is always there.
	cmd.Stdout, cmd.Stderr = p, p
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	ready := p.ready
	select {
	case <-ready:
		t.Cleanup(func() { p.signal(syscall.SIGKILL); <-p.exited })
		return p, false
	case <-p.exited:
		out := p.output()
		t.Logf("agent %s exited early:\n%s", id, out)
		return nil, strings.Contains(out, "address already in use")
	case <-time.After(20 * time.Second):
		p.signal(syscall.SIGKILL)
		<-p.exited
		t.Fatalf("agent %s did not start:\n%s", id, p.output())
	}
	return nil, false
}

func field(s, name string) string {
	for _, kv := range strings.Fields(s) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

type viewEntry struct {
	ID    string  `json:"id"`
	Addr  string  `json:"addr"`
	State string  `json:"state"`
	Inc   uint64  `json:"incarnation"`
	Level float64 `json:"suspicion_level"`
}

func (p *proc) view() (map[string]viewEntry, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + p.http + "/members")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var es []viewEntry
	if err := json.NewDecoder(resp.Body).Decode(&es); err != nil {
		return nil, err
	}
	m := map[string]viewEntry{}
	for _, e := range es {
		m[e.ID] = e
	}
	return m, nil
}

// waitAll waits until every proc's view satisfies ok, and returns how long
// that took.
func waitAll(t *testing.T, ps []*proc, within time.Duration, what string, ok func(map[string]viewEntry) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		all := true
		for _, p := range ps {
			v, err := p.view()
			if err != nil || !ok(v) {
				all = false
				break
			}
		}
		if all {
			return time.Since(start)
		}
		if time.Since(start) > within {
			for _, p := range ps {
				v, _ := p.view()
				t.Logf("%s sees %v", p.id, v)
			}
			t.Fatalf("%s: not reached within %v", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	// The agent binds its stream listener on TCP with the UDP port's
	// number, and the other agents' streams dial from ephemeral TCP ports
	// bound on 127.0.0.1: a port free on UDP alone was often taken on TCP.
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		c, err := net.ListenPacket("udp", addr)
		_ = l.Close()
		if err == nil {
			_ = c.Close()
			return addr
		}
	}
	t.Fatal("no port of 127.0.0.1 free on both TCP and UDP")
	return ""
}

func stateIs(id, state string) func(map[string]viewEntry) bool {
	return func(v map[string]viewEntry) bool { return v[id].State == state }
}

func TestAgentsPlain(t *testing.T)     { runGroup(t, loopback{t}, []string{"--plain"}) }
func TestAgentsEncrypted(t *testing.T) { runGroup(t, loopback{t}, []string{"--key", testKeyHex}) }

// hosts places agent i of a group: the UDP address it binds, extra flags
// (such as its --http address) and the command prefix that runs it there.
// A restarted agent gets the same place.
type hosts interface {
	place(i int) (bind string, extra, prefix []string)
}

// loopback: every agent on 127.0.0.1, each on a port the kernel picks when
// it binds (runGroup restarts a member on the port it got).
type loopback struct{ t *testing.T }

func (l loopback) place(int) (string, []string, []string) { return "127.0.0.1:0", nil, nil }

const testKeyHex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// runGroup: n agents converge to a full view; a SIGKILLed one is declared
// dead by all within killBound; restarted with the same ID it rejoins; a
// SIGTERMed one leaves.
func runGroup(t *testing.T, h hosts, sec []string) {
	var ps []*proc
	var binds []string
	var extras, prefixes [][]string
	// Each agent joins through all earlier ones: with a single seed, two
	// members joining at nearly the same time can miss each other in a
	// small group (the swim core has no anti-entropy; see the report).
	joinAll := func(ps []*proc) []string {
		var args []string
		for _, p := range ps {
			args = append(args, "--join", p.addr)
		}
		return args
	}
	for i := 0; i < nAgents; i++ {
		bind, extra, prefix := h.place(i)
		args := append(append(append([]string(nil), sec...), extra...), joinAll(ps)...)
		p := startAgentVia(t, prefix, fmt.Sprintf("n%d", i), bind, args...)
		if strings.HasSuffix(bind, ":0") {
			bind = p.addr // the restart takes the same address
		}
		binds, extras, prefixes = append(binds, bind), append(extras, extra), append(prefixes, prefix)
		ps = append(ps, p)
	}
	d := waitAll(t, ps, convergeMax, "full view", func(v map[string]viewEntry) bool {
		n := 0
		for _, e := range v {
			if e.State == "alive" {
				n++
			}
		}
		return n == nAgents
	})
	t.Logf("full view of %d after %v", nAgents, d)
	v0, err := ps[0].view()
	require.NoError(t, err)
	for i, b := range binds {
		assert.Equal(t, b, v0[fmt.Sprintf("n%d", i)].Addr, "member n%d is known at the address it bound", i)
	}

	victim := ps[nAgents-1]
	victim.signal(syscall.SIGKILL)
	<-victim.exited
	d = waitAll(t, ps[:nAgents-1], killBound, "killed member declared dead", stateIs(victim.id, "dead"))
	t.Logf("killed member declared dead by all after %v (bound %v)", d, killBound)

	last := nAgents - 1
	back := startAgentVia(t, prefixes[last], victim.id, binds[last],
		append(append(append([]string(nil), sec...), extras[last]...), joinAll(ps[:last])...)...)
	ps[nAgents-1] = back
	d = waitAll(t, ps, convergeMax, "restarted member rejoins", stateIs(victim.id, "alive"))
	t.Logf("restarted member alive again everywhere after %v", d)
	v, err := ps[0].view()
	require.NoError(t, err)
	assert.Greater(t, v[victim.id].Inc, uint64(0), "rejoined with a higher incarnation than the one declared dead")

	leaver := ps[1]
	leaver.signal(syscall.SIGTERM)
	select {
	case <-leaver.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not stop the agent")
	}
	assert.Equal(t, 0, leaver.cmd.ProcessState.ExitCode(), leaver.output())
	assert.Contains(t, leaver.output(), "stopped")
	rest := append([]*proc{ps[0]}, ps[2:]...)
	waitAll(t, rest, convergeMax, "leave spreads", stateIs(leaver.id, "left"))
	assert.Contains(t, ps[0].output(), "event kind=leave id="+leaver.id)
	assert.Contains(t, ps[0].output(), "event kind=dead id="+victim.id)
}

// TestWrongKeyNotAdmitted: a member with another key cannot join, is never
// seen by the group, and its packets are counted as authentication failures.
func TestWrongKeyNotAdmitted(t *testing.T) {
	a := startAgent(t, "a", "127.0.0.1:0", "--key", testKeyHex)
	b := startAgent(t, "b", "127.0.0.1:0", "--key", testKeyHex, "--join", a.addr)
	waitAll(t, []*proc{a, b}, convergeMax, "pair", func(v map[string]viewEntry) bool { return len(v) == 2 })

	wrong := "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
	for _, sec := range [][]string{{"--key", wrong}, {"--plain"}} {
		args := append([]string{"agent", "--id", "intruder", "--bind", "127.0.0.1:0", "--join", a.addr, "--join-timeout", "1s",
			"--probe-interval", period, "--probe-timeout", probeTO}, sec...)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, fdswimBinary(t), args...).CombinedOutput()
		cancel()
		require.Error(t, err, "%s", out)
		assert.Contains(t, string(out), "join", "%s", out)
		assert.Contains(t, string(out), "no member answered", "%s", out)
	}
	for _, p := range []*proc{a, b} {
		v, err := p.view()
		require.NoError(t, err)
		assert.NotContains(t, v, "intruder")
		assert.Len(t, v, 2)
	}
	assert.Greater(t, a.metric(t, "fdswim_auth_failures_total"), 0.0, "auth failures counted")
}

// metric reads the value of an unlabelled metric from the agent's
// /metrics.
func (p *proc) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + p.http + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var x float64
			_, err := fmt.Sscan(v, &x)
			require.NoError(t, err, "%s", line)
			return x
		}
	}
	require.Failf(t, "metric not served", "%s not in\n%s", name, body)
	return 0
}

// TestJoinTimeoutMessage: a join nobody answers ends with one line that says
// so and suggests the usual causes, not "join [a]: agent: join [a]:
// context deadline exceeded"; the causes named include the keys and
// packets that do not come from the advertised address.
func TestJoinTimeoutMessage(t *testing.T) {
	var out, errb strings.Builder
	// A UDP socket held open and never read: nobody answers there, and the
	// agent's own --bind 127.0.0.1:0 cannot be given the same port (a port
	// freed first could be, and the join then names this member's own
	// address instead).
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = silent.Close() })
	nobody := silent.LocalAddr().String()
	err = runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--join", nobody,
		"--join-timeout", "300ms", "--leave-timeout", "50ms"}, &out, &errb)
	require.Error(t, err)
	assert.Regexp(t, `^--join `+regexp.QuoteMeta(nobody)+`: no member answered within --join-timeout 300ms \(attempts: 1; is a member running there, with the same key, or --plain on both, and the same --label\? `+
		`Do its packets reach the members from 127\.0\.0\.1, the address it advertises\? A member answers only a join sent from that address: `+
		`behind NAT set --advertise to the public address, on a host with several addresses --bind the advertised one\)$`, err.Error())
}

// syncBuf is a strings.Builder safe for one writer and concurrent readers.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
