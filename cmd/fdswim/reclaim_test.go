package main

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member killed and restarted on another port (a container or pod that
// comes back elsewhere) rejoins under its ID, and every member sees it
// alive at the new address: it is not refused with "join refused: ID "c"
// is already held by the member at <old address>" until the dead entry
// is reaped (15 min), and no leave on exit turns the crashed member from
// dead to left at the others. A live holder keeps its ID: a
// third node claiming it is still refused. In a signed group
// (--identity-file) the restart reclaims the ID with its identity kept.
// Restarted at once, before the others declare the old process dead, it
// is refused while the old one is still held alive, retries (the live
// holder may be its own crashed process) and rejoins once it is declared.
func TestAgentRestartOnNewPortReclaimsID(t *testing.T) {
	plain := func(string) []string { return []string{"--plain"} }
	for _, c := range []struct {
		name      string
		sec       func(id string) []string
		immediate bool // restart at once, before the old process is declared dead
	}{
		{"plain", plain, false},
		{"signed", func(id string) []string {
			return []string{"--key", testKeyHex, "--identity-file", filepath.Join(t.TempDir(), id+".key")}
		}, false},
		{"immediate", plain, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name != "plain" && testing.Short() {
				t.Skip("the plain case covers the mechanism in -short; the signed rules are tested in swim")
			}
			idc := c.sec("c") // one identity file for both lives of c
			a := startAgent(t, "a", "127.0.0.1:0", c.sec("a")...)
			b := startAgent(t, "b", "127.0.0.1:0", append(c.sec("b"), "--join", a.addr)...)
			old := startAgent(t, "c", "127.0.0.1:0", append(idc, "--join", a.addr)...)
			ab := []*proc{a, b}
			waitAll(t, ab, convergeMax, "c joins", stateIs("c", "alive"))
			old.signal(syscall.SIGKILL)
			<-old.exited
			if !c.immediate {
				waitAll(t, ab, killBound, "c declared dead", stateIs("c", "dead"))
			}

			bind := freePort(t)
			for bind == old.addr {
				bind = freePort(t)
			}
			back := startAgent(t, "c", bind, append(idc, "--join", b.addr)...)
			d := waitAll(t, []*proc{a, b, back}, killBound+convergeMax, "c alive at its new address everywhere", func(v map[string]viewEntry) bool {
				return v["c"].State == "alive" && v["c"].Addr == back.addr && v["a"].State == "alive" && v["b"].State == "alive"
			})
			t.Logf("restarted on a new port, alive at it everywhere after %v", d)
			if c.immediate {
				assert.Contains(t, back.output(), "retrying until it is declared dead", "refused while the old process was held alive")
			} else {
				assert.NotContains(t, back.output(), "refused")
			}
			assert.Contains(t, a.output(), "event kind=join id=c addr="+back.addr)
			assert.NotContains(t, a.output(), "event kind=leave id=c")

			// A live holder is never displaced.
			dup := exec.Command(fdswimBinary(t), append([]string{"agent", "--id", "c", "--bind", freePort(t),
				"--probe-interval", period, "--probe-timeout", probeTO, "--join-timeout", "3s", "--join", a.addr},
				c.sec("dup")...)...)
			out, err := dup.CombinedOutput()
			require.Error(t, err, "%s", out)
			assert.Contains(t, string(out), `join refused: ID "c" is held by the live member at `+back.addr+` for all of --join-timeout 3s`)
			time.Sleep(500 * time.Millisecond)
			v, err := a.view()
			require.NoError(t, err)
			assert.Equal(t, back.addr, v["c"].Addr)
			assert.Equal(t, "alive", v["c"].State)
		})
	}
}

// --dead-reclaim-time maps to swim.Config.DeadReclaimTime (0 given as
// new(0), not nil) and is refused outside 0 to 15m with the range named.
func TestAgentDeadReclaimTimeFlag(t *testing.T) {
	for _, d := range []time.Duration{0, 30 * time.Second} {
		f := agentFlags{logLevel: "warn", mode: "detector", plain: true, gossipFanout: 2, deadReclaim: d}
		cfg, err := f.config(io.Discard)
		require.NoError(t, err)
		require.NotNil(t, cfg.Protocol.DeadReclaimTime)
		assert.Equal(t, d, *cfg.Protocol.DeadReclaimTime)
	}
	for _, v := range []string{"-1s", "16m", "30"} {
		var out, errb strings.Builder
		err := runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--dead-reclaim-time", v}, &out, &errb)
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), `--dead-reclaim-time`, v)
		assert.Contains(t, err.Error(), "want a duration from 0 to 15m", v)
	}
	var out, errb strings.Builder
	require.NoError(t, runAgent(context.Background(), []string{"--help"}, &out, &errb))
	assert.Contains(t, errb.String(), "--dead-reclaim-time")
	assert.Contains(t, errb.String(), "from 0 (as soon as it is declared dead) to 15m")
}
