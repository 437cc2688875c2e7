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

	"github.com/fdkit/fdkit/swim"
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

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, fmt.Sprintf("k%d", len(s)))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
		return p
	}
	ks, err := readKeyFile(write("# rotation in progress\n" + testKeyHex + "\n\n  00112233445566778899aabbccddeeff  \n"))
	require.NoError(t, err)
	require.Len(t, ks, 2)
	assert.Len(t, ks[0], 32)
	assert.Len(t, ks[1], 16)
	_, err = readKeyFile(write("# nothing\n"))
	assert.ErrorContains(t, err, "no key")
	_, err = readKeyFile(write("00\nzz\n"))
	assert.ErrorContains(t, err, "line 1")
	_, err = readKeyFile(filepath.Join(dir, "missing"))
	assert.Error(t, err)
}

func TestAgentFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{},                                 // no key, no --plain
		{"--plain", "--key", testKeyHex},   // both
		{"--key", "abc"},                   // bad key
		{"--plain", "--mode", "gossip"},    // bad mode
		{"--plain", "--log-level", "lots"}, // bad level
		{"--plain", "extra"},               // stray argument
		{"--plain", "--bind", "nonsense"},  // bad bind
		{"--key-file", "/nonexistent/keys"},
		{"--plain", "--no-such-flag"},
		{"--plain", "--bind", "127.0.0.1:0", "--join-timeout", "-1s"}, // ran with no join deadline
		{"--plain", "--bind", "127.0.0.1:0", "--http", "nonsense"},
		{"--plain", "--bind", "127.0.0.1:0", "--advertise", "0.0.0.0:7946"},
		{"--plain", "--bind", "127.0.0.1:0", "--gossip-fanout", "-1"},
		{"--plain", "--bind", "127.0.0.1:0", "--join", "localhost"}, // no port
		{"--plain", "--bind", "127.0.0.1:0", "--push-pull", "-1s"},
		{"--plain", "--bind", "127.0.0.1:0", "--push-pull", "30"}, // no unit
	} {
		var out, errb strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := runAgent(ctx, args, &out, &errb)
		cancel()
		assert.Error(t, err, "%v", args)
		// The member never started: a flag error prints no agent line.
		assert.NotContains(t, out.String(), "agent id=", "%v", args)
	}
	var out, errb strings.Builder
	assert.NoError(t, runAgent(context.Background(), []string{"--help"}, &out, &errb))
	assert.Contains(t, errb.String(), "usage: fdswim agent")
	// --advertise is named as a flag (it said "set Advertise", the Go field).
	for _, adv := range []string{"0.0.0.0:7946", "127.0.0.2:0", "[::]:7946"} {
		err := runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--advertise", adv}, &out, &errb)
		assert.EqualError(t, err, "--advertise "+adv+": want the ip:port the other members send to, not a wildcard address or port 0 (those bind; --bind takes them)")
	}
}

// --gossip-fanout maps to swim.Config.GossipFanout: its default is swim's,
// and 0 turns eager dissemination off (swim.Config says it with new(0)).
func TestAgentGossipFanoutFlag(t *testing.T) {
	for _, c := range []struct{ flag, want int }{{swim.DefaultGossipFanout, swim.DefaultGossipFanout}, {0, 0}, {5, 5}} {
		f := agentFlags{logLevel: "warn", mode: "detector", plain: true, gossipFanout: c.flag}
		cfg, err := f.config(io.Discard)
		require.NoError(t, err)
		require.NotNil(t, cfg.Protocol.GossipFanout)
		assert.Equal(t, c.want, *cfg.Protocol.GossipFanout, "--gossip-fanout %d", c.flag)
	}
}

// --gossip-interval maps to swim.Config.GossipInterval, and 0 turns the
// drain loop off (swim.Config says it with new(0), not nil).
func TestAgentGossipIntervalFlag(t *testing.T) {
	for _, d := range []time.Duration{swim.DefaultGossipInterval, 0, 50 * time.Millisecond} {
		f := agentFlags{logLevel: "warn", mode: "detector", plain: true, gossipFanout: 2, gossipInterval: d}
		cfg, err := f.config(io.Discard)
		require.NoError(t, err)
		require.NotNil(t, cfg.Protocol.GossipInterval)
		assert.Equal(t, d, *cfg.Protocol.GossipInterval, "--gossip-interval %v", d)
	}
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

// TestSIGHUPWithoutKeyFile: an agent with no key file to reload survives
// SIGHUP: the signal's default action would kill it without a leave (here
// the whole test binary).
func TestSIGHUPWithoutKeyFile(t *testing.T) {
	var out, errb syncBuf
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runAgent(ctx, []string{"--key", testKeyHex, "--bind", "127.0.0.1:0", "--leave-timeout", "50ms"}, &out, &errb)
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "agent id=") }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(errb.String(), "SIGHUP ignored") }, 5*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, out.String(), "stopped")
}

// TestKeyRotationBySIGHUP rotates the key of a running pair by editing their
// key files and sending SIGHUP, then checks that the old key is refused.
func TestKeyRotationBySIGHUP(t *testing.T) {
	newHex := "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "a.keys"), filepath.Join(dir, "b.keys")}
	write := func(content string) {
		for _, f := range files {
			require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
		}
	}
	write(testKeyHex + "\n")
	a := startAgent(t, "a", "127.0.0.1:0", "--key-file", files[0])
	b := startAgent(t, "b", "127.0.0.1:0", "--key-file", files[1], "--join", a.addr)
	pair := []*proc{a, b}
	both := func(v map[string]viewEntry) bool { return v["a"].State == "alive" && v["b"].State == "alive" }
	waitAll(t, pair, convergeMax, "pair", both)
	reloads := 0
	step := func(content string) {
		write(content)
		reloads++
		for _, p := range pair {
			p.signal(syscall.SIGHUP)
		}
		require.Eventually(t, func() bool {
			for _, p := range pair {
				if strings.Count(p.output(), "keys reloaded") < reloads {
					return false
				}
			}
			return true
		}, 5*time.Second, 20*time.Millisecond)
		time.Sleep(300 * time.Millisecond)
		waitAll(t, pair, convergeMax, "pair still together", both)
	}
	step(testKeyHex + "\n" + newHex + "\n")
	step(newHex + "\n" + testKeyHex + "\n")
	step(newHex + "\n")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, fdswimBinary(t), "agent", "--id", "old", "--bind", "127.0.0.1:0", "--key", testKeyHex,
		"--join", a.addr, "--join-timeout", "1s", "--probe-interval", period, "--probe-timeout", probeTO).CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "no member answered")
	n := startAgent(t, "new", "127.0.0.1:0", "--key", newHex, "--join", a.addr)
	require.Eventually(t, func() bool { return strings.Contains(n.output(), "joined via=") }, 5*time.Second, 20*time.Millisecond, n.output())
}

// --suspicion takes a detector in the textual form; --preset starts from
// memberlist's documented settings, which explicit flags override.
func TestAgentSuspicionAndPreset(t *testing.T) {
	f := agentFlags{logLevel: "warn", mode: "detector", plain: true, gossipFanout: 2,
		suspicion: "phi-akka(threshold=10, pause=0)"}
	cfg, err := f.config(io.Discard)
	require.NoError(t, err)
	require.NotNil(t, cfg.Protocol.PeerDetector)
	d, err := cfg.Protocol.PeerDetector()
	require.NoError(t, err)
	assert.Equal(t, 10.0, d.(interface{ Threshold() float64 }).Threshold())
	f.suspicion = "phi-akka(pause=3)"
	_, err = f.config(io.Discard)
	assert.ErrorContains(t, err, `--suspicion: spec "phi-akka(pause=3)": phi-akka: pause: "3" is not a duration`)

	p, ok := swimPreset("memberlist-lan")
	require.True(t, ok)
	f = agentFlags{logLevel: "warn", mode: "lifeguard", plain: true, gossipFanout: 2, preset: &p,
		probeInterval: p.ProbeInterval, probeTimeout: p.ProbeTimeout}
	cfg, err = f.config(io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 4, cfg.Protocol.SuspicionMult)
	assert.Equal(t, 3, *cfg.Protocol.IndirectChecks)
	assert.Equal(t, swim.ModeLifeguard, cfg.Protocol.Mode)
	// --leave-timeout 0 is zero, not agent's 2 s default.
	require.NotNil(t, cfg.LeaveTimeout)
	assert.Equal(t, time.Duration(0), *cfg.LeaveTimeout)
}

// The stream path listens on --bind's port on TCP by default, on
// --stream-bind when given, and not at all with --no-stream.
func TestAgentStreamFlags(t *testing.T) {
	dials := func(addr string) bool {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}
	def := startAgent(t, "def", "127.0.0.1:0", "--plain")
	assert.True(t, dials(def.addr), "default: TCP on the UDP port %s", def.addr)

	off := startAgent(t, "off", "127.0.0.1:0", "--plain", "--no-stream")
	assert.False(t, dials(off.addr), "--no-stream: nothing listens on TCP %s", off.addr)

	// --stream-bind needs a port named in advance: one taken between the
	// pick and the bind is picked again.
	var sb string
	var moved *proc
	for attempt := 1; moved == nil; attempt++ {
		sb = freePort(t)
		var inUse bool
		moved, inUse = tryStartAgent(t, nil, "moved", "127.0.0.1:0", "--plain", "--stream-bind", sb)
		require.True(t, moved != nil || (inUse && attempt < 5), "agent moved did not start (its output is above)")
	}
	assert.True(t, dials(sb), "--stream-bind %s", sb)
	assert.False(t, dials(moved.addr), "not on the UDP port too")
}
