package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestAgentsNetnsUDPFirewalled: four agents on four hosts (network
// namespaces, as TestAgentsNetns), encrypted; a kernel firewall rule
// (nftables) in the fourth host's namespace drops every UDP datagram to its
// port while TCP stays open. Over 30 probe periods no other agent declares
// it dead, and they print the stream-only warning event about it: their
// TCP fallback pings reach it (docs/algorithms.md, “SWIM: stream fallback
// probe”). Without -short it also runs the group with --no-stream, where
// the firewalled member is declared dead (the control). It needs root,
// iproute2 and nftables' nft, and skips otherwise.
func TestAgentsNetnsUDPFirewalled(t *testing.T) {
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nftables' nft is not installed; skipping the firewalled-UDP agent test")
	}
	dead, warned := firewalledGroup(t, nil)
	assert.Zero(t, dead, "agents declared the firewalled member dead")
	assert.Positive(t, warned, "no agent warned that only TCP reaches the firewalled member")
	if testing.Short() {
		return
	}
	dead, warned = firewalledGroup(t, []string{"--no-stream"})
	assert.Positive(t, dead, "--no-stream: the firewalled member should be declared dead")
	assert.Zero(t, warned)
}

// firewalledGroup runs the group with extra flags and returns how many of
// the three others declared the firewalled member dead and how many warned
// that only TCP reaches it, over 30 probe periods after the rule went in.
func firewalledGroup(t *testing.T, flags []string) (dead, warned int) {
	const n = 4
	h := newNetnsHosts(t, n)
	var ps []*proc
	for i := range n {
		bind, extra, prefix := h.place(i)
		args := append(append([]string{"--key", testKeyHex}, flags...), extra...)
		for _, p := range ps {
			args = append(args, "--join", p.addr)
		}
		ps = append(ps, startAgentVia(t, prefix, fmt.Sprintf("n%d", i), bind, args...))
	}
	waitAll(t, ps, convergeMax, "full view", func(v map[string]viewEntry) bool {
		alive := 0
		for _, e := range v {
			if e.State == "alive" {
				alive++
			}
		}
		return alive == n
	})
	nft := func(args ...string) error {
		out, err := exec.Command("ip", append([]string{"netns", "exec", h.ns[n-1], "nft"}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("nft %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	for _, cmd := range [][]string{
		{"add", "table", "inet", "fdk"},
		{"add", "chain", "inet", "fdk", "in", "{ type filter hook input priority 0 ; }"},
		{"add", "rule", "inet", "fdk", "in", "udp", "dport", "7946", "drop"},
	} {
		if err := nft(cmd...); err != nil {
			t.Skipf("cannot add the firewall rule here (%v); skipping", err)
		}
	}
	victim := ps[n-1].id
	time.Sleep(30 * 100 * time.Millisecond)
	for _, p := range ps[:n-1] {
		if strings.Contains(p.output(), "event kind=stream-only id="+victim) {
			warned++
		}
		if strings.Contains(p.output(), "event kind=dead id="+victim) {
			dead++
		}
	}
	t.Logf("%v: %d of %d agents declared %s dead, %d warned that only TCP reaches it", flags, dead, n-1, victim, warned)
	return dead, warned
}
