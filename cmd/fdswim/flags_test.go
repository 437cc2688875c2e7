package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sim flags refuse invalid values with the flag's name instead of running
// with a default: --trials -1 ran 30 trials, --alpha -3 reported α = 5.
func TestSimFlagsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--trials", "-1"}, `"--trials" flag: want a count from 1 to 100000`},
		{[]string{"--trials", "0"}, `"--trials" flag`},
		{[]string{"--trials", "100000000"}, `"--trials" flag`},
		{[]string{"--alpha", "-3"}, `"--alpha" flag: want a multiplier from 1 to 1000`},
		{[]string{"--alpha", "0"}, `"--alpha" flag`},
		{[]string{"--beta", "-1"}, `"--beta" flag`},
		{[]string{"--pause", "0"}, `"--pause" flag: want a positive duration`},
		{[]string{"--pause", "-6s"}, `"--pause" flag`},
		{[]string{"--duration", "-1m"}, `"--duration" flag`},
		{[]string{"--duration", "1000h"}, `"--duration" flag: want a positive duration up to 24h0m0s`},
		{[]string{"--every", "0"}, `"--every" flag`},
		{[]string{"--pause", "6s", "--every", "5s"}, "--every 5s: must be longer than the pause D = 6s"},
		{[]string{"--every", "10s"}, "--every 10s: must be longer than the pause D = 12s"},
		{[]string{"--sizes", "1"}, "--sizes 1: each group size must be from 2 to 10000"},
		{[]string{"--sizes", "8,100000000"}, "--sizes 100000000: each group size must be from 2 to 10000"},
		{[]string{"--sizes", "8,16,8"}, "--sizes 8: given twice (each size is run once)"},
		{[]string{"--sizes", "abc"}, `invalid argument "abc" for "--sizes" flag: want comma-separated group sizes, each an integer from 2 to 10000, got "abc"`},
		{[]string{"--sizes", "8,,16"}, `"--sizes" flag: want comma-separated group sizes, each an integer from 2 to 10000, got ""`},
		{[]string{"--sizes", "99999999999999999999"}, `"--sizes" flag: want comma-separated group sizes`},
		{[]string{"--counts", "x"}, `"--counts" flag: want comma-separated numbers of paused members, each an integer from 0 to 128, got "x"`},
		{[]string{"--counts", "-1"}, "--counts -1: each count must be from 0 to 128"},
		{[]string{"--counts", "200"}, "--counts 200"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		args := append([]string{"sim", "--quick"}, c.args...)
		code := run(context.Background(), append(args, "lifeguard"), &out, &errb)
		assert.Equal(t, 1, code, "%v", c.args)
		assert.Contains(t, errb.String(), c.want, "%v", c.args)
		assert.NotContains(t, out.String(), "Lifeguard", "%v: nothing ran", c.args)
	}
}

// Invalid agent flag values are refused, not taken as defaults (0 →
// swim's or wire's default).
func TestAgentFlagsRefuseInvalidValues(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--probe-interval", "0"}, `"--probe-interval" flag: want a positive duration`},
		{[]string{"--probe-timeout", "0"}, `"--probe-timeout" flag`},
		{[]string{"--max-packet-size", "0"}, `"--max-packet-size" flag: want a size in bytes from 128 to 65507`},
		{[]string{"--max-packet-size", "100000"}, `"--max-packet-size" flag`},
		{[]string{"--gossip-fanout", "-1"}, `"--gossip-fanout" flag: want a count from 0 (off) to 1024`},
		{[]string{"--gossip-interval", "-1s"}, `"--gossip-interval" flag: want a duration from 0 (off) to 1m`},
		{[]string{"--gossip-interval", "2m"}, `"--gossip-interval" flag`},
		{[]string{"--leave-timeout", "-1s"}, `"--leave-timeout" flag`},
		{[]string{"--join-timeout", "-1s"}, `"--join-timeout" flag`},
		{[]string{"--stream-timeout", "0"}, `"--stream-timeout" flag: want a duration from 1ms to 1h`},
		{[]string{"--max-stream-conns", "0"}, `"--max-stream-conns" flag: want a count from 1 to 65536`},
		{[]string{"--no-stream", "--stream-bind", "127.0.0.1:0"}, "--stream-bind names a TCP listener but --no-stream"},
		{[]string{"--stream-bind", "nonsense"}, `--stream-bind "nonsense": want ip:port`},
		// Errors name the flag, not the agent.Config or swim.Config field.
		{[]string{"--bind", "nonsense"}, `--bind "nonsense": want ip:port`},
		{[]string{"--advertise", "host"}, `--advertise "host": want ip:port`},
		{[]string{"--probe-timeout", "5s"}, "--probe-timeout 5s exceeds the default --probe-interval 1s"},
		// An empty value (an unset shell variable) is not the flag's absence.
		{[]string{"--join", ""}, "--join: empty value"},
		{[]string{"--identity-file", ""}, "--identity-file: empty value"},
		{[]string{"--key-file", ""}, "--key-file: empty value"},
		{[]string{"--meta-file", ""}, "--meta-file: empty value"},
		// --suspicion sets the detector mode's per-peer detector: in the
		// other modes, given or taken from --preset, it would be ignored.
		{[]string{"--mode", "swim", "--suspicion", "chen"}, "--suspicion chooses the per-peer detector of --mode detector; --mode swim has none"},
		{[]string{"--preset", "memberlist-lan", "--suspicion", "chen"}, "--mode lifeguard (set by --preset memberlist-lan) has none"},
	}
	for _, c := range cases {
		var out, errb strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := runAgent(ctx, append([]string{"--plain", "--bind", "127.0.0.1:0"}, c.args...), &out, &errb)
		cancel()
		if assert.Error(t, err, "%v", c.args) {
			assert.Contains(t, err.Error(), c.want, "%v", c.args)
		}
		assert.NotContains(t, out.String(), "agent id=", "%v", c.args)
	}
}

// A simulation stopped by SIGINT or SIGTERM (the cause main gives the
// context) says so and exits 130 or 143, as shells expect; "context
// canceled" and status 1 remain for a cancellation without a signal.
func TestSimSignalExitCode(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		msg  string
	}{{syscall.SIGINT, 130, "fdswim sim: interrupted by SIGINT: stopped"}, {syscall.SIGTERM, 143, "fdswim sim: interrupted by SIGTERM: stopped"}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(50*time.Millisecond, func() { cancel(signalCause{c.sig}) })
		var out, errb bytes.Buffer
		code := run(ctx, []string{"sim", "--quick", "lifeguard"}, &out, &errb)
		assert.Equal(t, c.code, code)
		assert.Equal(t, c.msg+"\n", errb.String())
	}
}

// --no-stream and --no-stream-ping reach the agent's configuration.
func TestAgentStreamSwitchFlags(t *testing.T) {
	f := agentFlags{logLevel: "warn", mode: "detector", plain: true, noStreamPing: true, streamTimeout: time.Second, maxStreamConns: 8}
	cfg, err := f.config(io.Discard)
	assert.NoError(t, err)
	assert.True(t, cfg.DisableStreamProbes)
	assert.False(t, cfg.DisableStream)
	assert.Equal(t, time.Second, cfg.StreamTimeout)
	assert.Equal(t, 8, cfg.MaxStreamConns)
	f = agentFlags{logLevel: "warn", mode: "detector", plain: true, noStream: true}
	cfg, err = f.config(io.Discard)
	assert.NoError(t, err)
	assert.True(t, cfg.DisableStream)
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
	// An --id too long for one join packet names the flags, not Config.ID.
	err := runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--id", strings.Repeat("a", 255), "--max-packet-size", "400"}, &out, &errb)
	assert.ErrorContains(t, err, "--id, --advertise and --meta (or --meta-file) too large for --max-packet-size 400")
	assert.ErrorContains(t, err, "ID of 255 bytes")
	// One over 255 bytes says so (TestAgentErrorsNameFlags).
	err = runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--id", strings.Repeat("a", 5000)}, &out, &errb)
	assert.ErrorContains(t, err, `--id "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"… (5000 bytes): longer than 255 bytes`)
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
