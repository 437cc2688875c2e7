package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAgentsNetns is runGroup with every agent on its own host: a network
// namespace of its own (ip netns, iproute2), each joined by a veth pair to
// one bridge, with its own address 10.77.S.i+1/24 (S from the test's pid,
// so that two runs do not collide) and the same UDP port 7946 on every
// host. The test process reaches the agents' HTTP endpoints from the
// bridge's address .254. Encryption is on.
//
// It needs root and iproute2; it skips with the reason when the namespaces
// and the bridge cannot be made (not root, no ip, a sandbox without
// CAP_NET_ADMIN). Everything it makes is removed at the end.
func TestAgentsNetns(t *testing.T) {
	h := newNetnsHosts(t, nAgents)
	runGroup(t, h, []string{"--key", testKeyHex}) // it checks that views carry each host's own address
}

var netnsRuns atomic.Uint32

type netnsHosts struct {
	ns     []string
	subnet string // "10.77.S."
}

func (h *netnsHosts) place(i int) (string, []string, []string) {
	addr := fmt.Sprintf("%s%d", h.subnet, i+1)
	return addr + ":7946", []string{"--http", addr + ":8080"}, []string{"ip", "netns", "exec", h.ns[i]}
}

func newNetnsHosts(t *testing.T, n int) *netnsHosts {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root; skipping the multi-host agent test")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip is not installed; skipping the multi-host agent test")
	}
	// Names and subnet unique per process and per call (-count runs the
	// test again in one process while the kernel may still be removing the
	// last run's links).
	pid, run := os.Getpid(), netnsRuns.Add(1)
	tag := fmt.Sprintf("fdk%d%c", pid%100000, 'a'+rune(run%26))
	h := &netnsHosts{subnet: fmt.Sprintf("10.77.%d.", (pid+int(run))%250+1)}
	bridge := tag + "br"
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	// Building the hosts needs capabilities a sandbox may lack: any failure
	// there is a skip with its reason; only the agents' behaviour fails.
	first := tag + "n0"
	if err := ip("netns", "add", first); err != nil {
		t.Skipf("cannot make a network namespace here (%v); skipping the multi-host agent test", err)
	}
	h.ns = append(h.ns, first)
	t.Cleanup(func() {
		for i, ns := range h.ns {
			_ = ip("link", "del", fmt.Sprintf("%sv%d", tag, i))
			_ = ip("netns", "del", ns)
		}
		_ = ip("link", "del", bridge)
	})
	if err := ip("link", "add", bridge, "type", "bridge"); err != nil {
		t.Skipf("cannot make a bridge here (%v); skipping the multi-host agent test", err)
	}
	must := func(args ...string) {
		t.Helper()
		if err := ip(args...); err != nil {
			t.Skipf("cannot build the hosts here (%v); skipping the multi-host agent test", err)
		}
	}
	must("addr", "add", h.subnet+"254/24", "dev", bridge)
	must("link", "set", bridge, "up")
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("%sn%d", tag, i)
		if i > 0 {
			must("netns", "add", ns)
			h.ns = append(h.ns, ns)
		}
		host := fmt.Sprintf("%sv%d", tag, i)
		must("link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns)
		must("link", "set", host, "master", bridge)
		must("link", "set", host, "up")
		must("-n", ns, "addr", "add", fmt.Sprintf("%s%d/24", h.subnet, i+1), "dev", "eth0")
		must("-n", ns, "link", "set", "eth0", "up")
		must("-n", ns, "link", "set", "lo", "up")
	}
	return h
}
