package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --label, --accept-plain and --send-plain refuse what agent.Start would,
// naming the flags.
func TestEnvelopeFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--key", testKeyHex, "--send-plain"}, "--send-plain needs --accept-plain"},
		{[]string{"--plain", "--accept-plain"}, "--accept-plain and --send-plain are stages of turning encryption on: they need --key or --key-file, not --plain"},
		{[]string{"--plain", "--label", strings.Repeat("x", 256)}, "--label is 256 bytes, at most 255"},
		{[]string{"--plain", "--label", "dc1\x1b[2J"}, `--label "dc1\x1b[2J": want printable UTF-8 text`},
		{[]string{"--plain", "--label", "dc\n1"}, `--label "dc\n1": want printable UTF-8 text`},
		{[]string{"--plain", "--label", "dc\xff"}, `--label "dc\xff": want printable UTF-8 text`},
		{[]string{"--plain", "--label", "dc\u202e1"}, `--label "dc\u202e1": want printable UTF-8 text`},
		{[]string{"--plain", "--label", "dc\u200b1"}, `--label "dc\u200b1": want printable UTF-8 text`},
		{[]string{"--plain", "--label", "dc\u20281"}, `--label "dc\u20281": want printable UTF-8 text`},
		{[]string{"--plain", "--id", ""}, "--id is empty: give a member ID, or leave --id out to use the advertised address"},
	}
	for _, c := range cases {
		var out, errb strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := runAgent(ctx, append([]string{"--bind", "127.0.0.1:0"}, c.args...), &out, &errb)
		cancel()
		if assert.Error(t, err, "%v", c.args) {
			assert.Contains(t, err.Error(), c.want, "%v", c.args)
		}
	}
}

// Each stage of turning encryption on reads the stage before it: a plain
// member and one with --accept-plain --send-plain, that one and one with
// --accept-plain alone, that one and one with the key alone each form a
// group of two.
func TestEncryptionStagesWithFlags(t *testing.T) {
	stages := [][]string{
		{"--plain"},
		{"--key", testKeyHex, "--accept-plain", "--send-plain"},
		{"--key", testKeyHex, "--accept-plain"},
		{"--key", testKeyHex},
	}
	for i := 0; i+1 < len(stages); i++ {
		a := startAgent(t, "a", "127.0.0.1:0", stages[i]...)
		b := startAgent(t, "b", "127.0.0.1:0", append(stages[i+1], "--join", a.addr)...)
		waitAll(t, []*proc{a, b}, convergeMax, strings.Join(stages[i+1], " "), func(v map[string]viewEntry) bool { return len(v) == 2 })
	}
}

// Members with one --label form a group; a member with another label is
// not admitted, and its failed join names --label.
func TestLabelFlag(t *testing.T) {
	a := startAgent(t, "a", "127.0.0.1:0", "--plain", "--label", "dc1")
	b := startAgent(t, "b", "127.0.0.1:0", "--plain", "--label", "dc1", "--join", a.addr)
	waitAll(t, []*proc{a, b}, convergeMax, "pair", func(v map[string]viewEntry) bool { return len(v) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, fdswimBinary(t), "agent", "--id", "c", "--bind", "127.0.0.1:0", "--plain", "--label", "dc2",
		"--join", a.addr, "--join-timeout", "1s", "--probe-interval", period, "--probe-timeout", probeTO).CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "the same --label?", "%s", out)
	v, err := a.view()
	require.NoError(t, err)
	assert.NotContains(t, v, "c")
}

// A label may hold letters of any script, marks, symbols and spaces; not
// control or format characters, nor line or paragraph separators.
func TestPrintableLabel(t *testing.T) {
	for _, s := range []string{"", "dc1", "zone Ö-1 · δ", "東京 dc", "a\u00a0b", "e\u0301"} {
		assert.True(t, printable(s), "%q", s)
	}
	for _, s := range []string{"a\tb", "a\x7fb", "a\u0085b", "a\u200bb", "a\u200eb", "a\u202eb", "a\u2028b", "a\u2029b", "a\ufeffb", "a\ue000b", "a\xffb"} {
		assert.False(t, printable(s), "%q", s)
	}
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
	hupSelf(t)
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
